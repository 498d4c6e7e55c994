"""BatchNormInference, MVN, Softmax and LogSoftmax: inference, and kernels against formulas written here."""

from __future__ import annotations

import itertools
import math

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
FLOATS = st.floats(-8, 8, width=32)


def run(node: hs.Node, params: list[hs.Node], *arrays: np.ndarray) -> list[np.ndarray]:
    """Evaluates every output of ``node`` with the reference kernels."""
    return evaluate(hs.Model(node.outputs(), params), list(arrays))


# -- BatchNormInference --------------------------------------------------------------------------------


@FAST
@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=2, max_dims=4, max_side=4), elements=FLOATS), st.data())
def test_batch_norm_normalizes_each_channel(x: np.ndarray, data: st.DataObject) -> None:
    channels = x.shape[1]
    gamma, beta, mean = (data.draw(hnp.arrays(np.float32, channels, elements=FLOATS)) for _ in range(3))
    variance = data.draw(hnp.arrays(np.float32, channels, elements=st.floats(0, 4, width=32)))
    px = opset.parameter(x.shape)
    (got,) = run(opset.batch_norm_inference(px, gamma, beta, mean, variance, 1e-3), [px], x)
    for index in itertools.product(*map(range, x.shape)):
        c = index[1]
        expected = float(gamma[c]) * (float(x[index]) - float(mean[c])) / math.sqrt(float(variance[c]) + 1e-3)
        assert got[index] == pytest.approx(expected + float(beta[c]), rel=1e-4, abs=1e-4)


def test_batch_norm_output_shape_takes_channels_from_the_parameters() -> None:
    x = opset.parameter([-1, -1, 5], hs.Type.f16)
    stats = [opset.parameter([3], hs.Type.f16) for _ in range(4)]
    node = opset.batch_norm_inference(x, *stats, epsilon=1e-5)
    assert node.get_output_partial_shape(0) == [-1, 3, 5]
    assert node.get_output_element_type(0) is hs.Type.f16


@pytest.mark.parametrize(
    ("data", "gamma", "epsilon", "message"),
    [
        ([2, 3, 4], [4], 1e-5, "gamma [4] must have one value per channel of [2,3,4]: 3 != 4"),
        ([3], [3], 1e-5, "data has rank 1"),
        ([2, 3], [3], -1.0, "epsilon=-1.0 must be non-negative"),
        ([2, 3], [1, 3], 1e-5, "gamma has rank 2"),
    ],
)
def test_bad_batch_norm_names_the_node(data, gamma, epsilon: float, message: str) -> None:
    stats = [opset.parameter(gamma)] + [opset.parameter([data[-1] if len(data) > 1 else 3]) for _ in range(3)]
    with pytest.raises(ModelValidationError) as info:
        opset.batch_norm_inference(opset.parameter(data), *stats, epsilon, name="bn")
    assert str(info.value).startswith("BatchNormInference 'bn': ")
    assert message in str(info.value)


def test_batch_norm_rejects_integer_data() -> None:
    x = opset.parameter([1, 2], hs.Type.i32)
    stats = [opset.parameter([2], hs.Type.i32) for _ in range(4)]
    with pytest.raises(ModelValidationError, match="BatchNormInference 'bn': data has element type i32"):
        opset.batch_norm_inference(x, *stats, 0.0, name="bn")


# -- MVN -------------------------------------------------------------------------------------------------


@st.composite
def mvn_cases(draw: st.DrawFn) -> tuple[np.ndarray, list[int]]:
    x = draw(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=4, max_side=4), elements=FLOATS))
    axes = draw(st.lists(st.integers(-x.ndim, x.ndim - 1), min_size=1, max_size=x.ndim, unique_by=lambda a: a % x.ndim))
    return x, axes


