"""XLA runs statically quantized (QDQ) convolutions in integers: QuantizeLinear -> DequantizeLinear ->
Conv with a DequantizeLinear'd i8 filter becomes one ``XlaQuantizedConvolution`` (an i8 dot
accumulating in i32), whose values are the quantized convolution's (numpy here: integer levels
convolved exactly, times the scales) up to f32 rounding, as the float path's are."""

from __future__ import annotations

from unittest import mock

import jax.numpy as jnp
import numpy as np
import onnx
import pytest
from hetero_sdk import Node, Type, opset
from hetero_sdk.frontend.onnx import convert_onnx
from hetero_sdk.graph.limits import FOLDED_ELEMENTS
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper, numpy_helper
from xla_helpers import OPS, core

import hetero_sdk_jax.quantized_convolution as quantized
from hetero_sdk_jax.lowering.graph import WEIGHT_BYTES
from hetero_sdk_jax.lowering.quantization import prepare as prepare_filter
from hetero_sdk_jax.lowering.quantization import quantized_convolution as lowered_quantized_convolution
from hetero_sdk_jax.lowering.quantization import row_products, shifted_products
from hetero_sdk_jax.quantized_convolution import (
    QUANTIZED_CONVOLUTION,
    QUANTIZED_CONVOLUTION_OP,
    quantized_convolution,
)
from hetero_sdk_jax.transformations import DISABLE_TRANSFORMATIONS


