"""The node-test runner's comparison: bfloat16 outputs compare as floats (NaNs equal), as the other
float types do, not bit for bit through ``array_equal`` where NaN never equals NaN."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from bench_modules import load_bench_module

node_tests = load_bench_module("onnx_node_tests")


def test_bfloat16_outputs_with_nans_in_the_same_places_match() -> None:
    values = np.array([0.5, np.nan, np.inf, -2.0], np.float32).astype(ml_dtypes.bfloat16)
    assert node_tests.compare([values.copy()], [values]) is None


def test_bfloat16_outputs_that_differ_are_reported() -> None:
    want = np.array([0.5, np.nan], np.float32).astype(ml_dtypes.bfloat16)
    got = np.array([0.75, np.nan], np.float32).astype(ml_dtypes.bfloat16)
    assert "values differ" in (node_tests.compare([got], [want]) or "")
