"""Rules for ONNX's sorting and detection ops: TopK, ArgMax, ArgMin, NonMaxSuppression, Unique and
NonZero."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.graph.node import Output

__all__: list[str] = []

_I64 = np.int64


def _out(node: object, index: int = 0) -> Output:
    return node.output(index)  # type: ignore[attr-defined, no-any-return]


def _topk(ctx: NodeContext, x: Output, k: Output, axis: int, largest: bool) -> tuple[Output, Output]:
    node = opset.topk(
        x, k, axis=axis, mode="max" if largest else "min", sort="value", index_element_type=Type.i64, stable=True
    )
    return _out(node, 0), _out(node, 1)


@rule("TopK")
def topk_1(ctx: NodeContext) -> Outputs:
    return list(_topk(ctx, ctx.input(0), ctx.const(ctx.attr("k"), _I64), ctx.attr("axis", -1), True))


@rule("TopK", since=10)
def topk_10(ctx: NodeContext) -> Outputs:
    k = _out(opset.reshape(ctx.input(1), ctx.const([], _I64), special_zero=False))
    return list(_topk(ctx, ctx.input(0), k, ctx.attr("axis", -1), ctx.flag("largest", True)))


@rule("ArgMax", "ArgMin")
def arg_max(ctx: NodeContext) -> Outputs:
    """TopK with k=1 (stable: the first of equal elements); with ``select_last_index`` the last one,
    found as the first of the data reversed along ``axis`` and mapped back (``dim - 1 - index``)."""
    x = ctx.input(0)
    axis = ctx.attr("axis", 0)
    last = ctx.flag("select_last_index", False)
    if last:
        lowest = np.iinfo(_I64).min
        x = _out(opset.slice(x, ctx.const([-1], _I64), ctx.const([lowest], _I64), ctx.const([-1], _I64), [axis]))
    _, indices = _topk(ctx, x, ctx.const(1, _I64), axis, ctx.op_type == "ArgMax")
    if last:
        dim = opset.gather(opset.shape_of(x), ctx.const(axis, _I64), ctx.const(0, _I64))
        indices = _out(opset.subtract(opset.subtract(dim, ctx.const(1, _I64)), indices))
    if not ctx.flag("keepdims", True):
        indices = _out(opset.squeeze(indices, ctx.const([axis], _I64)))
    return [indices]


@rule("NonMaxSuppression", since=10)
def non_max_suppression(ctx: NodeContext) -> Outputs:
    boxes, scores = ctx.input(0), ctx.input(1)
    f32 = scores.element_type

    def scalar(index: int, default: float, dtype: Type) -> Output:
        given = ctx.optional_input(index)
        if given is None:
            return ctx.const(default, dtype)
        return _out(opset.reshape(given, ctx.const([], _I64), special_zero=False))

    node = opset.non_max_suppression(
        boxes,
        scores,
        scalar(2, 0, Type.i64),
        scalar(3, 0.0, f32),
        scalar(4, float("-inf"), f32),
        box_encoding="center" if ctx.flag("center_point_box", False) else "corner",
        sort_result_descending=False,
        output_type=Type.i64,
    )
    return [_out(node, 0)]


@rule("Unique", since=11)
def unique(ctx: NodeContext) -> Outputs:
    """Unique's four outputs; ONNX's indices and counts are i64."""
    axis = ctx.attr("axis", None)
    node = opset.unique(ctx.input(0), None if axis is None else ctx.const(axis, _I64), ctx.flag("sorted", True))
    return [node.output(i) for i in range(4)]


@rule("RoiAlign", since=10)
def roi_align(ctx: NodeContext) -> Outputs:
    """ONNX's RoiAlign is the opset's ROIAlign; ``output_half_pixel`` (the only mode before opset 16)
    is its ``asymmetric`` mode, ``half_pixel`` its own."""
    transform = ctx.attr("coordinate_transformation_mode", "half_pixel" if ctx.version >= 16 else "output_half_pixel")
    aligned = {"half_pixel": "half_pixel", "output_half_pixel": "asymmetric"}.get(transform)
    if aligned is None:
        raise ctx.error(f"coordinate_transformation_mode must be half_pixel or output_half_pixel, not '{transform}'")
    mode = ctx.attr("mode", "avg")
    if mode not in ("avg", "max"):
        raise ctx.error(f"mode must be avg or max, not '{mode}'")
    node = opset.roi_align(
        ctx.input(0), ctx.input(1), ctx.input(2), ctx.attr("output_height", 1), ctx.attr("output_width", 1),
        ctx.attr("sampling_ratio", 0), ctx.attr("spatial_scale", 1.0), mode, aligned,
    )  # fmt: skip
    return [node.output(0)]


@rule("NonZero", since=9)
def non_zero(ctx: NodeContext) -> Outputs:
    return [_out(opset.non_zero(ctx.input(0), output_type=Type.i64))]
