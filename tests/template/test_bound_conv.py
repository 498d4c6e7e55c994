"""TEMPLATE's pointwise TemplateConvolution bound to its constant filters (one matrix product per image
into the request's arena) against numpy written here, and the convolutions it leaves to the general
kernel."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from template_plugin.bound_conv import bind_convolution, is_pointwise
from template_plugin.fused_conv import convolution_into, fused_convolution

ACTIVATIONS = {
    "none": lambda y: y,
    "relu": lambda y: np.maximum(y, 0),
    "hswish": lambda y: y * np.clip(y + 3, 0, 6) / 6,
}
TYPES = {np.float16: hs.Type.f16, np.float32: hs.Type.f32, np.float64: hs.Type.f64}


def _fused(x_shape, w, bias, activation, grouped=False, auto_pad="explicit", strides=None, scale=None):
    rank = len(x_shape) - 2
    strides = strides or [1] * rank
    x = opset.parameter(list(x_shape), TYPES[w.dtype.type], name="x")
    build = opset.group_convolution if grouped else opset.convolution
    conv = build(x, w, strides, [0] * rank, [0] * rank, [1] * rank, auto_pad, name="conv")
    node = fused_convolution(conv, bias, activation, "fused", scale=scale)
    return hs.Model([opset.relu(node)], [x]), node  # an op after it: its result is an intermediate


def _product(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The pointwise convolution in float64: every pixel's channels times the filter matrix."""
    matrix = w.reshape(w.shape[0], w.shape[1]).astype(np.float64)
    return np.moveaxis(np.tensordot(x.astype(np.float64), matrix, axes=([1], [1])), -1, 1)


@settings(max_examples=40, deadline=None)
@given(
    rank=st.integers(1, 3),
    batch=st.integers(1, 3),
    c_in=st.integers(1, 9),
    c_out=st.integers(1, 9),
    side=st.integers(1, 5),
    dtype=st.sampled_from([np.float32, np.float64]),
    activation=st.sampled_from(sorted(ACTIVATIONS)),
    grouped=st.booleans(),
    auto_pad=st.sampled_from(["explicit", "valid", "same_upper", "same_lower"]),
    scaled=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_a_pointwise_convolution_computes_the_numpy_product(
    rank, batch, c_in, c_out, side, dtype, activation, grouped, auto_pad, scaled, seed
) -> None:
    """Every spatial rank, batch, channel count, activation, auto_pad, one-group GroupConvolution and
    an affine scale; twice on one request (the second reuses the arena's buffers)."""
    rng = np.random.default_rng(seed)
    x_shape = (batch, c_in, *[side + i for i in range(rank)])
    w = rng.standard_normal((c_out, c_in) + (1,) * rank).astype(dtype)
    bias = rng.standard_normal((1, c_out) + (1,) * rank).astype(dtype)
    scale = rng.standard_normal((1, c_out) + (1,) * rank).astype(dtype) if scaled else None
    filters = w[np.newaxis] if grouped else w
    model, node = _fused(x_shape, filters, bias, activation, grouped, auto_pad, scale=scale)
    assert is_pointwise(node, filters)
    request = hs.Core().compile_model(model, "TEMPLATE").create_infer_request()
    for _ in range(2):
        value = rng.standard_normal(x_shape).astype(dtype)
        expected = ACTIVATIONS[activation](_product(w, value) + bias)
        expected = np.maximum(expected * (1 if scale is None else scale), 0)
        got = np.asarray(request.infer([value])[0])
        assert got.dtype == dtype and got.shape == expected.shape
        tolerance = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)


def test_only_constant_float_pointwise_filters_are_bound() -> None:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3, 1, 1)).astype(np.float32)
    bias = np.zeros((1, 4, 1, 1), np.float32)
    _, pointwise = _fused((1, 3, 5, 5), w, bias, "none")
    assert bind_convolution(pointwise, w) is not convolution_into
    assert bind_convolution(pointwise, None) is convolution_into  # filters computed at run time
    _, strided = _fused((1, 3, 5, 5), w, bias, "none", strides=[2, 1])
    assert not is_pointwise(strided, w) and bind_convolution(strided, w) is convolution_into
    w3 = rng.standard_normal((4, 3, 3, 1)).astype(np.float32)
    _, tall = _fused((1, 3, 5, 5), w3, bias, "none")
    assert not is_pointwise(tall, w3)
    grouped = rng.standard_normal((2, 2, 2, 1, 1)).astype(np.float32)
    _, two_groups = _fused((1, 4, 5, 5), grouped, bias, "none", grouped=True)
    assert not is_pointwise(two_groups, grouped)
    halves = w.astype(np.float16)
    _, half = _fused((1, 3, 5, 5), halves, bias.astype(np.float16), "none")
    assert bind_convolution(half, halves) is convolution_into


def test_a_bound_kernel_given_other_filters_computes_with_those() -> None:
    """The bound kernel defers to the general one when called with filters that are not its own."""
    rng = np.random.default_rng(1)
    w = rng.standard_normal((4, 3, 1, 1)).astype(np.float32)
    other = rng.standard_normal((4, 3, 1, 1)).astype(np.float32)
    bias = rng.standard_normal((1, 4, 1, 1)).astype(np.float32)
    _, node = _fused((2, 3, 4, 5), w, bias, "relu")
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    got = bind_convolution(node, w)(node, None, x, other, bias)
    expected = np.maximum(np.einsum("oc,nchw->nohw", other[:, :, 0, 0].astype(np.float64), x) + bias, 0)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