@FAST
@given(mvn_cases(), st.booleans(), st.sampled_from(["inside_sqrt", "outside_sqrt"]))
def test_mvn_normalizes_over_the_axes(case: tuple, normalize_variance: bool, eps_mode: str) -> None:
    x, axes = case
    reduced = {a % x.ndim for a in axes}
    eps = 1e-3
    px = opset.parameter(x.shape, hs.Type.f64)
    (got,) = run(opset.mvn(px, axes, normalize_variance, eps, eps_mode), [px], x)
    for index in itertools.product(*map(range, x.shape)):
        group = [v for other in itertools.product(*map(range, x.shape))
                 if all(other[d] == index[d] for d in range(x.ndim) if d not in reduced)
                 for v in [float(x[other])]]  # fmt: skip
        mean = sum(group) / len(group)
        expected = float(x[index]) - mean
        if normalize_variance:
            variance = sum((v - mean) ** 2 for v in group) / len(group)
            expected /= math.sqrt(variance + eps) if eps_mode == "inside_sqrt" else math.sqrt(variance) + eps
        assert got[index] == pytest.approx(expected, rel=1e-6, abs=1e-6)


def test_mvn_computes_half_precision_in_f32() -> None:
    x = np.array([[1, 2, 3, 4]], ml_dtypes.bfloat16)
    (got,) = run(opset.mvn(x, [1], True, 0.0, "inside_sqrt"), [])
    assert got.dtype == np.dtype(ml_dtypes.bfloat16)
    scale = math.sqrt(1.25)  # variance of 1..4
    np.testing.assert_allclose(got.astype(np.float32), [[-1.5 / scale, -0.5 / scale, 0.5 / scale, 1.5 / scale]],
                               rtol=1e-2)  # fmt: skip


def test_mvn_with_runtime_axes_keeps_the_input_shape() -> None:
    x, axes = opset.parameter([-1, 3, 4]), opset.parameter([2], hs.Type.i64)
    node = opset.mvn(x, axes, False, 1e-9, "OUTSIDE_SQRT")
    assert node.get_output_partial_shape(0) == [-1, 3, 4]
    assert node.get_attributes()["eps_mode"] == "outside_sqrt"
    (got,) = run(node, [x, axes], np.float32([[[1, 2, 3, 4]] * 3]), np.int64([0, 2]))
    np.testing.assert_allclose(got, np.float32([[[-1.5, -0.5, 0.5, 1.5]] * 3]))


@pytest.mark.parametrize(
    ("axes", "kwargs", "message"),
    [
        ([3], {}, "axes value 3 is out of range for rank 3"),
        (np.float32([1]), {}, "axes has element type f32"),
        (np.int64([[1]]), {}, "axes has rank 2"),
        ([1], {"eps_mode": "around_sqrt"}, "eps_mode='around_sqrt' is invalid"),
        ([1], {"normalize_variance": "no"}, "normalize_variance='no' must be a bool"),
        ([1], {"eps": "small"}, "eps='small' must be a number"),
    ],
)
def test_bad_mvn_names_the_node(axes, kwargs: dict, message: str) -> None:
    attrs = {"normalize_variance": True, "eps": 1e-9, "eps_mode": "inside_sqrt"} | kwargs
    x = opset.parameter([2, 3, 4])
    inputs = [x.output(0), opset.constant(np.asarray(axes)).output(0)]
    with pytest.raises(ModelValidationError) as info:
        hs.Node("MVN", inputs, attrs, name="mvn")
    assert str(info.value).startswith("MVN 'mvn': ")
    assert message in str(info.value)


# -- Softmax and LogSoftmax ------------------------------------------------------------------------------


def test_softmax_of_logs_gives_the_proportions() -> None:
    x = np.log(np.float32([[1, 2, 3, 4], [5, 5, 5, 5]]))
    (soft,) = run(opset.softmax(x, axis=-1), [])
    (log_soft,) = run(opset.log_softmax(x, axis=1), [])
    np.testing.assert_allclose(soft, [[0.1, 0.2, 0.3, 0.4], [0.25] * 4], rtol=1e-6)
    np.testing.assert_allclose(log_soft, np.log([[0.1, 0.2, 0.3, 0.4], [0.25] * 4]), rtol=1e-6)


def test_softmax_survives_large_inputs() -> None:
    (got,) = run(opset.softmax(np.float32([1000, 1000]), axis=0), [])
    np.testing.assert_allclose(got, [0.5, 0.5])


