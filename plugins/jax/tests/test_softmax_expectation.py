"""XLA runs a Softmax over the channels followed by a 1x1 convolution to one channel by constant weights (YOLOv8's
DFL head) as one op, ``XlaSoftmaxExpectation``, through the native kernel (``hetero_sdk_softmax_expectation_f32``)
where it can: the kernel and the op against the expectation written in numpy here (float64), the pattern found
with and without the Transpose in front of the Softmax, and the graphs it leaves alone."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest
from hetero_sdk import Model, Type, opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, core

from hetero_sdk_jax import native
from hetero_sdk_jax.lowering.kernels.softmax import EXPECTATION_TARGET, native_expectation
from hetero_sdk_jax.native import native_scope
from hetero_sdk_jax.softmax_expectation import SOFTMAX_EXPECTATION

needs_kernel = pytest.mark.skipif(
    not native.available(EXPECTATION_TARGET), reason="the native kernel cannot be built here"
)


def _expectation(x: np.ndarray, w: np.ndarray, axis: int) -> np.ndarray:
    """``sum(softmax(x, axis) * w, axis, keepdims=True)`` in float64, the Softmax written out."""
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(x64 - x64.max(axis=axis, keepdims=True))
        p = e / e.sum(axis=axis, keepdims=True)
    shape = [1] * x.ndim
    shape[axis] = -1
    return np.sum(p * w.astype(np.float64).reshape(shape), axis=axis, keepdims=True)


def _assert_close(got: Any, x: np.ndarray, w: np.ndarray, axis: int) -> None:
    """``got`` is the expectation to f32 rounding: relative to the largest weight's magnitude, plus the
    rounding of ``x - max`` in f32 carried into each exp."""
    want = _expectation(x, w, axis)
    got = np.asarray(got, np.float64)
    assert got.shape == want.shape
    assert np.array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    spread = np.abs(x.astype(np.float64)).max(axis=axis, keepdims=True) * 2.0**-23
    bound = (1e-5 + 2 * spread) * max(float(np.abs(w).max()), 1.0)
    error = np.abs(got - want)
    assert np.all((error <= bound)[finite]), f"error {error[finite].max():.3g}"


def _kernel(x: np.ndarray, w: np.ndarray, axis: int) -> np.ndarray:
    with native_scope("cpu", True):
        return np.asarray(jax.jit(native_expectation, static_argnums=2)(x, w, axis))


@needs_kernel
@OPS
@given(
    outer=st.integers(1, 4),
    bins=st.one_of(st.integers(1, 20), st.just(16), st.integers(60, 70)),  # bins last up to 64, 16 transposed
    inner=st.integers(1, 150),
    scale=st.sampled_from([0.01, 1.0, 30.0]),
    seed=st.integers(0, 2**16),
)
def test_kernel_matches_numpy(outer: int, bins: int, inner: int, scale: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((outer, bins, inner)) * scale).astype(np.float32)
    w = rng.uniform(-4, 16, bins).astype(np.float32)
    _assert_close(_kernel(x, w, 1), x, w, 1)


@needs_kernel
@pytest.mark.parametrize("bins", [4, 16, 68])  # bins last (gathered, transposed), slabs
def test_kernel_on_nan_infinities_and_columns_of_minus_infinity(bins: int) -> None:
    inf, nan = np.inf, np.nan
    x = np.zeros((1, bins, 18), np.float32)
    x[0, 4:] = -inf  # bins past the fourth have probability 0
    x[0, :4, 0] = [0, -inf, 1, 2]  # -inf has probability 0
    x[0, :4, 1] = [0, nan, 1, 2]  # NaN: the column's result
    x[0, :4, 2] = [0, inf, 1, 2]  # +inf: inf - inf, NaN
    x[0, :, 3] = -inf  # -inf - -inf: NaN
    x[0, :4, 17] = [1000, -1000, 88, -88]  # a tail lane
    w = np.arange(bins, dtype=np.float32)
    got = _kernel(x, w, 1)
    _assert_close(got, x, w, 1)
    assert np.all(np.isnan(got[0, 0, 1:4])) and not np.isnan(got[0, 0, 0])


def _dfl(anchors: int, bins: int = 16, transpose: bool = True, weights: np.ndarray | None = None) -> Model:
    """YOLOv8's DFL head: ``[1, 4 * bins, A]`` -> ``[1, 4, bins, A]`` -> (Transpose to ``[1, bins, 4, A]``) ->
    Softmax over axis 1 -> 1x1 convolution by ``weights`` (``0..bins-1``) -> ``[1, 4, A]``."""
    w = np.arange(bins, dtype=np.float32) if weights is None else weights
    p = opset.parameter([1, 4 * bins, anchors], Type.f32, name="x")
    grouped = opset.reshape(p, np.array([1, 4, bins, anchors], np.int64), False)
    if transpose:
        grouped = opset.transpose(grouped, np.array([0, 2, 1, 3], np.int64))
    else:
        grouped = opset.reshape(grouped, np.array([1, bins, 4, anchors], np.int64), False)
    probabilities = opset.softmax(grouped, 1)
    conv = opset.convolution(probabilities, w.reshape(1, bins, 1, 1), [1, 1], [0, 0], [0, 0], [1, 1])
    y = opset.reshape(conv, np.array([1, 4, anchors], np.int64), False, name="y")
    return Model([y], [p], name="dfl")


def _types(compiled: Any) -> list[str]:
    return [n.type_name for n in compiled.get_runtime_model().get_ops()]


@pytest.mark.parametrize("native_kernels", [True, False])
@pytest.mark.parametrize(("anchors", "transpose"), [(2100, True), (37, True), (5, True), (40, False)])
def test_the_dfl_head_runs_as_one_op(anchors: int, transpose: bool, native_kernels: bool) -> None:
    rng = np.random.default_rng(anchors)
    x = (rng.standard_normal((1, 64, anchors)) * 4).astype(np.float32)
    compiled: Any = core().compile_model(
        _dfl(anchors, transpose=transpose), "XLA", {"XLA_NATIVE_KERNELS": native_kernels}
    )
    types = _types(compiled)
    assert SOFTMAX_EXPECTATION in types and "Softmax" not in types and "Convolution" not in types
    bins = np.arange(16, dtype=np.float32)
    if transpose:
        want = _expectation(x.reshape(1, 4, 16, anchors), bins, 2).reshape(1, 4, anchors)
    else:  # the channels regrouped as [16, 4] by the Reshape alone
        want = _expectation(x.reshape(1, 16, 4, anchors), bins, 1).reshape(1, 4, anchors)
    got = compiled({"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-5)
    kernel = native_kernels and anchors >= 16 and native.available(EXPECTATION_TARGET)
    assert (EXPECTATION_TARGET in compiled.jax_executable([[1, 64, anchors]]).as_text()) is kernel


def test_the_op_and_the_unfused_graph_agree_on_template() -> None:
    """TEMPLATE runs the original ops: the same values as XLA's op, to f32 rounding."""
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((1, 40, 24)) * 6).astype(np.float32)
    weights = rng.uniform(-3, 3, 10).astype(np.float32)
    model = _dfl(24, bins=10, weights=weights)
    xla = core().compile_model(model, "XLA")({"x": x})["y"]
    template = core().compile_model(_dfl(24, bins=10, weights=weights), "TEMPLATE")({"x": x})["y"]
    np.testing.assert_allclose(xla, template, rtol=1e-5, atol=1e-5)


