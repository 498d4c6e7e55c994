"""Rules for ONNX's reductions: ReduceSum, ReduceMean... with their axes as an attribute (before
opset 13 for ReduceSum, 18 for the others) or an input, ``keepdims`` and ``noop_with_empty_axes``; and
the selections along an axis, TopK, ArgMax, ArgMin and Hardmax."""

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


def _out(node: object, index: int = 0) -> Output:
    return node.output(index)  # type: ignore[attr-defined, no-any-return]


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
        if ctx.attr("noop_with_empty_axes", 0):
            return [x]
        axes = ctx.const(list(range(x.partial_shape.rank)), _I64)
    reduction, before, after = _REDUCTIONS[ctx.op_type]
    if x.element_type == Type.boolean and ctx.op_type in ("ReduceMax", "ReduceMin"):
        # opset 20 reduces booleans (any / all): as u8, which the opset's reductions take
        as_u8 = _out(opset.convert(x, Type.u8))
        y = _out(reduction(as_u8, axes, keep_dims=bool(ctx.attr("keepdims", 1))))
        return [_out(opset.convert(y, Type.boolean))]
    y = _out(reduction(before(x) if before else x, axes, keep_dims=bool(ctx.attr("keepdims", 1))))
    return [after(y) if after else y]


@rule(*_REDUCTIONS)
def reduce_with_axes_attribute(ctx: NodeContext) -> Outputs:
    axes = ctx.attr("axes", None)
    return _reduce(ctx, None if axes is None else ctx.const(axes, _I64))


@rule("ReduceSum", since=13)
@rule(*(name for name in _REDUCTIONS if name != "ReduceSum"), since=18)
def reduce_with_axes_input(ctx: NodeContext) -> Outputs:
    return _reduce(ctx, ctx.optional_input(1))


@rule("CumSum", since=11)
def cum_sum(ctx: NodeContext) -> Outputs:
    axis = _out(opset.reshape(ctx.input(1), ctx.const([], _I64), special_zero=False))
    exclusive, reverse = bool(ctx.attr("exclusive", 0)), bool(ctx.attr("reverse", 0))
    return [_out(opset.cum_sum(ctx.input(0), axis, exclusive=exclusive, reverse=reverse))]


@rule("CumProd", since=26)
def cum_prod(ctx: NodeContext) -> Outputs:
    axis = _out(opset.reshape(ctx.input(1), ctx.const([], _I64), special_zero=False))
    exclusive, reverse = bool(ctx.attr("exclusive", 0)), bool(ctx.attr("reverse", 0))
    return [_out(opset.cum_prod(ctx.input(0), axis, exclusive=exclusive, reverse=reverse))]


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
    return list(_topk(ctx, ctx.input(0), k, ctx.attr("axis", -1), bool(ctx.attr("largest", 1))))


@rule("ArgMax", "ArgMin")
def arg_max(ctx: NodeContext) -> Outputs:
    """TopK with k=1 (stable: the first of equal elements); with ``select_last_index`` the last one,
    found as the first of the data reversed along ``axis`` and mapped back (``dim - 1 - index``)."""
    x = ctx.input(0)
    axis = ctx.attr("axis", 0)
    last = bool(ctx.attr("select_last_index", 0))
    if last:
        lowest = np.iinfo(_I64).min
        x = _out(opset.slice(x, ctx.const([-1], _I64), ctx.const([lowest], _I64), ctx.const([-1], _I64), [axis]))
    _, indices = _topk(ctx, x, ctx.const(1, _I64), axis, ctx.op_type == "ArgMax")
    if last:
        dim = opset.gather(opset.shape_of(x), ctx.const(axis, _I64), ctx.const(0, _I64))
        indices = _out(opset.subtract(opset.subtract(dim, ctx.const(1, _I64)), indices))
    if not ctx.attr("keepdims", 1):
        indices = _out(opset.squeeze(indices, ctx.const([axis], _I64)))
    return [indices]


def _hardmax(ctx: NodeContext, x: Output, axis: int) -> Output:
    """1 at the first largest element along ``axis``, 0 elsewhere: TopK's index, one-hot."""
    rank = x.partial_shape.rank
    size = x.partial_shape.dims[axis]
    if size < 0:
        raise ctx.unsupported(f"a dynamic dimension on the Hardmax axis {axis} (of {x.partial_shape})")
    _, index = _topk(ctx, x, ctx.const(1, _I64), axis, True)
    positions = np.arange(size, dtype=np.int64).reshape([size if d == axis else 1 for d in range(rank)])
    return _out(opset.convert(opset.equal(ctx.const(positions), index), x.element_type))


@rule("Hardmax")
def hardmax_1(ctx: NodeContext) -> Outputs:
    """Before opset 13 the input is seen as 2-D: the axes from ``axis`` on are one row."""
    x = ctx.input(0)
    rank = x.partial_shape.rank
    axis = ctx.attr("axis", 1) % max(rank, 1)
    if axis == rank - 1:
        return [_hardmax(ctx, x, axis)]
    flat = _out(opset.reshape(x, ctx.const([0] * axis + [-1], _I64), special_zero=True))
    return [_out(opset.reshape(_hardmax(ctx, flat, axis), opset.shape_of(x), special_zero=False))]


@rule("Hardmax", since=13)
def hardmax_13(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    return [_hardmax(ctx, x, ctx.attr("axis", -1) % max(x.partial_shape.rank, 1))]


# -- resizing ----------------------------------------------------------------------------------------
