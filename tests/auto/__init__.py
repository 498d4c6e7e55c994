"""Tests of the AUTO device: priorities, selection, the startup fallback, export and import."""