def test_patterns_that_are_not_an_expectation_stay() -> None:
    """Two output channels, a second use of the probabilities, a stride, padding, another axis: left alone."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 6, 4, 5)).astype(np.float32)
    p = opset.parameter(list(x.shape), Type.f32, name="x")
    one = rng.standard_normal((1, 6, 1, 1)).astype(np.float32)
    two = rng.standard_normal((2, 6, 1, 1)).astype(np.float32)

    def conv(data: Any, w: np.ndarray, stride: int = 1, pad: int = 0, name: str | None = None) -> Any:
        return opset.convolution(data, w, [stride, stride], [pad, pad], [pad, pad], [1, 1], name=name)

    shared = opset.softmax(p, 1, name="shared")
    outputs = [
        conv(opset.softmax(p, 1), two, name="two_channels"),
        conv(shared, one, name="shared_use"),
        opset.relu(shared, name="other_use"),
        conv(opset.softmax(p, 1), one, stride=2, name="strided"),
        conv(opset.softmax(p, 1), one, pad=1, name="padded"),
        conv(opset.softmax(p, 2), one, name="other_axis"),
    ]
    compiled: Any = core().compile_model(Model(outputs, [p], name="kept"), "XLA")
    assert SOFTMAX_EXPECTATION not in _types(compiled)
    got = compiled({"x": x})
    e = np.exp(x - x.max(axis=1, keepdims=True))
    probabilities = (e / e.sum(axis=1, keepdims=True)).astype(np.float64)
    per_position = np.einsum("oc,nchw->nohw", one[:, :, 0, 0], probabilities)
    np.testing.assert_allclose(
        got["two_channels"], np.einsum("oc,nchw->nohw", two[:, :, 0, 0], probabilities), rtol=1e-5
    )
    np.testing.assert_allclose(got["shared_use"], per_position, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["strided"], per_position[:, :, ::2, ::2], rtol=1e-5, atol=1e-6)
    padded = np.einsum("oc,nchw->nohw", one[:, :, 0, 0], np.pad(probabilities, ((0, 0), (0, 0), (1, 1), (1, 1))))
    np.testing.assert_allclose(got["padded"], padded, rtol=1e-5, atol=1e-6)
    e2 = np.exp(x - x.max(axis=2, keepdims=True))
    other = (e2 / e2.sum(axis=2, keepdims=True)).astype(np.float64)
    np.testing.assert_allclose(
        got["other_axis"], np.einsum("oc,nchw->nohw", one[:, :, 0, 0], other), rtol=1e-5, atol=1e-6
    )
