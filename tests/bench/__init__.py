"""Tests of the benchmarks' models and timing helpers."""
