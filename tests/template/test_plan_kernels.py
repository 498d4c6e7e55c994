"""TEMPLATE's own ReduceMean (float64 accumulation without a widened copy) against numpy's mean in
float64, and the reference kernel's answers where it defers to it."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hetero_sdk as hs
from hetero_sdk import opset


def _template_mean(x: np.ndarray, axes: list[int], keep: bool) -> np.ndarray:
    data = opset.parameter(list(x.shape), hs.Type(str(x.dtype).replace("float", "f").replace("int", "i")))
    model = hs.Model([opset.reduce_mean(data, np.array(axes, np.int64), keep)], [data])
    compiled = hs.Core().compile_model(model, "TEMPLATE", {"TEMPLATE_DISABLE_TRANSFORMATIONS": True})
    return np.asarray(compiled(x)[0])


@settings(max_examples=40, deadline=None)
@given(
    x=hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=4, max_side=7),
                 elements=st.floats(-1e6, 1e6, width=32)),
    keep=st.booleans(), data=st.data(),
)  # fmt: skip
def test_reduce_mean_equals_numpy_in_float64(x, keep, data) -> None:
    axes = data.draw(st.lists(st.integers(-x.ndim, x.ndim - 1), min_size=1, max_size=x.ndim, unique=True))
    expected = np.mean(x.astype(np.float64), axis=tuple({a % x.ndim for a in axes}), keepdims=keep)
    result = _template_mean(x, axes, keep)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, expected.astype(np.float32), rtol=1e-6, atol=1e-6)


def test_reduce_mean_of_integers_and_of_nothing_keeps_the_reference_answers() -> None:
    ints = np.array([[-7, 2], [3, 3]], np.int32)
    np.testing.assert_array_equal(_template_mean(ints, [1], False), np.array([-2, 3], np.int32))  # truncates
    empty = np.zeros((2, 0), np.float32)
    np.testing.assert_array_equal(_template_mean(empty, [1], False), np.zeros(2, np.float32))  # 0, not NaN
