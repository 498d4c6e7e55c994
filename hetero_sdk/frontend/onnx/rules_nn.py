"""Rules for ONNX's neural-network ops: convolutions, matrix products, softmax (resizing and grid
sampling are in :mod:`.rules_image`, top-k, arg-max and non-max suppression in :mod:`.rules_detection`,
batch, instance and layer normalization in :mod:`.rules_normalization`, max, average and global pooling
in :mod:`.rules_pooling`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.graph.limits import CONSTANT_ELEMENTS
from hetero_sdk.graph.node import Output

__all__ = ["channel_bias", "checked_group", "convolve", "window_attrs"]

_I64 = np.int64
_AUTO_PAD = {"NOTSET": "explicit", "SAME_UPPER": "same_upper", "SAME_LOWER": "same_lower", "VALID": "valid"}


def _out(node: object, index: int = 0) -> Output:
    return node.output(index)  # type: ignore[attr-defined, no-any-return]


def window_attrs(ctx: NodeContext, spatial: int) -> dict[str, Any]:
    """The strides, pads, dilations and auto_pad of a convolution or pooling node."""
    pads = ctx.attr("pads", [0] * 2 * spatial)
    if any(p < 0 for p in pads):  # ONNX Runtime refuses them too; the op would crop
        raise ctx.error(f"pads {pads} are negative", "pads add zeros around the input and must be 0 or more")
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    if auto_pad not in _AUTO_PAD:
        raise ctx.error(f"auto_pad must be one of {', '.join(_AUTO_PAD)}, not '{auto_pad}'")
    return {
        "strides": ctx.attr("strides", [1] * spatial),
        "pads_begin": pads[:spatial],
        "pads_end": pads[spatial:],
        "dilations": ctx.attr("dilations", [1] * spatial),
        "auto_pad": _AUTO_PAD[auto_pad],
    }


def channel_bias(ctx: NodeContext, y: Output, bias: Output | None) -> Output:
    """``y + bias`` with a per-channel ``bias`` of shape ``[C]`` (axis 1 of ``y``)."""
    if bias is None:
        return y
    shape = [1, -1] + [1] * (y.partial_shape.rank - 2)
    return _out(opset.add(y, opset.reshape(bias, ctx.const(shape, _I64), special_zero=False)))


def convolve(ctx: NodeContext, x: Output, w: Output) -> Output:
    """``x`` convolved with ``w`` as the node's attributes say (pads, strides, dilations, group): Conv
    without its bias, shared with ConvInteger and QLinearConv."""
    spatial = x.partial_shape.rank - 2
    window = window_attrs(ctx, spatial)
    group = checked_group(ctx, x, w)
    if group == 1:
        y = _out(opset.convolution(x, w, **window))
    else:
        dims = w.partial_shape.dims
        if dims[0] < 0:
            raise ctx.unsupported("a grouped convolution with a dynamic number of filters")
        grouped = opset.reshape(w, ctx.const([group, dims[0] // group, *dims[1:]], _I64), special_zero=False)
        y = _out(opset.group_convolution(x, grouped, **window))
    return y


def checked_group(ctx: NodeContext, x: Output, w: Output) -> int:
    """A convolution's ``group``: at least 1, and dividing the input channels and the weights' first
    dim where they are static (filters for Conv, input channels for ConvTranspose)."""
    group = ctx.attr("group", 1)
    if group < 1:
        raise ctx.error(f"group is {group}", "group counts channel groups and must be 1 or more")
    for what, size in (("input channels", x.partial_shape[1]), ("weights' first dim", w.partial_shape[0])):
        if size >= 0 and size % group:
            raise ctx.error(f"group {group} does not divide the {size} {what}", "use a group that divides both")
    return int(group)


@rule("Conv")
def conv(ctx: NodeContext) -> Outputs:
    w = ctx.input(1)
    x = ctx.input_of_rank(0, w.partial_shape.rank)
    return [channel_bias(ctx, convolve(ctx, x, w), ctx.optional_input(2))]


@rule("ConvTranspose")
def conv_transpose(ctx: NodeContext) -> Outputs:
    x, w = ctx.input(0), ctx.input(1)
    spatial = x.partial_shape.rank - 2
    window = window_attrs(ctx, spatial)
    output_shape = ctx.attr("output_shape", None)
    output_padding = ctx.attr("output_padding", [0] * spatial)
    if output_shape is not None:
        # ONNX crops total_padding // 2 elements at the start for SAME_UPPER, the rest (the odd one
        # included) for every other auto_pad; the op's same_lower and same_upper crop exactly those
        upper = window["auto_pad"] == "same_upper"
        window = {**window, "auto_pad": "same_lower" if upper else "same_upper"}
    elif window["auto_pad"] in ("same_upper", "same_lower"):
        window = _same_transposed_pads(ctx, x, w, window, output_padding)
    group = checked_group(ctx, x, w)
    # groups: each slice of input channels with its slice of filters, the results side by side
    xs = [x] if group == 1 else [_out(opset.split(x, ctx.const(1, _I64), group), i) for i in range(group)]
    ws = [w] if group == 1 else [_out(opset.split(w, ctx.const(0, _I64), group), i) for i in range(group)]
    parts = [
        _out(
            opset.convolution_backprop_data(
                xg,
                wg,
                output_shape=None if output_shape is None else ctx.const(output_shape[-spatial:], _I64),
                output_padding=output_padding,
                **window,
            )
        )
        for xg, wg in zip(xs, ws)
    ]
    y = parts[0] if group == 1 else _out(opset.concat(parts, 1))
    return [channel_bias(ctx, y, ctx.optional_input(2))]


def _same_transposed_pads(
    ctx: NodeContext,
    x: Output,
    w: Output,
    window: dict[str, object],
    output_padding: list[int],
) -> dict[str, object]:
    """ConvTranspose's SAME padding without ``output_shape`` as explicit pads, by ONNX's formula: the
    output is ``input * stride``, the total padding split with the odd one at the end (SAME_UPPER) or
    the start (SAME_LOWER). Needs static spatial input and kernel sizes."""
    inputs, kernel = x.partial_shape.dims[2:], w.partial_shape.dims[2:]
    if any(d < 0 for d in (*inputs, *kernel)):
        raise ctx.unsupported("auto_pad SAME with dynamic spatial input or kernel sizes")
    strides: list[int] = window["strides"]  # type: ignore[assignment]
    dilations: list[int] = window["dilations"]  # type: ignore[assignment]
    wanted = [d * s for d, s in zip(inputs, strides)]
    begins, ends = [], []
    for size, k, stride, dilation, extra, out in zip(inputs, kernel, strides, dilations, output_padding, wanted):
        total = max(stride * (size - 1) + extra + (k - 1) * dilation + 1 - out, 0)
        small, large = total // 2, total - total // 2
        begins.append(small if window["auto_pad"] == "same_upper" else large)
        ends.append(large if window["auto_pad"] == "same_upper" else small)
    return {**window, "pads_begin": begins, "pads_end": ends, "auto_pad": "explicit"}


def _like(ctx: NodeContext, value: float, x: Output) -> Output:
    return ctx.const(np.array(value, dtype=x.element_type.numpy))


def _lp_sum(ctx: NodeContext, x: Output, p: float) -> Output:
    """``|x| ** p``, without a Power where p is 1 or 2 (exact, and cheaper)."""
    if p == 1:
        return _out(opset.abs(x))
    if p == 2:
        return _out(opset.multiply(x, x))
    return _out(opset.power(opset.abs(x), _like(ctx, p, x)))


def _lp_root(ctx: NodeContext, total: Output, p: float) -> Output:
    if p == 1:
        return total
    if p == 2:
        return _out(opset.sqrt(total))
    return _out(opset.power(total, _like(ctx, 1 / p, total)))


@rule("LpPool")
def lp_pool(ctx: NodeContext) -> Outputs:
    """The p-norm of each window: the window's mean of ``|x| ** p`` (padding counted), times its size,
    to the power ``1 / p``."""
    x = ctx.input(0)
    spatial = x.partial_shape.rank - 2
    window = window_attrs(ctx, spatial)
    dilations = window.pop("dilations")
    if ctx.flag("ceil_mode", False):  # a window past the end would average over fewer elements
        raise ctx.unsupported("LpPool with ceil_mode=1")
    p = float(ctx.attr("p", 2))
    if p <= 0:
        raise ctx.error(f"p must be positive, not {p}")
    kernel = ctx.attr("kernel_shape")
    if any(d != 1 for d in dilations):  # type: ignore[attr-defined]
        # OpenVINO's AvgPool has no dilations: window sums as a depthwise convolution with ones
        channels = x.partial_shape[1]
        if channels < 0 or window["auto_pad"] != "explicit":
            raise ctx.unsupported("a dilated LpPool with a dynamic channel count or auto_pad")
        CONSTANT_ELEMENTS.check(channels * math.prod(kernel), f"a window of ones {kernel}", ctx.error)
        ones = ctx.const(np.ones([channels, 1, 1, *kernel], x.element_type.numpy))
        begin, end, strides = window["pads_begin"], window["pads_end"], window["strides"]
        total = _out(opset.group_convolution(_lp_sum(ctx, x, p), ones, strides, begin, end, dilations))  # type: ignore[arg-type]
        return [_lp_root(ctx, total, p)]
    mean = opset.avg_pool(_lp_sum(ctx, x, p), kernel_shape=kernel, exclude_pad=False, **window)
    total = _out(opset.multiply(mean, _like(ctx, float(np.prod(kernel)), x)))
    return [_lp_root(ctx, total, p)]


@rule("LpNormalization")
def lp_normalization(ctx: NodeContext) -> Outputs:
    """``x`` divided by its L1 or L2 norm along ``axis``; 0 where the norm is 0 (ONNX's reference)."""
    x = ctx.input(0)
    p = ctx.attr("p", 2)
    if p not in (1, 2):
        raise ctx.error(f"p must be 1 or 2, not {p}")
    axis = ctx.axis("axis", -1, x.partial_shape.rank)
    norm = _lp_root(ctx, _out(opset.reduce_sum(_lp_sum(ctx, x, p), ctx.const([axis], _I64), keep_dims=True)), p)
    zero = _like(ctx, 0, norm)
    return [_out(opset.select(opset.equal(norm, zero), zero, opset.divide(x, norm)))]


@rule("LRN")
def lrn(ctx: NodeContext) -> Outputs:
    node = opset.lrn(
        ctx.input(0),
        ctx.const([1], _I64),
        alpha=ctx.attr("alpha", 0.0001),
        beta=ctx.attr("beta", 0.75),
        bias=ctx.attr("bias", 1.0),
        size=ctx.attr("size"),
    )
    return [_out(node)]


@rule("MatMul")
def matmul(ctx: NodeContext) -> Outputs:
    return [_out(opset.matmul(ctx.input(0), ctx.input(1)))]


@rule("Gemm")
def gemm(ctx: NodeContext) -> Outputs:
    a, b = ctx.input(0), ctx.input(1)
    y = _out(opset.matmul(a, b, transpose_a=ctx.flag("transA", False), transpose_b=ctx.flag("transB", False)))
    alpha, beta = ctx.attr("alpha", 1.0), ctx.attr("beta", 1.0)
    if alpha != 1.0:
        y = _out(opset.multiply(y, ctx.const(alpha, y.element_type)))
    c = ctx.optional_input(2)
    if c is not None and beta != 0.0:
        if beta != 1.0:
            c = _out(opset.multiply(c, ctx.const(beta, c.element_type)))
        y = _out(opset.add(y, c))
    return [y]


@rule("Softmax", "LogSoftmax")
def softmax_1(ctx: NodeContext) -> Outputs:
    """Before opset 13 the input is seen as 2-D: the axes from ``axis`` on are normalized together."""
    x = ctx.input(0)
    rank = x.partial_shape.rank
    axis = ctx.axis("axis", 1, rank)
    factory = opset.softmax if ctx.op_type == "Softmax" else opset.log_softmax
    if axis == rank - 1:
        return [_out(factory(x, axis=axis))]
    flat = opset.reshape(x, ctx.const([0] * axis + [-1], _I64), special_zero=True)
    return [_out(opset.reshape(factory(flat, axis=axis), opset.shape_of(x), special_zero=False))]


@rule("Softmax", "LogSoftmax", since=13)
def softmax_13(ctx: NodeContext) -> Outputs:
    factory = opset.softmax if ctx.op_type == "Softmax" else opset.log_softmax
    return [_out(factory(ctx.input(0), axis=ctx.attr("axis", -1)))]


def _hardmax(ctx: NodeContext, x: Output, axis: int) -> Output:
    """1 at the first largest element along ``axis``, 0 elsewhere: TopK's index, one-hot."""
    rank = x.partial_shape.rank
    size = x.partial_shape.dims[axis]
    if size < 0:
        raise ctx.unsupported(f"a dynamic dimension on the Hardmax axis {axis} (of {x.partial_shape})")
    top = opset.topk(x, ctx.const(1, _I64), axis, "max", "value", index_element_type=Type.i64, stable=True)
    index = _out(top, 1)
    CONSTANT_ELEMENTS.check(size, f"the positions along axis {axis}", ctx.error)
    positions = np.arange(size, dtype=np.int64).reshape([size if d == axis else 1 for d in range(rank)])
    return _out(opset.convert(opset.equal(ctx.const(positions), index), x.element_type))


@rule("Hardmax")
def hardmax_1(ctx: NodeContext) -> Outputs:
    """Before opset 13 the input is seen as 2-D: the axes from ``axis`` on are one row."""
    x = ctx.input(0)
    rank = x.partial_shape.rank
    axis = ctx.axis("axis", 1, rank)
    if axis == rank - 1:
        return [_hardmax(ctx, x, axis)]
    flat = _out(opset.reshape(x, ctx.const([0] * axis + [-1], _I64), special_zero=True))
    return [_out(opset.reshape(_hardmax(ctx, flat, axis), opset.shape_of(x), special_zero=False))]


@rule("Hardmax", since=13)
def hardmax_13(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    return [_hardmax(ctx, x, ctx.axis("axis", -1, x.partial_shape.rank))]


@rule("Det", since=11)
def det(ctx: NodeContext) -> Outputs:
    return [_out(opset.det(ctx.input(0)))]


@rule("Einsum", since=12)
def einsum(ctx: NodeContext) -> Outputs:
    values = [ctx.input(i) for i in range(len(ctx.inputs))]
    return [_out(opset.einsum(values, ctx.attr("equation")))]