def _qdq_conv(
    shape: list[int], levels: np.ndarray, w_scale: np.ndarray, x_scale: float, zero: int, dtype: type,
    bias: np.ndarray, strides: list[int], pads: list[int], dilations: list[int],
) -> onnx.ModelProto:  # fmt: skip
    """x -> QuantizeLinear -> DequantizeLinear -> Conv(W = DequantizeLinear(levels, w_scale, axis 0), bias)."""
    inits = [
        numpy_helper.from_array(np.array(x_scale, np.float32), "s"),
        numpy_helper.from_array(np.array(zero, dtype), "zp"),
        numpy_helper.from_array(levels, "wq"),
        numpy_helper.from_array(w_scale, "ws"),
        numpy_helper.from_array(bias, "b"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
        helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["d"]),
        helper.make_node("DequantizeLinear", ["wq", "ws"], ["w"], axis=0),
        helper.make_node("Conv", ["d", "w", "b"], ["y"], strides=strides, pads=pads, dilations=dilations),
    ]
    graph = helper.make_graph(nodes, "qdq_conv", [helper.make_tensor_value_info("x", 1, shape)],
                              [helper.make_tensor_value_info("y", 1, ["n", "o", "h", "w"])], inits)  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def _expected(
    x: np.ndarray, levels: np.ndarray, w_scale: np.ndarray, x_scale: float, zero: int, dtype: type,
    bias: np.ndarray, strides: list[int], pads: list[int], dilations: list[int],
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The quantized convolution written out: levels less the zero point, zero-padded, convolved in
    i64 (exact), times ``x_scale * w_scale``, plus the bias; and the same with absolute values (the
    size of the rounding the float path may make)."""
    info = np.iinfo(dtype)
    q = np.clip(np.round(x / np.float32(x_scale)) + zero, info.min, info.max).astype(np.int64) - zero
    rank = x.ndim - 2
    q = np.pad(q, [(0, 0), (0, 0), *zip(pads[:rank], pads[rank:])])
    kernel = levels.shape[2:]
    out = [(q.shape[2 + i] - (kernel[i] - 1) * dilations[i] - 1) // strides[i] + 1 for i in range(rank)]
    sums = np.zeros((x.shape[0], levels.shape[0], *out), np.int64)
    magnitude = np.zeros(sums.shape, np.int64)
    for tap in np.ndindex(*kernel):
        window = tuple(slice(t * d, t * d + (o - 1) * s + 1, s) for t, d, o, s in zip(tap, dilations, out, strides))
        part = q[(slice(None), slice(None), *window)]
        w = levels[(slice(None), slice(None), *tap)].astype(np.int64)
        sums += np.einsum("nc...,oc->no...", part, w)
        magnitude += np.einsum("nc...,oc->no...", np.abs(part), np.abs(w))
    scale = (np.float64(x_scale) * w_scale.astype(np.float64)).reshape(-1, *[1] * rank)
    return sums * scale + bias.reshape(-1, *[1] * rank), magnitude * scale


@OPS
@given(
    channels=st.sampled_from([3, 8, 24, 40]),
    outputs=st.sampled_from([3, 32, 40]),
    kernel=st.sampled_from([1, 3]),
    stride=st.sampled_from([1, 2]),
    pad=st.integers(0, 2),
    dilation=st.sampled_from([1, 2]),
    unsigned=st.booleans(),
    per_channel=st.booleans(),
    data=st.data(),
)
def test_quantized_convolution_values(
    channels: int, outputs: int, kernel: int, stride: int, pad: int, dilation: int, unsigned: bool,
    per_channel: bool, data: st.DataObject,
) -> None:  # fmt: skip
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    dtype = np.uint8 if unsigned else np.int8
    zero = int(rng.integers(0, 256)) if unsigned else int(rng.integers(-20, 21))
    shape = [2, channels, 9, 11]
    # levels (some beyond the type's range) plus at most 0.4 of a level: no rounding tie, which XLA's
    # division by the scale (a multiply by its reciprocal) may round the other way
    x = ((rng.integers(-150, 300, shape) + rng.uniform(-0.4, 0.4, shape)) * 0.37).astype(np.float32)
    levels = rng.integers(-128, 128, (outputs, channels, kernel, kernel)).astype(np.int8)
    w_scale = (rng.uniform(0.001, 0.1, outputs if per_channel else 1)).astype(np.float32)
    bias = rng.normal(size=outputs).astype(np.float32)
    geometry = ([stride] * 2, [pad] * 4, [dilation] * 2)
    proto = _qdq_conv(
        shape, levels, w_scale if per_channel else w_scale.reshape(()), 0.37, zero, dtype, bias, *geometry
    )
    model = convert_onnx(proto)
    with mock.patch.object(quantized, "_pays", lambda kernel, spatial: True):  # small layers too
        compiled = core().compile_model(model, "XLA")
    fused = [n for n in compiled.get_runtime_model().get_ops() if n.type_name == QUANTIZED_CONVOLUTION]
    assert len(fused) == 1
    # the QuantizeLinear's clamped f32 levels, not its saturating Convert (the lowering converts them)
    assert fused[0].input_value(0).element_type == Type.f32
    (got,) = compiled([x]).to_tuple()
    expected, magnitude = _expected(x, levels, np.broadcast_to(w_scale, (outputs,)), 0.37, zero, dtype, bias, *geometry)
    assert got.dtype == np.float32 and got.shape == expected.shape
    # f32 roundings: each product and partial sum of the float path, the final scaling of the integer one
    bound = (channels * kernel * kernel + 4) * 2.0**-23 * magnitude + 1e-6 * np.abs(expected) + 1e-6
    np.testing.assert_array_less(np.abs(got - expected), bound)
    (float_path,) = core().compile_model(convert_onnx(proto), "XLA", {DISABLE_TRANSFORMATIONS: True})([x]).to_tuple()
    np.testing.assert_array_less(np.abs(got - float_path), 2 * bound)


@pytest.mark.parametrize(
    ("channels", "outputs", "kernel", "size", "fused"),
    [
        (12, 32, 1, 8, True),
        (8, 32, 1, 24, False),
        (32, 16, 1, 24, False),
        (96, 32, 1, 1, False),
        (16, 16, 3, 4, True),
        (8, 32, 3, 24, False),
        (64, 8, 3, 16, False),
    ],
)
def test_integers_only_where_they_measured_faster(
    channels: int, outputs: int, kernel: int, size: int, fused: bool
) -> None:
    """Enough input and output channels (more input channels for kernels above 1x1) and more than one
    position, see the module."""
    rng = np.random.default_rng(0)
    levels = rng.integers(-128, 128, (outputs, channels, kernel, kernel)).astype(np.int8)
    scale, bias = np.array(0.01, np.float32), np.zeros(outputs, np.float32)
    pads = [kernel // 2] * 4
    proto = _qdq_conv([1, channels, size, size], levels, scale, 0.5, 0, np.int8, bias, [1, 1], pads, [1, 1])
    compiled = core().compile_model(convert_onnx(proto), "XLA")
    assert (QUANTIZED_CONVOLUTION in [n.type_name for n in compiled.get_runtime_model().get_ops()]) == fused


def test_filters_beyond_the_folding_limit_are_read() -> None:
    """A filter of more elements than constant folding computes while building (128x128x3x3, YOLOv8n's;
    with a weight zero point) runs in integers, with the quantized convolution's values."""
    rng = np.random.default_rng(2)
    stored = rng.integers(-128, 123, (128, 128, 3, 3)).astype(np.int8)
    assert stored.size > FOLDED_ELEMENTS.value
    proto = _qdq_conv([1, 128, 6, 6], stored, np.array(0.002, np.float32), 0.5, 3, np.uint8,
                      np.zeros(128, np.float32), [1, 1], [1] * 4, [1, 1])  # fmt: skip
    zero_point = numpy_helper.from_array(np.array(-5, np.int8), "wzp")
    proto.graph.initializer.append(zero_point)
    proto.graph.node[2].input.append("wzp")  # DequantizeLinear(wq, ws, wzp)
    compiled = core().compile_model(convert_onnx(proto), "XLA")
    assert QUANTIZED_CONVOLUTION in [n.type_name for n in compiled.get_runtime_model().get_ops()]
    x = ((rng.integers(-3, 253, (1, 128, 6, 6)) + rng.uniform(-0.4, 0.4, (1, 128, 6, 6))) * 0.5).astype(np.float32)
    (got,) = compiled([x]).to_tuple()
    levels = stored.astype(np.int64) + 5  # the filter's levels less its zero point
    expected, magnitude = _expected(x, levels, np.full(128, 0.002, np.float32), 0.5, 3, np.uint8,
                                    np.zeros(128, np.float32), [1, 1], [1] * 4, [1, 1])  # fmt: skip
    np.testing.assert_array_less(np.abs(got - expected), (128 * 9 + 4) * 2.0**-23 * magnitude + 1e-6)


def test_not_fused_without_a_constant_filter() -> None:
    """A filter that is an input of the model keeps the float convolution."""
    rng = np.random.default_rng(0)
    levels = rng.integers(-128, 128, (32, 32, 1, 1)).astype(np.int8)
    scale, bias = np.array(0.01, np.float32), np.zeros(32, np.float32)
    proto = _qdq_conv([1, 32, 24, 24], levels, scale, 0.5, 0, np.int8, bias, [1, 1], [0] * 4, [1, 1])
    graph = proto.graph
    weight = next(i for i in graph.initializer if i.name == "wq")
    graph.initializer.remove(weight)
    graph.input.append(helper.make_tensor_value_info("wq", onnx.TensorProto.INT8, [32, 32, 1, 1]))
    compiled = core().compile_model(convert_onnx(proto), "XLA")
    assert QUANTIZED_CONVOLUTION not in [n.type_name for n in compiled.get_runtime_model().get_ops()]


@pytest.mark.parametrize("held_in_f32", [False, True])
@pytest.mark.parametrize("unsigned", [False, True])
def test_definition_matches_the_lowering(unsigned: bool, held_in_f32: bool) -> None:
    """The op's numpy definition (its reference kernel) and its XLA lowering on ``[N, C, ...]`` data
    (the graph's layout, where the interpreter does not hold the data channels-last) give the
    quantized convolution's values; levels held in f32 (a QuantizeLinear's clamped value) give the
    same, NaN read as level 0 (as a Convert to the levels' type makes it)."""
    rng = np.random.default_rng(1)
    dtype = np.uint8 if unsigned else np.int8
    x = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max + 1, (1, 5, 6, 7)).astype(dtype)
    w = rng.integers(-128, 128, (3, 5, 3, 3)).astype(np.int8)
    scale = np.array([0.5, 0.25, 2.0], np.float32)
    zero = np.array(7, dtype)
    expected, _ = _expected_levels(x, zero, w, scale)
    if held_in_f32:
        x = x.astype(np.float32)
        x[0, 1, 2, 3] = x[0, 4, 0, 0] = np.nan
        levels = np.nan_to_num(x, nan=0.0).astype(dtype)
        expected, _ = _expected_levels(levels, zero, w, scale)
    node = quantized_convolution(opset.parameter(x.shape, x.dtype).output(0), opset.constant(zero).output(0),
                                 opset.constant(w).output(0), opset.constant(scale).output(0),
                                 opset.constant(w.reshape(3, -1).sum(1, dtype=np.int32)).output(0),
                                 [1, 2], [1, 0], [2, 1], [1, 1])  # fmt: skip
    assert QUANTIZED_CONVOLUTION_OP.evaluate is not None
    sums = w.reshape(3, -1).sum(1, dtype=np.int32)
    np.testing.assert_allclose(QUANTIZED_CONVOLUTION_OP.evaluate(node, x, zero, w, scale, sums), expected, rtol=1e-6)
    lowered = lowered_quantized_convolution(node, jnp.asarray(x), zero, jnp.asarray(w), scale, sums)  # [N, C, ...]
    np.testing.assert_allclose(np.asarray(lowered), expected, rtol=1e-6)


