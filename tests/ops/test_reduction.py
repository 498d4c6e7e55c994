"""Reductions: shape inference (static, dynamic, axes computed in the graph), values against numpy, bad input."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate

FAST = settings(max_examples=40, deadline=None)
FACTORIES: dict[str, Callable[..., hs.Node]] = {
    "ReduceSum": opset.reduce_sum,
    "ReduceMean": opset.reduce_mean,
    "ReduceMax": opset.reduce_max,
    "ReduceMin": opset.reduce_min,
    "ReduceProd": opset.reduce_prod,
}


def run(node_of: Callable[[hs.Node], hs.Node], x: np.ndarray) -> tuple[hs.Node, np.ndarray]:
    param = opset.parameter(x.shape, x.dtype, name="x")
    node = node_of(param)
    (out,) = evaluate(hs.Model([node], [param]), [x])
    assert node.get_output_partial_shape(0) == list(out.shape)
    return node, out


def numpy_reduce(type_name: str, x: np.ndarray, axes: tuple[int, ...], keep_dims: bool) -> np.ndarray:
    """The expected result, written with numpy (integer means truncate toward zero, as in C++)."""
    if type_name == "ReduceMean" and x.dtype.kind in "iu":
        total = np.sum(x.astype(np.int64), axis=axes, keepdims=keep_dims)
        count = math.prod(x.shape[a] for a in axes)
        return np.fix(total / count).astype(x.dtype)
    fn = {"ReduceSum": np.sum, "ReduceMean": np.mean, "ReduceMax": np.max, "ReduceMin": np.min, "ReduceProd": np.prod}
    return np.asarray(fn[type_name](x.astype(np.float64), axis=axes, keepdims=keep_dims)).astype(x.dtype)


# -- shape inference ------------------------------------------------------------------------------


@pytest.mark.parametrize("type_name", sorted(FACTORIES))
@pytest.mark.parametrize(
    ("shape", "axes", "keep_dims", "expected"),
    [
        ([2, 3, 4], [1], False, [2, 4]),
        ([2, 3, 4], [1], True, [2, 1, 4]),
        ([2, 3, 4], [-1, 0], False, [3]),
        ([2, 3, 4], [0, 0, -3], False, [3, 4]),
        ([2, 3, 4], [], False, [2, 3, 4]),
        ([2, 3, 4], 2, True, [2, 3, 1]),
        ([5], [0], False, []),
        ([-1, 3, -1], [1], False, [-1, -1]),
        ([-1, 3, -1], [2], True, [-1, 3, 1]),
    ],
)
def test_static_axes_give_exact_shapes(
    type_name: str, shape: list[int], axes: Any, keep_dims: bool, expected: list[int]
) -> None:
    x = opset.parameter(shape, hs.Type.f32)
    node = FACTORIES[type_name](x, axes, keep_dims=keep_dims)
    assert node.get_type_name() == type_name
    assert node.get_output_partial_shape(0) == expected
    assert node.get_output_element_type(0) == hs.Type.f32


def test_unknown_axes_give_the_rank_with_dynamic_dims() -> None:
    x = opset.parameter([2, 1, 4], hs.Type.f32)
    axes = opset.parameter([2], hs.Type.i64)
    assert opset.reduce_sum(x, axes).get_output_partial_shape(0) == [-1]
    assert opset.reduce_sum(x, axes, keep_dims=True).get_output_partial_shape(0) == [-1, 1, -1]


def test_axes_computed_from_shape_of_are_folded() -> None:
    x = opset.parameter([2, 3, 4], hs.Type.f32)
    last_axis = opset.subtract(opset.shape_of(opset.shape_of(x)), 1)  # [rank - 1]
    assert opset.reduce_max(x, last_axis).get_output_partial_shape(0) == [2, 3]


def test_reduce_prod_of_shape_of_feeds_a_static_reshape() -> None:
    x = opset.parameter([2, 3, 4], hs.Type.f32)
    count = opset.reduce_prod(opset.shape_of(x), [0], keep_dims=True)
    assert opset.reshape(x, count, special_zero=False).get_output_partial_shape(0) == [24]


# -- values ---------------------------------------------------------------------------------------


@st.composite
def reductions(draw: st.DrawFn) -> tuple[np.ndarray, list[int], tuple[int, ...]]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4))
    dtype = draw(st.sampled_from([np.float32, np.int32, np.float64, np.int64]))
    x = draw(hnp.arrays(np.int64, shape, elements=st.integers(-3, 3))).astype(dtype)
    chosen = draw(st.lists(st.integers(0, len(shape) - 1), max_size=len(shape) + 1))
    axes = [a - len(shape) if draw(st.booleans()) else a for a in chosen]
    return x, axes, tuple(sorted(set(chosen)))


@FAST
@given(case=reductions(), type_name=st.sampled_from(sorted(FACTORIES)), keep_dims=st.booleans())
def test_reductions_match_numpy(
    case: tuple[np.ndarray, list[int], tuple[int, ...]], type_name: str, keep_dims: bool
) -> None:
    x, axes, unique = case
    _, out = run(lambda p: FACTORIES[type_name](p, axes, keep_dims=keep_dims), x)
    expected = numpy_reduce(type_name, x, unique, keep_dims)
    assert out.dtype == x.dtype
    np.testing.assert_allclose(out, expected, rtol=1e-6)


@pytest.mark.parametrize(("values", "expected"), [([-7, 2, 0], -1), ([7, 2, 0], 3), ([-8, 1, 1], -2)])
def test_integer_mean_truncates_toward_zero(values: list[int], expected: int) -> None:
    _, out = run(lambda p: opset.reduce_mean(p, [0]), np.array(values, np.int32))
    assert out == expected


def test_half_precision_sums_accumulate_widely() -> None:
    x = np.full(4096, 1, dtype=np.float16)  # 4096 + 1 is not representable in f16: naive sums stall at 2048
    _, out = run(lambda p: opset.reduce_sum(p, [0]), x)
    assert float(out) == 4096.0
    _, out = run(lambda p: opset.reduce_mean(p, [0]), x.astype(ml_dtypes.bfloat16))
    assert float(out) == 1.0


@pytest.mark.parametrize(
    ("type_name", "dtype", "expected"),
    [
        ("ReduceSum", np.float32, 0.0),
        ("ReduceProd", np.float32, 1.0),
        ("ReduceMean", np.float32, 0.0),
        ("ReduceMax", np.float32, float(np.finfo(np.float32).min)),
        ("ReduceMin", np.int32, np.iinfo(np.int32).max),
        ("ReduceMax", np.int8, -128),
    ],
)
def test_reducing_an_empty_axis_gives_the_identity(type_name: str, dtype: type, expected: float) -> None:
    _, out = run(lambda p: FACTORIES[type_name](p, [0]), np.zeros((0, 3), dtype))
    np.testing.assert_array_equal(out, np.full(3, expected, dtype))


# -- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda x: opset.reduce_sum(x, [3], name="r"), "axes value 3 is out of range for rank 3"),
        (lambda x: opset.reduce_sum(x, [-4], name="r"), "out of range"),
        (lambda x: opset.reduce_sum(x, np.array([1.0], np.float32), name="r"), "axes has element type f32"),
        (lambda x: opset.reduce_sum(x, np.array([[1]]), name="r"), "axes has rank 2"),
        (lambda x: opset.reduce_sum(x, [1], keep_dims="yes", name="r"), "keep_dims='yes'"),
        (lambda x: opset.reduce_sum(x, opset.parameter([-1], hs.Type.i64), name="r"), "dynamic length"),
        (lambda x: opset.reduce_sum(x, opset.parameter([4], hs.Type.i64), name="r"), "axes has 4 values"),
        (lambda x: opset.reduce_sum(opset.convert(x, hs.Type.boolean), [0], name="r"), "data has element type"),
    ],
)
def test_bad_input_raises_naming_the_node(build: Callable[[hs.Node], hs.Node], message: str) -> None:
    x = opset.parameter([2, 3, 4], hs.Type.f32)
    with pytest.raises(ModelValidationError, match=r"ReduceSum 'r'") as info:
        build(x)
    assert message in str(info.value)
