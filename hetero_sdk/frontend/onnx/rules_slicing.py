"""Rules for ONNX's Slice."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.graph.node import Output

__all__: list[str] = []


_I64 = np.int64


def _out(node: object, index: int = 0) -> Output:
    return node.output(index)  # type: ignore[attr-defined, no-any-return]


@rule("Slice")
def slice_1(ctx: NodeContext) -> Outputs:
    starts, ends = ctx.attr("starts"), ctx.attr("ends")
    axes = ctx.attr("axes", list(range(len(starts))))
    steps = ctx.const([1] * len(starts), _I64)
    return [
        _out(opset.slice(ctx.input(0), ctx.const(starts, _I64), ctx.const(ends, _I64), steps, ctx.const(axes, _I64)))
    ]


@rule("Slice", since=10)
def slice_10(ctx: NodeContext) -> Outputs:
    starts = _onnx_starts(ctx)
    steps = ctx.optional_input(4)
    if steps is None:
        ones = ctx.const(1, starts.element_type)
        steps = _out(opset.broadcast(ones, opset.shape_of(starts)))
    return [_out(opset.slice(ctx.input(0), starts, ctx.input(2), steps, ctx.optional_input(3)))]


def _onnx_starts(ctx: NodeContext) -> Output:
    """Slice's starts, where they differ from the opset's (Python's) slicing made ONNX's: with a
    negative step a start below ``-size`` clamps to index 0 in ONNX, and takes nothing in Python.
    Known starts, steps and axes over static dims are rewritten; other cases keep Python's reading."""
    starts, steps = ctx.constant_input(1), ctx.constant_input(4)
    x = ctx.input(0)
    if starts is None or steps is None or (ctx.has_input(3) and ctx.constant_input(3) is None):
        return ctx.input(1)
    rank = x.partial_shape.rank
    axes = ctx.constant_input(3) if ctx.has_input(3) else np.arange(len(starts))
    fixed = np.array(starts, copy=True)
    for k, (axis, step) in enumerate(zip(np.asarray(axes).reshape(-1), np.asarray(steps).reshape(-1))):
        size = x.partial_shape.dims[ctx.check_axis(int(axis), rank, "axes (input 3)")]
        if step < 0 and size > 0 and fixed[k] < -size:
            fixed[k] = 0
    return ctx.const(fixed) if not np.array_equal(fixed, starts) else ctx.input(1)
