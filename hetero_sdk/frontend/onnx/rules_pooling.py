"""Rules for ONNX's pooling ops: MaxPool, MaxUnpool, AveragePool (dilated ones as depthwise
convolutions), GlobalAveragePool and GlobalMaxPool (LpPool, which shares Lp helpers with
LpNormalization, is in :mod:`.rules_normalization`)."""

from __future__ import annotations

import math

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.frontend.onnx.rules_convolution import window_attrs
from hetero_sdk.graph.limits import CONSTANT_ELEMENTS
from hetero_sdk.graph.node import Output

__all__: list[str] = []

_I64 = np.int64


def _out(node: object, index: int = 0) -> Output:
    return node.output(index)  # type: ignore[attr-defined, no-any-return]


@rule("MaxPool")
def max_pool(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    spatial = x.partial_shape.rank - 2
    column_major = ctx.wants_output(1) and ctx.flag("storage_order", False)
    if column_major and spatial != 2:
        raise ctx.unsupported(f"indices in column-major order (storage_order=1) over {spatial} spatial dims")
    window = window_attrs(ctx, spatial)
    node = opset.max_pool(
        x,
        kernel_shape=ctx.attr("kernel_shape"),
        rounding_type="ceil" if ctx.flag("ceil_mode", False) else "floor",
        **window,
    )
    values, indices = _out(node, 0), _out(node, 1)
    kept = _kept_windows(ctx, x, window)
    if kept:  # drop the last windows ONNX drops
        start, stop = ctx.const([0] * len(kept), _I64), ctx.const(list(kept.values()), _I64)
        step, axes = ctx.const([1] * len(kept), _I64), ctx.const([2 + a for a in kept], _I64)
        values, indices = (_out(opset.slice(t, start, stop, step, axes)) for t in (values, indices))
    if column_major:  # row h, column w of an image at flat index i: i - (i mod HW) + w * H + h
        height, width = x.partial_shape.dims[2:]
        if height < 0 or width < 0:
            raise ctx.unsupported("column-major indices (storage_order=1) of a dynamic image size")
        plane = opset.floor_mod(indices, ctx.const(height * width, _I64))
        row, column = opset.divide(plane, ctx.const(width, _I64)), opset.floor_mod(plane, ctx.const(width, _I64))
        moved = opset.add(opset.multiply(column, ctx.const(height, _I64)), row)
        indices = _out(opset.add(opset.subtract(indices, plane), moved))
    return [values, indices]


@rule("MaxUnpool", since=9)
def max_unpool(ctx: NodeContext) -> Outputs:
    """Each value of ``x`` written at its flat index (MaxPool's second output) into zeros of the unpooled
    shape, ``(in - 1) * stride + kernel - pads`` per spatial dim; an ``output_shape`` input pads that
    at the end, as ONNX's reference and node tests do (ONNX Runtime reads the indices in output_shape)."""
    x, indices = ctx.input(0), ctx.input(1)
    dims = x.partial_shape.dims
    kernel = ctx.attr("kernel_shape")
    spatial = len(kernel)
    window_attrs(ctx, spatial)  # checks the pads
    strides, pads = ctx.attr("strides", [1] * spatial), ctx.attr("pads", [0] * 2 * spatial)
    if any(d < 0 for d in dims):
        raise ctx.unsupported("a dynamic input shape")
    out = [(d - 1) * s + k - pads[i] - pads[i + spatial] for i, (d, s, k) in enumerate(zip(dims[2:], strides, kernel))]
    shape = [*dims[:2], *out]
    flat = ctx.const([-1], _I64)
    zeros = opset.broadcast(ctx.const(0, x.element_type), ctx.const([int(np.prod(shape))], _I64))
    values, where = opset.reshape(x, flat, special_zero=False), opset.reshape(indices, flat, special_zero=False)
    y = opset.reshape(opset.scatter_elements_update(zeros, where, values), ctx.const(shape, _I64), special_zero=False)
    target = ctx.optional_input(2)
    if target is None:
        return [_out(y)]
    extra = opset.subtract(opset.convert(target, Type.i64), ctx.const(shape, _I64))
    return [_out(opset.pad(y, ctx.const([0] * len(shape), _I64), extra))]


def _ceil_extra(ctx: NodeContext, size: int, kernel: int, stride: int, dilation: int, begin: int, end: int) -> int:
    """The padding past ``end`` that ceil_mode's last window reaches (a window must start in the input
    or the begin padding)."""
    if not ctx.flag("ceil_mode", False):
        return 0
    span = dilation * (kernel - 1) + 1
    count = -(-(size + begin + end - span) // stride) + 1
    if (count - 1) * stride >= size + begin:
        count -= 1
    return max(0, (count - 1) * stride + span - (size + begin + end))


def _kept_windows(ctx: NodeContext, x: Output, window: dict[str, object]) -> dict[int, int]:
    """The spatial axes where ceil_mode's last window would start in the end padding, which ONNX drops
    and OpenVINO's pools keep, each with the number of windows ONNX keeps."""
    dims = x.partial_shape.dims[2:]
    if not ctx.flag("ceil_mode", False) or window["auto_pad"] != "explicit" or any(d < 0 for d in dims):
        return {}
    kernel, strides = ctx.attr("kernel_shape"), window["strides"]
    dilations = ctx.attr("dilations", [1] * len(dims))
    begins, ends = window["pads_begin"], window["pads_end"]
    kept = {}
    for axis, (size, k, s, d, b, e) in enumerate(zip(dims, kernel, strides, dilations, begins, ends)):  # type: ignore[call-overload]
        count = -(-(size + b + e - d * (k - 1) - 1) // s) + 1
        if (count - 1) * s >= size + b:
            kept[axis] = count - 1
    return kept


def _dilated_average(ctx: NodeContext, x: Output, window: dict[str, object]) -> Output:
    """A dilated AveragePool (OpenVINO's AvgPool has no dilations), or one whose ceil_mode drops a last
    window: window sums as a depthwise convolution with ones, divided by the count of the elements each
    window covers."""
    dims, kernel = x.partial_shape.dims, ctx.attr("kernel_shape")
    if any(d < 0 for d in dims) or window["auto_pad"] != "explicit":
        raise ctx.unsupported("a dilated AveragePool with a dynamic shape or auto_pad")
    begins, ends = list(window["pads_begin"]), list(window["pads_end"])  # type: ignore[call-overload]
    strides, dilations = window["strides"], window["dilations"]
    extra = [_ceil_extra(ctx, *args) for args in zip(dims[2:], kernel, strides, dilations, begins, ends)]  # type: ignore[call-overload]
    CONSTANT_ELEMENTS.check(dims[1] * math.prod(kernel), f"a window of ones {kernel}", ctx.error)
    ones = ctx.const(np.ones([dims[1], 1, 1, *kernel], x.element_type.numpy))

    def window_sums(t: object, begin: list[int], end: list[int]) -> Output:
        return _out(opset.group_convolution(t, ones, strides, begin, end, dilations))  # type: ignore[arg-type]

    unit = opset.broadcast(ctx.const(np.array(1, x.element_type.numpy)), opset.shape_of(x))
    past = [e + x_ for e, x_ in zip(ends, extra)]
    if ctx.flag("count_include_pad", False):  # the explicit pads count, the ceil_mode overhang does not
        padded = opset.pad(unit, [0, 0, *begins], [0, 0, *ends], pad_value=ctx.const(np.array(1, x.element_type.numpy)))
        counts = window_sums(padded, [0] * len(extra), extra)
    else:
        counts = window_sums(unit, begins, past)
    return _out(opset.divide(window_sums(x, begins, past), counts))


@rule("AveragePool")
def average_pool(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    spatial = x.partial_shape.rank - 2
    window = window_attrs(ctx, spatial)
    if any(d != 1 for d in window.pop("dilations")) or _kept_windows(ctx, x, window):  # type: ignore[attr-defined]
        return [_dilated_average(ctx, x, window_attrs(ctx, spatial))]
    node = opset.avg_pool(
        x,
        kernel_shape=ctx.attr("kernel_shape"),
        exclude_pad=not ctx.flag("count_include_pad", False),
        rounding_type="ceil" if ctx.flag("ceil_mode", False) else "floor",
        **window,
    )
    return [_out(node)]


@rule("GlobalAveragePool", "GlobalMaxPool")
def global_pool(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    axes = ctx.const(list(range(2, x.partial_shape.rank)), _I64)
    reduce = opset.reduce_mean if ctx.op_type == "GlobalAveragePool" else opset.reduce_max
    return [_out(reduce(x, axes, keep_dims=True))]
