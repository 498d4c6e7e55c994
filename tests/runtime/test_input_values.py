"""Python lists and numbers given as inputs are converted only where no value changes: floats never
become integers, strings never become numbers, and out-of-range values are refused, each with an
InferenceError naming the input and the type it expects."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import InferenceError


@pytest.fixture
def compiled(core: hs.Core) -> hs.CompiledModel:
    """``i`` (i32 [2]) and ``h`` (f16 [2]) each pass through an Add of zero."""
    i = opset.parameter([2], hs.Type.i32, name="i")
    h = opset.parameter([2], hs.Type.f16, name="h")
    outputs = [
        opset.add(i, opset.constant(np.int32(0)), name="io"),
        opset.add(h, opset.constant(np.float16(0)), name="ho"),
    ]
    return core.compile_model(hs.Model(outputs, [i, h], name="typed"), "TEMPLATE")


def _run(compiled: hs.CompiledModel, i: Any, h: Any = (0.5, 1.5)) -> list[np.ndarray]:
    results = compiled.create_infer_request().infer({"i": i, "h": h})
    return [np.asarray(results["io"]), np.asarray(results["ho"])]


def test_integers_booleans_and_floats_that_fit_are_converted(compiled: hs.CompiledModel) -> None:
    got_i, got_h = _run(compiled, [-3, True], [1, 2.5])
    np.testing.assert_array_equal(got_i, np.array([-3, 1], np.int32))
    np.testing.assert_array_equal(got_h, np.array([1.0, 2.5], np.float16))
    assert got_i.dtype == np.int32 and got_h.dtype == np.float16


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ([1.7, 2.0], "holds floats"),
        ([float("nan"), 1.0], "holds floats"),
        (np.float64(2.5), "holds floats"),
        (["1", "2"], "holds strings"),
        ([2**40, 1], "outside the range of i32"),
        ([2**70, 1], "numpy reads as object"),
        ([[1], [2, 3]], "not a regular array"),
    ],
    ids=["float", "nan", "numpy-float", "strings", "overflow", "too-big-for-int64", "ragged"],
)
def test_values_that_would_change_are_refused_naming_the_input_and_its_type(
    compiled: hs.CompiledModel, value: Any, problem: str
) -> None:
    with pytest.raises(InferenceError, match=rf"input 'i' \(i32\).*{problem}"):
        _run(compiled, value)


@pytest.mark.parametrize(("value", "problem"), [([1e6, 0.0], "outside the range of f16"), (["a", "b"], "strings")])
def test_floats_too_big_for_the_type_and_strings_are_refused(
    compiled: hs.CompiledModel, value: Any, problem: str
) -> None:
    with pytest.raises(InferenceError, match=rf"input 'h' \(f16\).*{problem}"):
        _run(compiled, [0, 0], value)
