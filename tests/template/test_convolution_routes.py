"""TEMPLATE's convolution routes (:mod:`template_plugin.convolution`: im2col GEMM, the taps' stacked GEMM,
depthwise batched GEMVs and row GEMMs, pointwise, live taps, channel blocks) against a direct convolution
(one einsum per kernel tap, :mod:`direct_convolution`), called directly with and without a workspace
lending NaN-filled buffers, and through a TEMPLATE request."""

from __future__ import annotations

import numpy as np
import pytest
from direct_convolution import direct_convolution
from hypothesis import given, settings
from hypothesis import strategies as st
from nan_workspace import NanWorkspace

import hetero_sdk as hs
from hetero_sdk import opset
from template_plugin import convolution as routes


@st.composite
def conv_cases(draw):
    rank = draw(st.sampled_from([1, 2, 2, 3]))
    kind = draw(st.sampled_from(["dense", "wide", "depthwise", "grouped", "pointwise"]))
    groups = {"dense": 1, "wide": 1, "pointwise": 1, "grouped": 2}.get(kind, draw(st.integers(2, 5)))
    c_in = draw(st.integers(16, 20)) if kind == "wide" else draw(st.integers(1, 3)) * groups
    if kind == "depthwise":
        c_in = groups
    out_channels = groups * draw(st.integers(1, 3)) if kind != "wide" else draw(st.integers(1, 16))
    kernel = [1] * rank if kind == "pointwise" else [draw(st.integers(1, 3)) for _ in range(rank)]
    size = [draw(st.integers(kernel[i] + 2, 9 if rank < 3 else 6)) for i in range(rank)]
    strides = [1] * rank if kind == "wide" else [draw(st.integers(1, 2)) for _ in range(rank)]
    dilations = [draw(st.integers(1, 2)) for _ in range(rank)]
    pads = [0] * rank if kind == "pointwise" else [draw(st.integers(0, 2)) for _ in range(rank)]
    batch = draw(st.integers(1, 2))
    return batch, c_in, out_channels, groups, kernel, size, strides, dilations, pads, draw(st.integers(0, 2**16))


def _run_routes(conv, x):
    """TEMPLATE's :func:`~template_plugin.convolution.grouped_convolution` of the node ``conv`` on ``x``,
    with fresh arrays; the same with a workspace lending NaN-filled buffers must give the same values."""
    w = conv.input_value(1).node.attrs["value"]
    w = w if conv.type_name == "GroupConvolution" else w[np.newaxis]
    fresh = np.ascontiguousarray(routes.grouped_convolution(conv, x, w))
    lent = np.ascontiguousarray(routes.grouped_convolution(conv, x, w, NanWorkspace()))
    np.testing.assert_array_equal(lent, fresh)
    return fresh


