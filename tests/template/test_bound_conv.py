"""TEMPLATE's TemplateConvolution bound to its constant filters against numpy written here: pointwise
ones (one matrix product per image into the request's arena), and every other one keeping the general
convolution's plan per input shape; and the convolutions left to the general kernel."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nan_workspace import NanWorkspace

import hetero_sdk as hs
from hetero_sdk import opset
from template_plugin.bound_conv import bind_convolution, is_pointwise
from template_plugin.fused_conv import convolution_into, fused_convolution
from template_plugin.plan_kernels import bind_plain_convolution

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


def test_only_constant_float_filters_are_bound() -> None:
    """Pointwise filters get the matrix-product kernel, other constant float filters a kernel keeping
    plans; filters computed at run time and f16 filters take the general kernel."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3, 1, 1)).astype(np.float32)
    bias = np.zeros((1, 4, 1, 1), np.float32)
    _, pointwise = _fused((1, 3, 5, 5), w, bias, "none")
    bound = bind_convolution(pointwise, w)
    assert bound is not convolution_into and not hasattr(bound, "plans")
    assert bind_convolution(pointwise, None) is convolution_into  # filters computed at run time
    _, strided = _fused((1, 3, 5, 5), w, bias, "none", strides=[2, 1])
    assert not is_pointwise(strided, w) and hasattr(bind_convolution(strided, w), "plans")
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


