"""TEMPLATE's direct numpy kernels (``template_plugin/direct_kernels.py``) and its small elementwise results
outside the arena against numpy written here: the float unary ops, Divide, Power, MatMul, Concat,
Broadcast, Transpose with a constant order and Reshape with a computed pattern; the inputs they hand to
the reference kernels (integers, transposed MatMul) still get the reference's answers and errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import InferenceError
from template_plugin import TemplatePlugin

UNARY = {"sqrt": np.sqrt, "negative": np.negative, "exp": np.exp, "cos": np.cos, "sin": np.sin, "tanh": np.tanh}
TYPES = {np.dtype(np.float32): hs.Type.f32, np.dtype(np.float64): hs.Type.f64, np.dtype(np.int32): hs.Type.i32}


def _run(outputs: list[hs.Node], parameters: list[hs.Node], *inputs: np.ndarray) -> list[np.ndarray]:
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False)
    compiled = core.compile_model(hs.Model(outputs, parameters), "TEMPLATE", {"TEMPLATE_DISABLE_TRANSFORMATIONS": True})
    results = compiled.create_infer_request().infer(list(inputs))
    return [np.asarray(results[i]) for i in range(len(outputs))]


def _parameter(x: np.ndarray, dynamic: bool = False) -> hs.Node:
    return opset.parameter([-1] * x.ndim if dynamic else list(x.shape), TYPES[x.dtype])


_SHAPES = hnp.array_shapes(min_dims=1, max_dims=4, max_side=6)


@settings(max_examples=30, deadline=None)
@given(
    name=st.sampled_from(sorted(UNARY)), dtype=st.sampled_from([np.float32, np.float64]),
    x=hnp.arrays(np.float64, _SHAPES, elements=st.floats(0, 50)),
)  # fmt: skip
def test_float_unary_ops_equal_numpy(name: str, dtype: type, x: np.ndarray) -> None:
    x = x.astype(dtype)
    data = _parameter(x)
    (result,) = _run([getattr(opset, name)(data)], [data], x)
    assert result.dtype == x.dtype
    np.testing.assert_array_equal(result, UNARY[name](x))


@settings(max_examples=30, deadline=None)
@given(
    a=hnp.arrays(np.float32, (3, 1, 5), elements=st.floats(0.5, 4, width=32)),
    b=hnp.arrays(np.float32, st.sampled_from([(5,), (4, 1), (1, 4, 5), ()]), elements=st.floats(0.5, 3, width=32)),
)  # fmt: skip
def test_divide_power_multiply_add_broadcast_as_numpy(a: np.ndarray, b: np.ndarray) -> None:
    pa, pb = _parameter(a), _parameter(b)
    ops = [opset.divide(pa, pb), opset.power(pa, pb), opset.multiply(pa, pb), opset.add(pa, pb)]
    for result, expected in zip(_run(ops, [pa, pb], a, b), (a / b, a**b, a * b, a + b), strict=True):
        assert result.shape == expected.shape and result.dtype == np.float32
        np.testing.assert_array_equal(result, expected)


def test_small_results_are_fresh_arrays_the_caller_may_keep() -> None:
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.full((2, 3), 2, np.float32)
    pa, pb = _parameter(a), _parameter(b)
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False)
    request = core.compile_model(hs.Model([opset.multiply(pa, pb)], [pa, pb]), "TEMPLATE").create_infer_request()
    first = np.asarray(request.infer([a, b])[0]).copy()
    kept = np.asarray(request.results[0])
    request.infer([a + 1, b])
    np.testing.assert_array_equal(kept, first)  # the next inference wrote elsewhere
    np.testing.assert_array_equal(first, a * 2)


def test_integer_divide_by_zero_still_raises_as_the_reference_does() -> None:
    a, b = np.array([4, 6], np.int32), np.array([2, 0], np.int32)
    pa, pb = _parameter(a), _parameter(b)
    with pytest.raises(InferenceError, match="division by zero"):
        _run([opset.divide(pa, pb)], [pa, pb], a, b)


@pytest.mark.parametrize("transpose_b", [False, True])
def test_matmul_equals_numpy_with_and_without_a_transpose(transpose_b: bool) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4)).astype(np.float32), rng.standard_normal((4, 5)).astype(np.float32)
    b_given = b.T.copy() if transpose_b else b
    pa, pb = _parameter(a), _parameter(b_given)
    (result,) = _run([opset.matmul(pa, pb, transpose_b=transpose_b)], [pa, pb], a, b_given)
    np.testing.assert_allclose(result, np.matmul(a, b), rtol=1e-6, atol=1e-6)


def test_concat_transpose_and_a_computed_reshape_equal_numpy() -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    y = np.arange(8, dtype=np.float32).reshape(2, 1, 4) + 100
    px, py = _parameter(x, dynamic=True), _parameter(y, dynamic=True)
    joined = opset.concat([px, py], axis=1)
    swapped = opset.transpose(joined, np.array([2, 0, 1], np.int64))
    flat = opset.concat([opset.shape_of(px), np.array([-1], np.int64)], axis=0)  # [2, 3, 4, -1]: computed
    reshaped = opset.reshape(py, opset.concat([np.array([0, 0], np.int64), np.array([2, 2], np.int64)], 0), True)
    again = opset.reshape(px, opset.shape_of(opset.transpose(px, np.array([0, 2, 1], np.int64))), False)
    results = _run([joined, swapped, flat, reshaped, again], [px, py], x, y)
    expected = np.concatenate([x, y], axis=1)
    np.testing.assert_array_equal(results[0], expected)
    np.testing.assert_array_equal(results[1], expected.transpose(2, 0, 1))
    np.testing.assert_array_equal(results[2], [2, 3, 4, -1])
    np.testing.assert_array_equal(results[3], y.reshape(2, 1, 2, 2))
    np.testing.assert_array_equal(results[4], x.reshape(2, 4, 3))


@pytest.mark.parametrize("mode", ["numpy", "bidirectional"])
def test_broadcast_is_a_writable_copy_as_numpy_broadcasts(mode: str) -> None:
    x = np.arange(3, dtype=np.float32).reshape(3, 1)
    target = np.array([2, 3, 4], np.int64)
    px = _parameter(x)
    (result,) = _run([opset.broadcast(px, target, mode=mode)], [px], x)
    np.testing.assert_array_equal(result, np.broadcast_to(x, (2, 3, 4)))
    assert result.flags.writeable and not np.shares_memory(result, x)


def test_broadcast_to_a_shape_the_input_does_not_fit_is_an_inference_error() -> None:
    x = np.arange(3, dtype=np.float32)
    px, pt = _parameter(x), opset.parameter([1], hs.Type.i64)
    with pytest.raises(InferenceError, match="Broadcast"):
        _run([opset.broadcast(px, pt)], [px, pt], x, np.array([4], np.int64))


def test_convert_of_integers_to_f32_equals_numpy() -> None:
    x = np.array([[0, 1, -7, 2**40]], np.int64)
    px = opset.parameter([1, 4], hs.Type.i64)
    (result,) = _run([opset.convert(px, hs.Type.f32)], [px], x)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, x.astype(np.float32))


@settings(max_examples=40, deadline=None)
@given(start=st.integers(-20, 20), stop=st.integers(-20, 40), step=st.integers(-5, 5).filter(bool))
def test_an_integer_range_equals_numpy_arange(start: int, stop: int, step: int) -> None:
    values = [np.array(v, np.int64) for v in (start, stop, step)]
    parameters = [opset.parameter([], hs.Type.i64) for _ in values]
    (result,) = _run([opset.range(*parameters, np.int64)], parameters, *values)
    assert result.dtype == np.int64
    np.testing.assert_array_equal(result, np.arange(start, stop, step))


def test_a_range_with_step_zero_fails_as_the_reference_does() -> None:
    parameters = [opset.parameter([], hs.Type.i64) for _ in range(3)]
    with pytest.raises(InferenceError, match="step is 0"):
        _run([opset.range(*parameters, np.int64)], parameters, *(np.array(v, np.int64) for v in (0, 5, 0)))


@settings(max_examples=30, deadline=None)
@given(x=hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4)), data=st.data())
def test_split_gives_numpy_split_parts(x: np.ndarray, data) -> None:
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    parts = data.draw(st.sampled_from([n for n in (1, 2, 3, 4) if x.shape[axis] % n == 0]))
    parameter = _parameter(x, dynamic=True)
    results = _run(list(opset.split(parameter, np.array(axis, np.int64), parts).outputs()), [parameter], x)
    for result, expected in zip(results, np.split(x, parts, axis=axis), strict=True):
        np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("indices", [[0, 4, -1, 2], [[1, -5], [3, 3]], [7, -6, 1], []])
def test_a_gather_along_a_constant_axis_takes_rows_and_gives_zeros_out_of_range(indices) -> None:
    table = np.arange(15, dtype=np.float32).reshape(5, 3)
    index = np.array(indices, np.int64)
    ids = opset.parameter([-1] * index.ndim, hs.Type.i64)
    (result,) = _run([opset.gather(table, ids, np.array(0, np.int64))], [ids], index)
    in_range = (index >= -5) & (index < 5)
    expected = np.where(in_range[..., None], table[np.where(in_range, index, 0)], 0)
    np.testing.assert_array_equal(result, expected.reshape(*index.shape, 3))
