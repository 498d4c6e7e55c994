"""Rules for ONNX's convolutions: Conv, ConvTranspose, DeformConv and Col2Im; and the window attributes
and per-channel bias the pooling, normalization, image and quantization rules share."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
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


@rule("Col2Im", since=18)
def col2im(ctx: NodeContext) -> Outputs:
    """OpenVINO's Col2Im for 2-D images; other ranks as one 2-D Col2Im per spatial axis (the sum of
    blocks separates by axis), with a unit first axis."""
    rank = ctx.input(1).partial_shape[0]
    if rank < 1:
        raise ctx.unsupported("a Col2Im whose image_shape has an unknown length")
    dilations, strides = ctx.attr("dilations", [1] * rank), ctx.attr("strides", [1] * rank)
    pads = ctx.attr("pads", [0] * 2 * rank)
    image, block = (opset.convert(ctx.input(i), Type.i64).output(0) for i in (1, 2))
    if rank == 2:
        node = opset.col2im(ctx.input(0), image, block, strides, dilations, pads[:2], pads[2:])
        return [_out(node)]
    # blocks per axis: (image + pads - dilation * (block - 1) - 1) // stride + 1
    reach = opset.add(opset.multiply(block, ctx.const(dilations, _I64)), ctx.const([1 - d for d in dilations], _I64))
    room = opset.subtract(opset.add(image, ctx.const([b + e for b, e in zip(pads[:rank], pads[rank:])], _I64)), reach)
    counts = opset.add(opset.divide(room, ctx.const(strides, _I64)), ctx.const([1] * rank, _I64))
    target = opset.concat([ctx.const([0, -1], _I64), block, counts], 0)
    x = _out(opset.reshape(ctx.input(0), target, special_zero=True))  # [N, C, blocks..., counts...]
    axes = ["n", "c", *(f"k{a}" for a in range(rank)), *(f"l{a}" for a in range(rank))]
    for a in range(rank):
        rest = [name for name in axes if name not in (f"k{a}", f"l{a}")]
        order = [axes.index(name) for name in (*rest, f"k{a}", f"l{a}")]
        moved = opset.transpose(x, ctx.const(order, _I64))
        dims = opset.shape_of(moved, Type.i64)
        flat = opset.reshape(moved, opset.concat([ctx.const([-1], _I64), _gather(ctx, dims, [-2, -1])], 0), False)
        one = ctx.const([1], _I64)
        summed = opset.col2im(
            flat, opset.concat([one, _gather(ctx, image, [a])], 0), opset.concat([one, _gather(ctx, block, [a])], 0),
            [1, strides[a]], [1, dilations[a]], [0, pads[a]], [0, pads[rank + a]],
        )  # fmt: skip  # [-1, 1, 1, image[a]]
        target = opset.concat([_gather(ctx, dims, list(range(len(rest)))), _gather(ctx, image, [a])], 0)
        x = _out(opset.reshape(summed, target, special_zero=False))
        axes = [*rest, f"i{a}"]
    order = [axes.index(name) for name in ("n", "c", *(f"i{a}" for a in range(rank)))]
    return [_out(opset.transpose(x, ctx.const(order, _I64)))]


def _gather(ctx: NodeContext, values: object, indices: list[int]) -> Output:
    return _out(opset.gather(values, ctx.const(indices, _I64), ctx.const(0, _I64)))


@rule("DeformConv", since=19)
def deform_conv(ctx: NodeContext) -> Outputs:
    """OpenVINO's DeformableConvolution with ``bilinear_interpolation_pad`` (ONNX samples zeros past the
    edges), then the bias added per output channel, as OpenVINO's ONNX frontend translates it."""
    x = ctx.input(0)
    if x.partial_shape.rank != 4:
        raise ctx.unsupported(f"a {x.partial_shape.rank}-D DeformConv (2-D images only)")
    node = opset.deformable_convolution(
        x, ctx.input(2), ctx.input(1), mask=ctx.optional_input(4), group=ctx.attr("group", 1),
        deformable_group=ctx.attr("offset_group", 1), bilinear_interpolation_pad=True, **window_attrs(ctx, 2),
    )  # fmt: skip
    return [channel_bias(ctx, _out(node), ctx.optional_input(3))]
