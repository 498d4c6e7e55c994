"""Rules for ONNX's sequence and optional ops, resolved while translating (see :mod:`.values`): a sequence
is a tuple of outputs, an optional the output it holds or :data:`~.values.EMPTY`. Positions, split sizes
and the dimension split must be known while translating; otherwise the node is an
:class:`~hetero_sdk.errors.UnsupportedOperationError` naming it."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.frontend.onnx.types import element_type
from hetero_sdk.frontend.onnx.values import EMPTY, TensorSequence
from hetero_sdk.graph.limits import LISTED_VALUES
from hetero_sdk.graph.node import Output

__all__: list[str] = []

_I64 = np.int64


def _out(node: object, index: int = 0) -> Output:
    return node.output(index)  # type: ignore[attr-defined, no-any-return]


def _position(ctx: NodeContext, index: int, length: int, default: int, inserting: bool = False) -> int:
    """The position input ``index`` gives (``default`` when absent), made non-negative and checked."""
    if not ctx.has_input(index):
        return default
    value = int(ctx.static_input(index, "the position").reshape(-1)[0])
    limit = length + 1 if inserting else length
    if not -limit <= value < limit:
        raise ctx.error(f"position {value} is outside a sequence of {length} tensor(s)")
    return value % limit if limit else 0


def _sequence(ctx: NodeContext, items: list[Output]) -> TensorSequence:
    element = items[0].element_type if items else ctx.sequence(0).element_type
    if any(item.element_type != element for item in items):
        raise ctx.error(f"a sequence's tensors must share one element type, not {[str(i.element_type) for i in items]}")
    return TensorSequence(tuple(items), element)


@rule("SequenceConstruct", since=11)
def sequence_construct(ctx: NodeContext) -> Outputs:
    items = [ctx.input(i) for i in range(len(ctx.inputs))]
    if not items:
        raise ctx.error("SequenceConstruct needs at least one tensor")
    return [_sequence(ctx, items)]


@rule("SequenceEmpty", since=11)
def sequence_empty(ctx: NodeContext) -> Outputs:
    return [TensorSequence((), element_type(ctx.attr("dtype", 1), ctx.describe()))]


@rule("SequenceLength", since=11)
def sequence_length(ctx: NodeContext) -> Outputs:
    return [ctx.const(len(ctx.sequence(0)), _I64)]


@rule("SequenceAt", since=11)
def sequence_at(ctx: NodeContext) -> Outputs:
    sequence = ctx.sequence(0)
    return [sequence.items[_position(ctx, 1, len(sequence), 0)]]


@rule("SequenceInsert", since=11)
def sequence_insert(ctx: NodeContext) -> Outputs:
    sequence = ctx.sequence(0)
    items = list(sequence.items)
    items.insert(_position(ctx, 2, len(items), len(items), inserting=True), ctx.input(1))
    return [_sequence(ctx, items)]


@rule("SequenceErase", since=11)
def sequence_erase(ctx: NodeContext) -> Outputs:
    items = list(ctx.sequence(0).items)
    if not items:
        raise ctx.error("SequenceErase of an empty sequence")
    del items[_position(ctx, 1, len(items), len(items) - 1)]
    return [TensorSequence(tuple(items), ctx.sequence(0).element_type)]


@rule("SplitToSequence", since=11)
def split_to_sequence(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    rank = x.partial_shape.rank
    axis = ctx.axis("axis", 0, rank)
    size = x.partial_shape[axis]
    if size < 0:
        raise ctx.unsupported(f"SplitToSequence of dimension {axis}, which is not known while translating")
    axis_node = ctx.const(axis, _I64)
    if not ctx.has_input(1):
        LISTED_VALUES.check(size, f"splitting dimension {axis} ({size}) into a sequence of its slices", ctx.error)
        parts = [_out(opset.split(x, axis_node, size), i) for i in range(size)] if size else []
        if not ctx.flag("keepdims", True):
            parts = [_out(opset.squeeze(p, ctx.const([axis], _I64))) for p in parts]
        return [TensorSequence(tuple(parts), x.element_type)]
    split = ctx.static_input(1, "split").astype(np.int64)
    if split.ndim == 0:
        chunk = int(split)
        if chunk < 1:
            raise ctx.error(f"split {chunk} must be positive")
        LISTED_VALUES.check(-(-size // chunk), f"splitting dimension {axis} ({size}) in parts of {chunk}", ctx.error)
        lengths = [chunk] * (size // chunk) + ([size % chunk] if size % chunk else [])
    else:
        lengths = [int(v) for v in split]
        if sum(lengths) != size or any(v < 0 for v in lengths):
            raise ctx.error(f"split {lengths} must be non-negative lengths adding up to dimension {axis} ({size})")
    node = opset.variadic_split(x, axis_node, ctx.const(lengths, _I64))
    return [TensorSequence(tuple(_out(node, i) for i in range(len(lengths))), x.element_type)]


@rule("ConcatFromSequence", since=11)
def concat_from_sequence(ctx: NodeContext) -> Outputs:
    items = list(ctx.sequence(0).items)
    if not items:
        raise ctx.error("ConcatFromSequence of an empty sequence")
    new_axis = ctx.flag("new_axis", False)
    axis = ctx.axis("axis", 0, items[0].partial_shape.rank, extra=int(new_axis))
    if new_axis:
        items = [_out(opset.unsqueeze(item, ctx.const([axis], _I64))) for item in items]
    if len(items) == 1:
        return [items[0]]
    return [_out(opset.concat(items, axis))]


@rule("Optional", since=15)
def optional(ctx: NodeContext) -> Outputs:
    value = ctx.any_input(0)
    return [EMPTY if value is None else value]


@rule("OptionalHasElement", since=15)
def optional_has_element(ctx: NodeContext) -> Outputs:
    value = ctx.any_input(0)
    return [ctx.const(value is not None and value is not EMPTY)]


@rule("OptionalGetElement", since=15)
def optional_get_element(ctx: NodeContext) -> Outputs:
    value = ctx.any_input(0)
    if value is None or value is EMPTY:
        raise ctx.error("OptionalGetElement of an empty optional")
    return [value]
