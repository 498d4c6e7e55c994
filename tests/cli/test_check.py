"""The results check: exact for integers, within tolerance for floats, shapes and types must match."""

from __future__ import annotations

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.cli.check import check_results


def _model() -> hs.Model:
    """``doubled = 2 * x`` (f32) and ``count = x > 0`` converted to i64, for x [2, 3]."""
    x = opset.parameter([2, 3], hs.Type.f32, name="x")
    doubled = opset.multiply(x, np.float32(2), name="doubled")
    positive = opset.convert(opset.greater(x, np.float32(0), name="gt"), hs.Type.i64, name="positive")
    return hs.Model([doubled, positive], [x], "check_me")


X = np.array([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]], np.float32)
DOUBLED = 2 * X
POSITIVE = np.array([[1, 0, 1], [1, 0, 0]], np.int64)


def test_exact_outputs_pass() -> None:
    result = check_results(_model(), {"x": X}, [DOUBLED, POSITIVE], rtol=1e-4, atol=1e-5)
    assert result.status == "PASS" and result.ok
    assert [o.max_abs_diff for o in result.outputs] == [0.0, 0.0]


def test_float_error_within_tolerance_passes_and_beyond_it_fails() -> None:
    close = DOUBLED + np.float32(5e-6)
    assert check_results(_model(), {"x": X}, [close, POSITIVE], rtol=0, atol=1e-5).status == "PASS"
    far = DOUBLED.copy()
    far[1, 2] += np.float32(0.25)
    result = check_results(_model(), {"x": X}, [far, POSITIVE], rtol=1e-4, atol=1e-5)
    assert result.status == "FAIL" and not result.ok
    assert result.outputs[0].max_abs_diff == pytest.approx(0.25)
    assert result.summary() == "doubled: 1 element(s) off, max |diff| 0.25"


def test_one_integer_off_by_one_fails_whatever_the_tolerance() -> None:
    wrong = POSITIVE.copy()
    wrong[0, 1] = 1
    result = check_results(_model(), {"x": X}, [DOUBLED, wrong], rtol=1.0, atol=1.0)
    assert result.status == "FAIL"
    assert (result.outputs[1].ok, result.outputs[1].detail) == (False, "1 element(s) differ")


def test_shape_and_element_type_must_match() -> None:
    result = check_results(_model(), {"x": X}, [DOUBLED[:1], POSITIVE.astype(np.int32)], rtol=1e-4, atol=1e-5)
    assert [o.detail for o in result.outputs] == ["shape [1, 3], expected [2, 3]", "element type int32, expected int64"]


def test_nan_matches_only_nan() -> None:
    x = np.array([[np.nan, 1, 2], [3, 4, 5]], np.float32)
    positive = (x > 0).astype(np.int64)
    same = check_results(_model(), {"x": x}, [2 * x, positive], rtol=1e-4, atol=1e-5)
    assert same.status == "PASS"
    replaced = np.nan_to_num(2 * x)
    different = check_results(_model(), {"x": x}, [replaced, positive], rtol=1e-4, atol=1e-5)
    assert different.status == "FAIL" and different.outputs[0].max_abs_diff is None