@settings(max_examples=60, deadline=None)
def _check_against_direct_convolution(x, w, groups, strides, pads, dilations) -> None:
    """TEMPLATE's (group) convolution of ``x`` by ``w`` against :func:`direct_convolution`."""
    out_channels = w.shape[0]
    data = opset.parameter(list(x.shape), name="x")
    if groups == 1:
        conv = opset.convolution(data, w, strides, pads, pads, dilations)
    else:
        grouped = w.reshape(groups, out_channels // groups, *w.shape[1:])
        conv = opset.group_convolution(data, grouped, strides, pads, pads, dilations)
    result = _run_routes(conv, x)
    expected = direct_convolution(x, w, groups, strides, pads, dilations)
    np.testing.assert_allclose(result, expected, rtol=2e-5, atol=2e-5)


@given(case=conv_cases())
def test_every_convolution_path_matches_a_direct_convolution(case) -> None:
    batch, c_in, out_channels, groups, kernel, size, strides, dilations, pads, seed = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, c_in, *size)).astype(np.float32)
    w = rng.standard_normal((out_channels, c_in // groups, *kernel)).astype(np.float32)
    _check_against_direct_convolution(x, w, groups, strides, pads, dilations)


@settings(max_examples=60, deadline=None)
@given(
    rank=st.sampled_from([2, 2, 3]),
    width=st.integers(4, 7),
    multiplier=st.sampled_from([1, 1, 2]),
    data=st.data(),
    seed=st.integers(0, 2**16),
)
def test_wide_depthwise_kernels_match_a_direct_convolution(rank, width, multiplier, data, seed) -> None:
    """Depthwise kernels 4+ taps wide (the 5x5 layers of mobile networks) take per-row columns and one GEMM
    per channel: every kernel shape, stride (but the last), dilation, pad and channel multiplier."""
    kernel = [data.draw(st.integers(1, 5)) for _ in range(rank - 1)] + [width]
    dilations = [data.draw(st.integers(1, 2)) for _ in range(rank)]
    strides = [data.draw(st.integers(1, 2)) for _ in range(rank - 1)] + [1]
    pads = [data.draw(st.integers(0, k // 2 + 1)) for k in kernel]
    extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    size = [max(1, e - 2 * p) + data.draw(st.integers(0, 4)) for e, p in zip(extent, pads)]
    groups = data.draw(st.integers(1, 40 if rank == 2 else 6))
    batch = data.draw(st.integers(1, 2))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, groups, *size)).astype(np.float32)
    w = rng.standard_normal((groups * multiplier, 1, *kernel)).astype(np.float32)
    data_node = opset.parameter(list(x.shape), name="x")
    conv = opset.group_convolution(data_node, w.reshape(groups, multiplier, 1, *kernel), strides, pads, pads, dilations)
    result = _run_routes(conv, x)
    expected = direct_convolution(x, w, groups, strides, pads, dilations)
    np.testing.assert_allclose(result, expected, rtol=2e-5, atol=2e-5)


@settings(max_examples=60, deadline=None)
@given(
    rank=st.sampled_from([1, 2, 2, 3]),
    kind=st.sampled_from(["dense", "depthwise", "grouped"]),
    data=st.data(),
    seed=st.integers(0, 2**16),
)
def test_kernels_wider_than_a_small_padded_plane_match_a_direct_convolution(rank, kind, data, seed) -> None:
    """Planes of 1-3 pixels under 3-7 tap kernels padded by up to 3 (the 5x5 layers of a classifier whose
    rows are down to 2): the taps that read padding only for every output are left out, pads shrunk."""
    kernel = [data.draw(st.integers(3, 7)) for _ in range(rank)]
    dilations = [data.draw(st.sampled_from([1, 1, 2])) for _ in range(rank)]
    strides = [data.draw(st.integers(1, 2)) for _ in range(rank)]
    pads = [data.draw(st.integers(0, 3)) for _ in range(rank)]
    extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    size = [max(data.draw(st.integers(1, 3)), e - 2 * p) for e, p in zip(extent, pads)]
    groups = {"dense": 1, "grouped": 2, "depthwise": data.draw(st.integers(2, 6))}[kind]
    c_in = groups if kind == "depthwise" else groups * data.draw(st.integers(1, 3))
    out_channels = groups * data.draw(st.integers(1, 2))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((data.draw(st.integers(1, 2)), c_in, *size)).astype(np.float32)
    w = rng.standard_normal((out_channels, c_in // groups, *kernel)).astype(np.float32)
    _check_against_direct_convolution(x, w, groups, strides, pads, dilations)


def test_a_large_depthwise_plane_matches_a_direct_convolution() -> None:
    """A plane whose columns fill more than one channel block, and a small one."""
    rng = np.random.default_rng(3)
    for size in (70, 20):
        x = rng.standard_normal((1, 3, size, size)).astype(np.float32)
        w = rng.standard_normal((3, 1, 3, 3)).astype(np.float32)
        data = opset.parameter(list(x.shape), name="x")
        conv = opset.group_convolution(data, w.reshape(3, 1, 1, 3, 3), [1, 1], [1, 1], [1, 1], [1, 1])
        result = _run_routes(conv, x)
        np.testing.assert_allclose(result, direct_convolution(x, w, 3, [1, 1], [1, 1], [1, 1]), rtol=1e-5, atol=1e-5)


@settings(max_examples=30, deadline=None)
@given(
    channels=st.integers(2, 9), multiplier=st.integers(1, 2), block_bytes=st.sampled_from([1, 300, 2000, 1 << 21]),
    stride=st.integers(1, 2), batch=st.integers(1, 3), seed=st.integers(0, 2**16),
)  # fmt: skip
def test_depthwise_channel_blocks_of_any_size_match_a_direct_convolution(
    channels, multiplier, block_bytes, stride, batch, seed
) -> None:
    """The depthwise columns filled a block of channels at a time: one channel per block, a partial
    last block, every channel in one block."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, channels, 9, 7)).astype(np.float32)
    w = rng.standard_normal((channels * multiplier, 1, 3, 3)).astype(np.float32)
    data = opset.parameter(list(x.shape), name="x")
    grouped = w.reshape(channels, multiplier, 1, 3, 3)
    conv = opset.group_convolution(data, grouped, [stride, stride], [1, 1], [1, 1], [1, 1])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(routes, "_COLUMN_BLOCK", block_bytes)
        result = _run_routes(conv, x)
    expected = direct_convolution(x, w, channels, [stride, stride], [1, 1], [1, 1])
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)


@settings(max_examples=40, deadline=None)
@given(
    rank=st.sampled_from([1, 2, 2, 3]),
    c_in=st.integers(16, 20),
    out_channels=st.integers(1, 16),
    data=st.data(),
    seed=st.integers(0, 2**16),
)
def test_the_stacked_tap_gemm_with_lent_buffers_matches_a_direct_convolution(rank, c_in, out_channels, data, seed):
    """More inputs than outputs at stride 1 (the taps' stacked GEMM) with a workspace lending its
    buffers: called directly with NaN-filled buffers, and twice on one TEMPLATE request (the arena's)."""
    kernel = [data.draw(st.integers(1, 3)) for _ in range(rank)]
    if all(k == 1 for k in kernel):
        kernel[0] = 2
    dilations = [data.draw(st.integers(1, 2)) for _ in range(rank)]
    size = [data.draw(st.integers((k - 1) * d + 1, 9 if rank < 3 else 6)) for k, d in zip(kernel, dilations)]
    pads = [data.draw(st.integers(0, 2)) for _ in range(rank)]
    batch = data.draw(st.integers(1, 2))
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((out_channels, c_in, *kernel)).astype(np.float32)
    param = opset.parameter([batch, c_in, *size], name="x")
    conv = opset.convolution(param, w, [1] * rank, pads, pads, dilations)
    x = rng.standard_normal((batch, c_in, *size)).astype(np.float32)
    expected = direct_convolution(x, w, 1, [1] * rank, pads, dilations)
    direct = routes.grouped_convolution(conv, x, w[np.newaxis], NanWorkspace())
    np.testing.assert_allclose(direct, expected, rtol=2e-5, atol=2e-5)
    request = hs.Core().compile_model(hs.Model([opset.relu(conv)], [param]), "TEMPLATE").create_infer_request()
    for _ in range(2):
        x = rng.standard_normal((batch, c_in, *size)).astype(np.float32)
        expected = np.maximum(direct_convolution(x, w, 1, [1] * rank, pads, dilations), 0)
        np.testing.assert_allclose(np.asarray(request.infer([x])[0]), expected, rtol=2e-5, atol=2e-5)
