"""Rules for ONNX's reductions: ReduceSum, ReduceMean... with their axes as an attribute (before
opset 13 for ReduceSum, 18 for the others) or an input, ``keepdims`` and ``noop_with_empty_axes``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.graph.node import Output

__all__: list[str] = []

_I64 = np.int64


def _out(node: object) -> Output:
    return node.output(0)  # type: ignore[attr-defined, no-any-return]


def _square(x: Output) -> Output:
    return _out(opset.multiply(x, x))


_REDUCTIONS: dict[
    str, tuple[Callable[..., object], Callable[[Output], Output] | None, Callable[[Output], Output] | None]
] = {
    # ONNX op: (the SDK's reduction, applied before it, applied after it)
    "ReduceSum": (opset.reduce_sum, None, None),
    "ReduceMean": (opset.reduce_mean, None, None),
    "ReduceMax": (opset.reduce_max, None, None),
    "ReduceMin": (opset.reduce_min, None, None),
    "ReduceProd": (opset.reduce_prod, None, None),
    "ReduceL1": (opset.reduce_sum, lambda x: _out(opset.abs(x)), None),
    "ReduceL2": (opset.reduce_sum, _square, lambda y: _out(opset.sqrt(y))),
    "ReduceSumSquare": (opset.reduce_sum, _square, None),
    "ReduceLogSum": (opset.reduce_sum, None, lambda y: _out(opset.log(y))),
    "ReduceLogSumExp": (opset.reduce_sum, lambda x: _out(opset.exp(x)), lambda y: _out(opset.log(y))),
}


def _reduce(ctx: NodeContext, axes: Output | None) -> Outputs:
    x = ctx.input(0)
    if axes is None or axes.partial_shape.dims == (0,):
        if ctx.flag("noop_with_empty_axes", False):
            return [x]
        axes = ctx.const(list(range(x.partial_shape.rank)), _I64)
    reduction, before, after = _REDUCTIONS[ctx.op_type]
    if x.element_type == Type.boolean and ctx.op_type in ("ReduceMax", "ReduceMin"):
        # opset 20 reduces booleans (any / all): as u8, which the opset's reductions take
        as_u8 = _out(opset.convert(x, Type.u8))
        y = _out(reduction(as_u8, axes, keep_dims=ctx.flag("keepdims", True)))
        return [_out(opset.convert(y, Type.boolean))]
    y = _out(reduction(before(x) if before else x, axes, keep_dims=ctx.flag("keepdims", True)))
    if ctx.op_type in ("ReduceMax", "ReduceMin") and x.element_type.is_real and 0 in x.partial_shape.dims:
        y = _infinite_when_empty(ctx, x, axes, y)
    return [after(y) if after else y]


def _infinite_when_empty(ctx: NodeContext, x: Output, axes: Output, y: Output) -> Output:
    """ONNX's max of nothing is -inf, its min +inf, where the SDK's (OpenVINO's) are the type's lowest
    and highest finite values: an input with an empty dimension gets the infinity when it reduces one."""
    count = opset.reduce_prod(opset.gather(opset.shape_of(x), axes, ctx.const(0, _I64)), ctx.const(0, _I64))
    infinity = -np.inf if ctx.op_type == "ReduceMax" else np.inf
    empty = opset.equal(count, ctx.const(0, _I64))
    return _out(opset.select(empty, ctx.const(np.array(infinity, x.element_type.numpy)), y))


@rule(*_REDUCTIONS)
def reduce_with_axes_attribute(ctx: NodeContext) -> Outputs:
    axes = ctx.attr("axes", None)
    return _reduce(ctx, None if axes is None else ctx.const(axes, _I64))


@rule("ReduceSum", since=13)
@rule(*(name for name in _REDUCTIONS if name != "ReduceSum"), since=18)
def reduce_with_axes_input(ctx: NodeContext) -> Outputs:
    return _reduce(ctx, ctx.optional_input(1))