@FAST
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=4, max_side=4), elements=FLOATS), st.data())
def test_softmax_and_log_softmax_match_their_definitions(x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    px = opset.parameter(x.shape, hs.Type.f64)
    soft, log_soft = run(opset.softmax(px, axis), [px], x)[0], run(opset.log_softmax(px, axis), [px], x)[0]
    moved_soft, moved_log = np.moveaxis(soft, axis, -1), np.moveaxis(log_soft, axis, -1)
    for index in np.ndindex(np.moveaxis(x, axis, -1).shape[:-1]):
        row = [float(v) for v in np.moveaxis(x, axis, -1)[index]]
        total = sum(math.exp(v) for v in row)
        np.testing.assert_allclose(moved_soft[index], [math.exp(v) / total for v in row], rtol=1e-9)
        np.testing.assert_allclose(moved_log[index], [v - math.log(total) for v in row], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("factory", [opset.softmax, opset.log_softmax])
def test_softmax_family_keeps_shape_and_type(factory) -> None:
    node = factory(opset.parameter([-1, 10], hs.Type.f16), axis=-1)
    assert node.get_output_partial_shape(0) == [-1, 10]
    assert node.get_output_element_type(0) is hs.Type.f16
    assert node.get_attributes()["axis"] == -1


@pytest.mark.parametrize(("factory", "type_name"), [(opset.softmax, "Softmax"), (opset.log_softmax, "LogSoftmax")])
def test_bad_softmax_names_the_node(factory, type_name: str) -> None:
    with pytest.raises(
        ModelValidationError, match=f"{type_name} 'sm': attribute axis=2: axis 2 is out of range for rank 2"
    ):
        factory(opset.parameter([2, 3]), axis=2, name="sm")
    with pytest.raises(ModelValidationError, match=f"{type_name} 'sm': data has element type i64"):
        factory(opset.parameter([2, 3], hs.Type.i64), axis=1, name="sm")
    with pytest.raises(ModelValidationError, match=f"{type_name} 'sm': .*a scalar has no axis"):
        factory(opset.parameter([]), axis=0, name="sm")
    with pytest.raises(ModelValidationError, match=f"{type_name} 'sm': attribute axis=1.5 must be an integer"):
        factory(opset.parameter([2, 3]), axis=1.5, name="sm")


# -- LRN -------------------------------------------------------------------------------------------


def numpy_lrn(x: np.ndarray, axes: list[int], alpha: float, beta: float, bias: float, size: int) -> np.ndarray:
    """LRN element by element: the squares summed over each element's window, in float64."""
    x64 = x.astype(np.float64)
    axes = sorted({a % x.ndim for a in axes})
    before = (size - 1) // 2
    out = np.empty_like(x64)
    for index in itertools.product(*(range(d) for d in x.shape)):
        window = tuple(
            slice(max(i - before, 0), i - before + size) if d in axes else slice(i, i + 1) for d, i in enumerate(index)
        )
        total = float((x64[window] ** 2).sum())
        out[index] = x64[index] / (bias + alpha / size ** len(axes) * total) ** beta
    return out


@FAST
@given(
    hnp.arrays(np.float32, hnp.array_shapes(min_dims=2, max_dims=4, max_side=5), elements=st.floats(-3, 3, width=32)),
    st.integers(1, 5),
    st.sampled_from([(1e-4, 0.75, 1.0), (0.5, 0.5, 2.0), (1.0, 1.0, 1.0)]),
    st.data(),
)
def test_lrn_matches_a_numpy_loop(
    x: np.ndarray, size: int, params: tuple[float, float, float], data: st.DataObject
) -> None:
    axes = data.draw(st.lists(st.integers(-x.ndim, x.ndim - 1), min_size=1, max_size=2))
    alpha, beta, bias = params
    data_param = opset.parameter(x.shape, x.dtype, name="x")
    node = opset.lrn(data_param, axes, alpha, beta, bias, size)
    (out,) = run(node, [data_param], x)
    assert out.dtype == x.dtype and out.shape == x.shape
    np.testing.assert_allclose(out, numpy_lrn(x, axes, alpha, beta, bias, size), rtol=2e-5, atol=1e-6)


def test_lrn_rejects_bad_axes_and_sizes_naming_the_node() -> None:
    x = opset.parameter([1, 3, 4], np.float32)
    with pytest.raises(ModelValidationError, match=r"norm.*axes value 3"):
        opset.lrn(x, [3], 1e-4, 0.75, 1.0, 3, name="norm")
    with pytest.raises(ModelValidationError, match=r"norm.*size=0"):
        opset.lrn(x, [1], 1e-4, 0.75, 1.0, 0, name="norm")
