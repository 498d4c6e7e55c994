"""Rules for ONNX ops that make, read and change shapes: Shape, Size, Reshape, Flatten, Squeeze,
Unsqueeze, Expand, Tile, ConstantOfShape, Range, Trilu, OneHot, EyeLike."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.frontend.onnx.types import element_type
from hetero_sdk.graph.node import Output

__all__: list[str] = []

_I64 = np.int64


def _out(node: object, index: int = 0) -> Output:
    return node.output(index)  # type: ignore[attr-defined, no-any-return]


def _axes(ctx: NodeContext, attribute: str, input_index: int, since_input: int) -> Output | None:
    """An axes list given as an attribute before opset ``since_input`` and as an input from then on."""
    if ctx.version < since_input:
        axes = ctx.attr(attribute, None)
        return None if axes is None else ctx.const(axes, _I64)
    return ctx.optional_input(input_index)


@rule("Shape")
def shape(ctx: NodeContext) -> Outputs:
    shape_of = _out(opset.shape_of(ctx.input(0)))
    start, end = ctx.attr("start", 0), ctx.attr("end", None)
    if start == 0 and end is None:
        return [shape_of]
    stop = np.iinfo(_I64).max if end is None else end
    return [_out(opset.slice(shape_of, ctx.const([start], _I64), ctx.const([stop], _I64), ctx.const([1], _I64)))]


@rule("Size")
def size(ctx: NodeContext) -> Outputs:
    return [_out(opset.reduce_prod(opset.shape_of(ctx.input(0)), ctx.const(0, _I64), keep_dims=False))]


@rule("Reshape", since=5)
def reshape(ctx: NodeContext) -> Outputs:
    special_zero = not ctx.flag("allowzero", False)
    return [_out(opset.reshape(ctx.input(0), ctx.input(1), special_zero=special_zero))]


@rule("Flatten")
def flatten(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    rank = x.partial_shape.rank
    axis = ctx.attr("axis", 1)
    axis = axis + rank if axis < 0 else axis
    dims = x.partial_shape.dims
    if all(d >= 0 for d in dims[:axis]):
        first = int(np.prod(dims[:axis], dtype=_I64))
        return [_out(opset.reshape(x, ctx.const([first, -1], _I64), special_zero=False))]
    if axis == 1:  # the usual [batch, features]: the copied batch cancels, so static features stay known
        return [_out(opset.reshape(x, ctx.const([0, -1], _I64), special_zero=True))]
    shape_of = opset.shape_of(x)
    leading = opset.reduce_prod(
        opset.slice(shape_of, ctx.const([0], _I64), ctx.const([axis], _I64), ctx.const([1], _I64)),
        ctx.const([0], _I64),
        keep_dims=True,
    )
    target = opset.concat([leading, ctx.const([-1], _I64)], axis=0)
    return [_out(opset.reshape(x, target, special_zero=False))]


@rule("Squeeze")
def squeeze(ctx: NodeContext) -> Outputs:
    axes = _axes(ctx, "axes", 1, since_input=13)
    return [_out(opset.squeeze(ctx.input(0), axes))]


@rule("Unsqueeze")
def unsqueeze(ctx: NodeContext) -> Outputs:
    axes = _axes(ctx, "axes", 1, since_input=13)
    if axes is None:
        raise ctx.error("axes are required")
    return [_out(opset.unsqueeze(ctx.input(0), axes))]


@rule("Expand", since=8)
def expand(ctx: NodeContext) -> Outputs:
    return [_out(opset.broadcast(ctx.input(0), ctx.input(1), mode="bidirectional"))]


@rule("Tile", since=6)
def tile(ctx: NodeContext) -> Outputs:
    return [_out(opset.tile(ctx.input(0), ctx.input(1)))]


@rule("ConstantOfShape", since=9)
def constant_of_shape(ctx: NodeContext) -> Outputs:
    value = ctx.attr("value", None)
    fill = np.zeros((), np.float32) if value is None else np.asarray(value).reshape(())
    return [_out(opset.broadcast(ctx.const(fill), ctx.input(0)))]


@rule("Range", since=11)
def range_(ctx: NodeContext) -> Outputs:
    # ONNX's own function bodies (AffineGrid's) pass one-element 1-D tensors where scalars are due
    start, stop, step = (_scalar_of(ctx, i) for i in range(3))
    return [_out(opset.range(start, stop, step, output_type=start.element_type))]


def _scalar_of(ctx: NodeContext, index: int) -> Output:
    """Input ``index`` as a scalar: itself, or reshaped when it is a one-element 1-D tensor."""
    value = ctx.input(index)
    if value.partial_shape.rank == 1 and value.partial_shape[0] in (1, -1):
        return _out(opset.reshape(value, ctx.const([], _I64), special_zero=False))
    return value


@rule("Trilu", since=14)
def trilu(ctx: NodeContext) -> Outputs:
    """Upper or lower triangle of the last two axes, as OpenVINO's frontend decomposes it: a mask from
    ``column - row`` against ``k``, then Select."""
    x = ctx.input(0)
    k = ctx.optional_input(1)
    k = ctx.const(0, _I64) if k is None else _out(opset.reshape(k, ctx.const([], _I64), special_zero=False))
    shape = opset.shape_of(x)
    zero, one = ctx.const(0, _I64), ctx.const(1, _I64)
    rows = opset.range(zero, opset.gather(shape, ctx.const(-2, _I64), zero), one, output_type=Type.i64)
    cols = opset.range(zero, opset.gather(shape, ctx.const(-1, _I64), zero), one, output_type=Type.i64)
    offset = opset.subtract(opset.unsqueeze(cols, ctx.const([0], _I64)), opset.unsqueeze(rows, ctx.const([1], _I64)))
    keep = opset.greater_equal(offset, k) if ctx.flag("upper", True) else opset.less_equal(offset, k)
    return [_out(opset.select(keep, x, ctx.const(0, x.element_type)))]


@rule("OneHot", since=9)
def one_hot(ctx: NodeContext) -> Outputs:
    """``values[1]`` where an index equals its position along the new ``axis``, else ``values[0]``;
    negative indices count from ``depth`` (as OpenVINO's frontend decomposes it, with existing ops)."""
    indices = _out(opset.convert(ctx.input(0), Type.i64))
    known = ctx.constant_input(1)
    if known is not None and known.size == 1 and known.reshape(()) < 1:
        raise ctx.error(f"depth is {known.reshape(()).item()}", "depth is the number of classes and must be 1 or more")
    depth = _out(opset.convert(opset.reshape(ctx.input(1), ctx.const([], _I64), special_zero=False), Type.i64))
    values = ctx.input(2)
    rank = indices.partial_shape.rank + 1
    axis = ctx.axis("axis", -1, rank)
    indices = _out(opset.select(opset.less(indices, ctx.const(0, _I64)), opset.add(indices, depth), indices))
    positions = opset.range(ctx.const(0, _I64), depth, ctx.const(1, _I64), output_type=Type.i64)
    shape = [1] * rank
    shape[axis] = -1
    positions = opset.reshape(positions, ctx.const(shape, _I64), special_zero=False)
    hit = opset.equal(opset.unsqueeze(indices, ctx.const([axis], _I64)), positions)
    zero, one = ctx.const(0, _I64), ctx.const(1, _I64)
    off = opset.gather(values, zero, zero)
    on = opset.gather(values, one, zero)
    return [_out(opset.select(hit, on, off))]


@rule("EyeLike", since=9)
def eye_like(ctx: NodeContext) -> Outputs:
    """Ones on the ``k``-th diagonal of a matrix shaped like the input, zeros elsewhere."""
    x = ctx.input(0)
    dtype = element_type(ctx.attr("dtype"), f"ONNX {ctx.describe()} dtype") if ctx.has_attr("dtype") else x.element_type
    shape = opset.shape_of(x)
    zero, one = ctx.const(0, _I64), ctx.const(1, _I64)
    rows = opset.range(zero, opset.gather(shape, zero, zero), one, output_type=Type.i64)
    cols = opset.range(zero, opset.gather(shape, one, zero), one, output_type=Type.i64)
    offset = opset.subtract(opset.unsqueeze(cols, ctx.const([0], _I64)), opset.unsqueeze(rows, ctx.const([1], _I64)))
    diagonal = opset.equal(offset, ctx.const(ctx.attr("k", 0), _I64))
    return [_out(opset.convert(diagonal, dtype))]


# -- DepthToSpace, SpaceToDepth: OpenVINO's ops of the same names -----------------------------------------

"""ONNX's modes as OpenVINO names them: DCR splits the channels block first, CRD channels first."""