def _expected_levels(x: np.ndarray, zero: np.ndarray, w: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, None]:
    """``conv(x - zero, w) * scale`` at strides (1, 2), pads (1, 2) before and (0, 1) after."""
    q = np.pad(x.astype(np.int64) - int(zero), [(0, 0), (0, 0), (1, 2), (0, 1)])
    out_h, out_w = q.shape[2] - 2, (q.shape[3] - 3) // 2 + 1
    y = np.zeros((1, 3, out_h, out_w), np.int64)
    for i, j in np.ndindex(3, 3):
        y += np.einsum("nchw,oc->nohw", q[:, :, i : i + out_h, j : j + 2 * (out_w - 1) + 1 : 2], w[:, :, i, j])
    return (y * scale.reshape(-1, 1, 1)).astype(np.float32), None


@settings(max_examples=40, deadline=None)
@given(
    rank=st.sampled_from([1, 2]),
    channels=st.integers(1, 6),
    outputs=st.integers(1, 5),
    kernel=st.lists(st.integers(1, 4), min_size=2, max_size=2),
    strides=st.lists(st.integers(1, 3), min_size=2, max_size=2),
    dilations=st.lists(st.integers(1, 2), min_size=2, max_size=2),
    pads=st.lists(st.integers(-1, 2), min_size=4, max_size=4),
    data=st.data(),
)
def test_both_forms_sum_the_taps_exactly(
    rank: int, channels: int, outputs: int, kernel: list[int], strides: list[int], dilations: list[int],
    pads: list[int], data: st.DataObject,
) -> None:  # fmt: skip
    """The shifted products and the gathered rows each give the integer convolution of i8 levels
    (numpy in i64 here: every window's products summed), any kernel, stride, dilation and pads
    (negative ones crop)."""
    kernel, strides, dilations = kernel[:rank], strides[:rank], dilations[:rank]
    padding = list(zip(pads[:rank], pads[2 : 2 + rank]))
    sizes = [
        data.draw(st.integers(max(1, (k - 1) * d + 1 - b - e), 9), label="size")
        for k, d, (b, e) in zip(kernel, dilations, padding)
    ]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    x = rng.integers(-128, 128, (2, *sizes, channels)).astype(np.int8)  # [N, ..., C]
    w = rng.integers(-128, 128, (outputs, channels, *kernel)).astype(np.int8)
    grown = np.pad(x.astype(np.int64), [(0, 0), *((max(b, 0), max(e, 0)) for b, e in padding), (0, 0)])
    grown = grown[
        (slice(None), *(slice(max(-b, 0), grown.shape[1 + i] - max(-e, 0)) for i, (b, e) in enumerate(padding)))
    ]
    out = [(n - (k - 1) * d - 1) // s + 1 for n, k, d, s in zip(grown.shape[1:-1], kernel, dilations, strides)]
    expected = np.zeros((2, *out, outputs), np.int64)
    for tap in np.ndindex(*kernel):
        window = tuple(slice(t * d, t * d + (o - 1) * s + 1, s) for t, d, o, s in zip(tap, dilations, out, strides))
        expected += np.einsum(
            "n...c,oc->n...o", grown[(slice(None), *window)], w[(slice(None), slice(None), *tap)].astype(np.int64)
        )
    padded = jnp.asarray(np.pad(x, [(0, 0), *((max(b, 0), max(e, 0)) for b, e in padding), (0, 0)]))
    for form in (shifted_products, row_products):
        got = np.asarray(form(padded, jnp.asarray(w), strides, padding, dilations))
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, expected, err_msg=form.__name__)