def _direct(x: np.ndarray, w: np.ndarray, strides, dilations, begin, end, groups: int) -> np.ndarray:
    """Every output as the sum over input channels of its group and over taps of filter times padded
    input, in float64 (``w`` [O, C / groups, k...], any spatial rank)."""
    rank = x.ndim - 2
    padded = np.pad(x.astype(np.float64), [(0, 0), (0, 0), *zip(begin, end)])
    kernel = w.shape[2:]
    out = [(padded.shape[2 + i] - (kernel[i] - 1) * dilations[i] - 1) // strides[i] + 1 for i in range(rank)]
    per_group_in, per_group_out = x.shape[1] // groups, w.shape[0] // groups
    result = np.zeros((x.shape[0], w.shape[0], *out))
    for o in range(w.shape[0]):
        group = o // per_group_out
        for c in range(per_group_in):
            for tap in np.ndindex(*kernel):
                window = tuple(
                    slice(t * d, t * d + (n - 1) * s + 1, s) for t, d, n, s in zip(tap, dilations, out, strides)
                )
                channel = padded[:, group * per_group_in + c][(slice(None), *window)]
                result[:, o] += channel * float(w[(o, c, *tap)])
    return result


@settings(max_examples=30, deadline=None)
@given(
    rank=st.integers(1, 2),
    batch=st.integers(1, 2),
    groups=st.sampled_from([1, 1, 2]),
    c_in=st.sampled_from([1, 3, 16, 18]),
    c_out=st.integers(1, 6),
    kernel=st.integers(1, 3),
    stride=st.integers(1, 2),
    dilation=st.integers(1, 2),
    pads=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    sides=st.lists(st.integers(1, 7), min_size=2, max_size=3),
    activation=st.sampled_from(sorted(ACTIVATIONS)),
    seed=st.integers(0, 2**16),
)
def test_a_convolution_keeping_its_plans_computes_the_direct_sum(
    rank, batch, groups, c_in, c_out, kernel, stride, dilation, pads, sides, activation, seed
) -> None:
    """Dense and grouped convolutions of rank 1 and 2 (every route of the general kernel: tap products
    for 16+ input channels at stride 1, im2col columns, strided pointwise), strides, dilations and pads,
    on a model with dynamic spatial sizes fed inputs of several sizes, then the first size again."""
    rng = np.random.default_rng(seed)
    c_in, c_out = c_in * groups, c_out * groups
    w = rng.standard_normal((c_out, c_in // groups) + (kernel,) * rank).astype(np.float32)
    bias = rng.standard_normal((1, c_out) + (1,) * rank).astype(np.float32)
    strides, dilations = [stride] * rank, [dilation] * rank
    begin, end = [pads[0]] * rank, [pads[1]] * rank
    x = opset.parameter([batch, c_in] + [-1] * rank, name="x")
    if groups == 1:
        conv = opset.convolution(x, w, strides, begin, end, dilations, name="conv")
        filters = w
    else:
        filters = w.reshape(groups, c_out // groups, *w.shape[1:])
        conv = opset.group_convolution(x, filters, strides, begin, end, dilations, name="conv")
    node = fused_convolution(conv, bias, activation, "fused")
    request = hs.Core().compile_model(hs.Model([opset.relu(node)], [x]), "TEMPLATE").create_infer_request()
    reach = (kernel - 1) * dilation + 1
    shapes = [(batch, c_in, *[max(side, reach) + i for i in range(rank)]) for side in sides]
    bound = bind_convolution(node, filters)
    for shape in [*shapes, shapes[0]]:
        value = rng.standard_normal(shape).astype(np.float32)
        expected = ACTIVATIONS[activation](_direct(value, w, strides, dilations, begin, end, groups) + bias)
        got = np.asarray(request.infer([value])[0])
        np.testing.assert_allclose(got, np.maximum(expected, 0), rtol=1e-4, atol=1e-4)
        direct = bound(node, NanWorkspace(), value, filters, bias)  # the bound kernel alone, its buffers NaN
        np.testing.assert_allclose(direct, expected, rtol=1e-4, atol=1e-4)
    if hasattr(bound, "plans"):  # (a 1-tap stride-1 unpadded layer is pointwise instead)
        info = bound.plans.cache_info()
        assert (info.misses, info.hits) == (len(set(shapes)), len(shapes) + 1 - len(set(shapes)))


@pytest.mark.parametrize("groups", [1, 2])
def test_a_plain_convolution_keeping_its_plans_computes_the_direct_sum(groups: int) -> None:
    """A Convolution or GroupConvolution without a bias (TEMPLATE does not fuse it: Silero VAD's STFT)
    keeps its plan per input shape: a strided 1-D layer on inputs of three lengths, then the first again."""
    rng = np.random.default_rng(groups)
    w = rng.standard_normal((6, 4 // groups, 5)).astype(np.float32)
    x = opset.parameter([2, 4, -1], name="x")
    if groups == 1:
        filters, conv = w, opset.convolution(x, w, [2], [1], [2], [1], name="conv")
    else:
        filters = w.reshape(groups, 6 // groups, *w.shape[1:])
        conv = opset.group_convolution(x, filters, [2], [1], [2], [1], name="conv")
    compiled = hs.Core().compile_model(hs.Model([opset.relu(conv)], [x]), "TEMPLATE")
    assert conv.type_name in {n.type_name for n in compiled.get_runtime_model().get_ops()}  # left unfused
    request = compiled.create_infer_request()
    kernel = bind_plain_convolution(conv, filters)
    for length in (9, 16, 5, 9):
        value = rng.standard_normal((2, 4, length)).astype(np.float32)
        expected = _direct(value, w, [2], [1], [1], [2], groups)
        np.testing.assert_allclose(request.infer([value])[0], np.maximum(expected, 0), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(kernel(conv, NanWorkspace(), value, filters), expected, rtol=1e-4, atol=1e-4)
    info = kernel.plans.cache_info()
    assert (info.misses, info.hits) == (3, 1)


def test_plans_for_many_input_shapes_share_one_copy_of_the_rearranged_filters() -> None:
    """A stride-1 layer with 16 input channels (its filters stacked per tap) fed three sizes keeps three
    plans and one stacked copy of its filters; a 1-row input, whose live taps drop the kernel's first and
    last rows, keeps a copy of its own."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 16, 3, 3)).astype(np.float32)
    bias = np.zeros((1, 4, 1, 1), np.float32)
    x = opset.parameter([1, 16, -1, -1], name="x")
    node = fused_convolution(opset.convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1], name="conv"), bias)
    kernel = bind_convolution(node, w)
    shapes = [(1, 16, 5, 6), (1, 16, 7, 4), (1, 16, 6, 6), (1, 16, 1, 6)]
    for shape in shapes:
        value = rng.standard_normal(shape).astype(np.float32)
        expected = _direct(value, w, [1, 1], [1, 1], [1, 1], [1, 1], 1)
        np.testing.assert_allclose(kernel(node, NanWorkspace(), value, w, bias), expected, rtol=1e-4, atol=1e-4)
    weights = [kernel.plans(node, shape).weights for shape in shapes]
    assert weights[0] is weights[1] is weights[2] and weights[3] is not weights[0]
    assert weights[3].shape[0] < weights[0].shape[0]  # fewer taps stacked
