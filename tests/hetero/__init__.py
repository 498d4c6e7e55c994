"""Tests of the HETERO device and its partitioner."""
