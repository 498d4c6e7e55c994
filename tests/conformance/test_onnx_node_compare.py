"""The node tests' comparison: dtype, then shape, then values (allclose rtol=1e-3, atol=1e-5 with NaNs
equal for floats, exact for the rest), on outputs written by hand."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hetero_sdk.conformance.onnx_node import compare

RTOL, ATOL = 1e-3, 1e-5  # the spec's (onnx.md: external conformance), written out independently


def test_equal_outputs_match() -> None:
    outputs = [np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, 2], np.int64), np.array(True)]
    assert compare([o.copy() for o in outputs], outputs) is None


def test_another_dtype_fails_even_with_equal_values() -> None:
    want = np.array([1.0, 2.0], np.float32)
    assert compare([want.astype(np.float64)], [want]) == "output 0: dtype float64, expected float32"


def test_another_shape_fails_even_with_equal_values() -> None:
    want = np.zeros((2, 3), np.float32)
    assert compare([np.zeros((3, 2), np.float32)], [want]) == "output 0: shape (3, 2), expected (2, 3)"


def test_a_scalar_is_not_a_one_element_vector() -> None:
    assert "shape" in (compare([np.array([1.0], np.float32)], [np.array(1.0, np.float32)]) or "")


def test_another_number_of_outputs_fails() -> None:
    want = [np.zeros(2, np.float32), np.zeros(2, np.float32)]
    assert compare(want[:1], want) == "1 outputs, expected 2"


def test_nans_in_the_same_places_are_equal_and_elsewhere_differ() -> None:
    want = np.array([1.0, np.nan, 3.0], np.float32)
    assert compare([want.copy()], [want]) is None
    assert "values differ" in (compare([np.array([1.0, 2.0, 3.0], np.float32)], [want]) or "")
    assert "values differ" in (compare([np.array([np.nan, np.nan, 3.0], np.float32)], [want]) or "")


def test_bfloat16_compares_as_floats_with_nans_equal() -> None:
    want = np.array([0.5, np.nan, np.inf], np.float32).astype(ml_dtypes.bfloat16)
    assert compare([want.copy()], [want]) is None
    got = np.array([0.75, np.nan, np.inf], np.float32).astype(ml_dtypes.bfloat16)
    assert "values differ" in (compare([got], [want]) or "")


def test_integers_and_booleans_are_exact() -> None:
    assert "values differ" in (compare([np.array([1, 3], np.int32)], [np.array([1, 2], np.int32)]) or "")
    assert "values differ" in (compare([np.array([True, True])], [np.array([True, False])]) or "")


def test_strings_compare_exactly() -> None:
    want = np.array(["a", "b"], dtype=object)
    assert compare([want.copy()], [want]) is None
    assert "values differ" in (compare([np.array(["a", "c"], dtype=object)], [want]) or "")


@pytest.mark.parametrize("expected", [[np.zeros(1, np.float32)], None])
def test_a_sequence_or_optional_expected_output_never_matches(expected: object) -> None:
    assert "is expected (sequence or optional)" in (compare([np.zeros(1, np.float32)], [expected]) or "")


@given(
    value=st.floats(-1e4, 1e4, allow_nan=False),
    fraction=st.floats(0.0, 0.9),
    sign=st.sampled_from([-1.0, 1.0]),
)
def test_a_difference_within_the_tolerance_passes(value: float, fraction: float, sign: float) -> None:
    want = np.array([value], np.float64)
    got = want + sign * fraction * (ATOL + RTOL * abs(value))
    assert compare([got], [want]) is None


@given(value=st.floats(-1e4, 1e4, allow_nan=False), factor=st.floats(1.1, 100.0), sign=st.sampled_from([-1.0, 1.0]))
def test_a_difference_beyond_the_tolerance_fails(value: float, factor: float, sign: float) -> None:
    want = np.array([value], np.float64)
    got = want + sign * factor * (ATOL + RTOL * abs(value))
    problem = compare([got], [want]) or ""
    assert problem.startswith("output 0: values differ (max abs diff")


def test_the_absolute_tolerance_rules_near_zero() -> None:
    want = np.zeros(3, np.float32)
    assert compare([np.full(3, 0.9e-5, np.float32)], [want]) is None
    assert compare([np.full(3, 2e-5, np.float32)], [want]) is not None