@pytest.mark.parametrize(("outputs", "channels"), [(6, 4), (2, 8)])  # the gathered rows, the shifted products
def test_strided_filters_are_arranged_at_compile_time(outputs: int, channels: int) -> None:
    """A constant filter read in several phases (3x3 at strides 2, 2) is arranged once by the lowering's
    ``prepare`` hook (one matrix, the phases' columns side by side), a one-phase filter is left to its
    layout; the lowering reading the arranged matrix gives the integer convolution (numpy in i64)."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, (1, channels, 9, 8)).astype(np.uint8)
    w = rng.integers(-128, 128, (outputs, channels, 3, 3)).astype(np.int8)
    w.flags.writeable = False  # as a Constant's value
    zero, scale = np.array(9, np.uint8), np.full(outputs, 0.5, np.float32)
    sums = w.reshape(outputs, -1).sum(1, dtype=np.int32)

    def node(strides: list[int]) -> Node:
        return quantized_convolution(opset.parameter(x.shape, x.dtype).output(0), opset.constant(zero).output(0),
                                     opset.constant(w).output(0), opset.constant(scale).output(0),
                                     opset.constant(sums).output(0), strides, [1, 1], [1, 0], [1, 1])  # fmt: skip

    assert prepare_filter(node([1, 1]), [None, None, w, None, None]) == {}
    strided = node([2, 2])
    prepared = prepare_filter(strided, [None, None, w, None, None])[2]
    assert prepared is not None and prepared.ndim == 2 and prepared.size == w.size
    assert prepare_filter(strided, [None, None, w, None, None])[2] is prepared  # one weight, made once
    q = np.pad(x.astype(np.int64) - 9, [(0, 0), (0, 0), (1, 1), (1, 0)])
    out_h, out_w = (q.shape[2] - 3) // 2 + 1, (q.shape[3] - 3) // 2 + 1
    expected = np.zeros((1, outputs, out_h, out_w), np.int64)
    for i, j in np.ndindex(3, 3):
        window = q[:, :, i : i + 2 * (out_h - 1) + 1 : 2, j : j + 2 * (out_w - 1) + 1 : 2]
        expected += np.einsum("nchw,oc->nohw", window, w[:, :, i, j].astype(np.int64))
    got = lowered_quantized_convolution(strided, jnp.asarray(x), zero, jnp.asarray(prepared), scale, sums)
    np.testing.assert_array_equal(np.asarray(got), (expected * 0.5).astype(np.float32))


def test_a_strided_weight_runs_arranged_and_survives_export() -> None:
    """A strided filter large enough to be a weight of the executable (128x64x3x3, above ``WEIGHT_BYTES``)
    is passed arranged (:func:`prepare`), gives the quantized convolution's values, and an exported then
    imported model gives the same results."""
    rng = np.random.default_rng(4)
    levels = rng.integers(-128, 128, (128, 64, 3, 3)).astype(np.int8)
    assert levels.nbytes >= WEIGHT_BYTES
    geometry = ([2, 2], [1] * 4, [1, 1])
    proto = _qdq_conv([1, 64, 9, 10], levels, np.array(0.003, np.float32), 0.5, 3, np.uint8,
                      np.zeros(128, np.float32), *geometry)  # fmt: skip
    compiled = core().compile_model(convert_onnx(proto), "XLA")
    assert QUANTIZED_CONVOLUTION in [n.type_name for n in compiled.get_runtime_model().get_ops()]
    x = ((rng.integers(-3, 253, (1, 64, 9, 10)) + rng.uniform(-0.4, 0.4, (1, 64, 9, 10))) * 0.5).astype(np.float32)
    (got,) = compiled([x]).to_tuple()
    expected, magnitude = _expected(x, levels, np.full(128, 0.003, np.float32), 0.5, 3, np.uint8,
                                    np.zeros(128, np.float32), *geometry)  # fmt: skip
    np.testing.assert_array_less(np.abs(got - expected), (64 * 9 + 4) * 2.0**-23 * magnitude + 1e-6)
    imported = core().import_model(compiled.export_model(), "XLA")
    np.testing.assert_array_equal(imported([x]).to_tuple()[0], got)
