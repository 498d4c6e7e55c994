"""``TemplateCausalMask``: the additive attention mask a decoder builds once per step, as one op, and the
fusion that produces it from the ~22 ops torch's exporter writes for it (transformers' causal mask with
the padding mask read through a GatherND).

The exported graph builds key indices ``j = Range(0, total)``, compares them with the query positions
(``LessEqual(j, i)``, causal), reads the padding mask at ``(b, j)`` for ``b = Range(0, batch)`` by a
GatherND of index grids made by Unsqueeze/Maximum/ShapeOf/Broadcast/Concat, takes the conjunction,
broadcasts it to ``[batch, 1, seq, total]`` and selects 0 or the float's lowest value. The fused op
computes the same from the padding mask, the positions, ``total``, ``batch`` and the target shape:
``where(broadcast((arange(total) <= positions[:, None]) & mask[:batch, :total]), then, else)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from hetero_sdk import Node, PartialShape, Type
from hetero_sdk.plugin import (
    BOOL,
    INDEX_TYPES,
    LOWER_STRING,
    NUMERIC_TYPES,
    REAL_TYPES,
    Attr,
    ConsumerMap,
    Input,
    MatcherPass,
    OpDef,
    OutputSpec,
    as_output,
    define,
    expect_same_types,
    kernel,
    replace_node,
    unsqueezed_dims,
)
from template_plugin.direct_kernels import broadcast_shape

if TYPE_CHECKING:
    from hetero_sdk import Model, Output

__all__ = ["CAUSAL_MASK", "CAUSAL_MASK_OP", "CausalMaskFusion", "causal_mask"]

CAUSAL_MASK = "TemplateCausalMask"
"""The causal mask's op type name."""

_MASK_TYPES = frozenset({"boolean", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64"})
"""Padding-mask element types read as ``!= 0`` (Convert to boolean's values for them)."""


def causal_mask(
    mask: Any,
    positions: Any,
    total: Any,
    batch: Any,
    shape: Any,
    then: Any,
    otherwise: Any,
    *,
    causal_and: bool = True,
    broadcast_mode: str = "bidirectional",
    name: str | None = None,
) -> Node:
    """``where(broadcast(causal_and & (arange(total) <= positions[:, None]) & (mask[:batch, :total] != 0),
    shape), then, otherwise)`` laid out ``[batch, 1, seq, total]`` before the broadcast, as one op.

    :param mask: the padding mask ``[rows, length]`` (rows >= batch and length >= total, else the op fails
        as the GatherND it replaces), of booleans, integers, f32 or f64.
    :param positions: the queries' positions ``[seq]``, integers.
    :param total: one integer, the keys' count.
    :param batch: one integer, the batch.
    :param shape: the Broadcast's target shape.
    :param then: one value where the mask holds (0).
    :param otherwise: one value where it does not (the float's lowest).
    :param causal_and: the one-value boolean constant the exporter conjoins with the causal comparison.
    :param broadcast_mode: the Broadcast's mode (``numpy`` or ``bidirectional``).
    :param name: the node's friendly name.
    """
    value = as_output(then)
    inputs = [as_output(mask), as_output(positions), as_output(total), as_output(batch), as_output(shape)]
    inputs += [value, as_output(otherwise, like=value)]
    return Node(CAUSAL_MASK_OP, inputs, {"causal_and": causal_and, "broadcast_mode": broadcast_mode}, name)


def _causal_mask_infer(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 5, 6)
    mask, positions = node.input_value(0), node.input_value(1)
    if mask.partial_shape.rank != 2 or mask.element_type.value not in _MASK_TYPES:
        raise node.error(f"mask {mask.partial_shape} {mask.element_type.value} must be 2-D of booleans or numbers")
    if positions.partial_shape.rank != 1:
        raise node.error(f"positions {positions.partial_shape} must be 1-D")
    for index, what in ((2, "total"), (3, "batch"), (5, "then"), (6, "otherwise")):
        shape = node.input_value(index).partial_shape
        if shape.rank > 1 or any(d != 1 for d in shape.dims):
            raise node.error(f"{what} {shape} must be one value")
    target = node.input_value(4).partial_shape
    if target.rank != 1 or target[0] < 0:
        raise node.error(f"shape {target} must be 1-D of a static length")
    rank = max(target[0], 4) if node.attrs["broadcast_mode"] == "bidirectional" else target[0]
    return [(element_type, PartialShape([-1] * rank))]


CAUSAL_MASK_OP = define(
    OpDef(
        CAUSAL_MASK,
        "template",
        _causal_mask_infer,
        inputs=(
            Input("mask", NUMERIC_TYPES | {Type.boolean}, doc="the padding mask, [rows, length]"),
            Input("positions", INDEX_TYPES, doc="the queries' positions, [seq]"),
            Input("total", INDEX_TYPES, doc="one value: the keys' count"),
            Input("batch", INDEX_TYPES, doc="one value"),
            Input("shape", INDEX_TYPES, doc="the Broadcast's target shape"),
            Input("then", REAL_TYPES, doc="one value where the mask holds"),
            Input("otherwise", REAL_TYPES, doc="one value where it does not"),
        ),
        attrs=(
            Attr("causal_and", BOOL, True, doc="the boolean conjoined with the causal comparison"),
            Attr("broadcast_mode", LOWER_STRING, "bidirectional", ("numpy", "bidirectional"), doc="as Broadcast's"),
        ),
        version="template",
        doc="where(broadcast(causal & padding, shape), then, otherwise) in one kernel.",
    )
)


@kernel(CAUSAL_MASK)
def _causal_mask_kernel(
    node: Node, mask: Any, positions: Any, total: Any, batch: Any, shape: Any, then: Any, otherwise: Any
) -> np.ndarray:
    mask, positions = np.asarray(mask), np.asarray(positions)
    count, rows = int(np.asarray(total).reshape(-1)[0]), int(np.asarray(batch).reshape(-1)[0])
    keys = np.arange(max(count, 0))
    if rows > mask.shape[0] or keys.size > mask.shape[1]:
        raise IndexError(
            f"the padding mask {list(mask.shape)} has fewer than batch = {rows} rows or total = {count} positions "
            "(past + new tokens): pass an attention mask covering the past and the new tokens"
        )
    causal = keys <= positions[:, np.newaxis]
    if not node.attrs["causal_and"]:
        causal = np.zeros_like(causal)
    held = causal & (mask[: max(rows, 0), : keys.size] != 0)[:, np.newaxis, np.newaxis, :]
    target = tuple(np.asarray(shape).reshape(-1).tolist())
    if node.attrs["broadcast_mode"] == "bidirectional":
        target = broadcast_shape(held.shape, target)
    if target != held.shape:
        held = np.broadcast_to(held, target)
    return np.where(held, np.asarray(then).reshape(()), np.asarray(otherwise).reshape(()))


class CausalMaskFusion(MatcherPass):
    """Fuses transformers' exported causal-and-padding mask into ``TemplateCausalMask``:
    ``Select(Broadcast(LogicalAnd([LogicalAnd(c,] LessEqual(J, I)[)], GatherND(Convert(mask, boolean),
    Concat(Unsqueeze(Broadcast(B, S), -1), Unsqueeze(Broadcast(J, S), -1), -1))), shape), then, else)``
    with ``J``, ``I`` and ``B`` Unsqueezes of ``Range(0, total, 1)``, the positions and ``Range(0, batch, 1)``
    to ``[1, 1, 1, T]``, ``[1, 1, s, 1]`` and ``[b, 1, 1, 1]``, ``S = ShapeOf(Maximum(B, J))``, ``c`` a
    one-value boolean Constant, ``then`` and ``else`` one-value Constants, either operand order of the
    LogicalAnds and the Maximum. Nodes of the block used elsewhere (the positions' rotary tables) stay.
    """

    name = "TemplateCausalMaskFusion"
    anchors = ("Select",)

    def apply(self, model: Model, select: Node, users: ConsumerMap) -> bool:
        test, then, otherwise = select.input_values()
        if not (_one_value(then) and _one_value(otherwise)) or select.attrs.get("auto_broadcast") != "numpy":
            return False
        expand = test.node
        if expand.type_name != "Broadcast" or expand.get_input_size() != 2:
            return False
        if expand.input_value(1).partial_shape.rank != 1 or expand.input_value(1).partial_shape[0] < 0:
            return False
        if expand.attrs["mode"] not in ("numpy", "bidirectional") or then.element_type.value not in ("f32", "f64"):
            return False
        both = expand.input_value(0).node
        if both.type_name != "LogicalAnd" or both.attrs.get("auto_broadcast") != "numpy":
            return False
        for index in (0, 1):
            gather, causal = both.input_value(index).node, both.input_value(1 - index).node
            if gather.type_name != "GatherND":
                continue
            causal_and, compare = _with_constant_and(causal)
            if compare is None or compare.type_name != "LessEqual":
                return False
            keys = _unsqueezed(compare.input_value(0), (1, 1, 1, 7))
            positions = _unsqueezed(compare.input_value(1), (1, 1, 7, 1))
            total = None if keys is None else _range_from_zero(keys[0])
            if keys is None or positions is None or total is None:
                return False
            padding = _padding(gather, compare.input_value(0))
            if padding is None:
                return False
            mask, batch, padding_nodes = padding
            fused = causal_mask(
                mask, positions[0], total[0], batch, expand.input_value(1), then, otherwise,
                causal_and=causal_and, broadcast_mode=expand.attrs["mode"],
            )  # fmt: skip
            block = [expand, both, *([causal] if causal is not compare else []), compare]
            block += [*keys[1], *total[1], *positions[1], *padding_nodes]
            replace_node(model, select, fused, fused=block, consumers=users)
            return True
        return False


def _one_value(output: Output) -> bool:
    return output.node.type_name == "Constant" and np.asarray(output.node.attrs["value"]).size == 1


def _ints(output: Output) -> list[int] | None:
    if output.node.type_name != "Constant" or output.element_type.value not in ("i32", "i64"):
        return None
    return [int(v) for v in np.asarray(output.node.attrs["value"]).reshape(-1)]


def _with_constant_and(node: Node) -> tuple[bool, Node | None]:
    """``(c, x)`` for ``LogicalAnd(c, x)`` (either order) of a one-value boolean Constant ``c``; ``(True, node)``
    for anything else."""
    if node.type_name == "LogicalAnd" and node.attrs.get("auto_broadcast") == "numpy":
        for index in (0, 1):
            constant = node.input_value(index)
            if _one_value(constant) and constant.element_type == Type.boolean and constant.partial_shape.rank <= 4:
                return bool(np.asarray(constant.node.attrs["value"]).reshape(-1)[0]), node.input_value(1 - index).node
        return True, None
    return True, node


def _unsqueezed(output: Output, layout: tuple[int, ...]) -> tuple[Output, list[Node]] | None:
    """``(x, unsqueezes)`` when ``output`` is a chain of Unsqueezes (Constant axes) of a 1-D ``x`` that
    lays ``x``'s axis out as ``layout`` (7 standing for it); else None."""
    nodes: list[Node] = []
    axes_seen: list[list[int]] = []
    while output.node.type_name == "Unsqueeze":
        axes = _ints(output.node.input_value(1))
        if axes is None:
            return None
        nodes.append(output.node)
        axes_seen.append(axes)
        output = output.node.input_value(0)
    if not nodes or output.partial_shape.rank != 1:
        return None
    shape: tuple[int, ...] = (7,)
    for axes in reversed(axes_seen):
        shape = unsqueezed_dims(shape, axes)
    return (output, nodes) if shape == layout else None


def _range_from_zero(output: Output) -> tuple[Output, list[Node]] | None:
    """``(end, [range])`` when ``output`` is ``Range(0, end, 1)`` of integers; else None."""
    node = output.node
    if node.type_name != "Range" or output.element_type.value not in ("i32", "i64"):
        return None
    if _ints(node.input_value(0)) != [0] or _ints(node.input_value(2)) != [1]:
        return None
    end = node.input_value(1)
    return (end, [node]) if end.element_type.value in ("i32", "i64") and end.partial_shape.rank == 0 else None


def _padding(gather: Node, keys: Output) -> tuple[Output, Output, list[Node]] | None:
    """``(mask, batch, nodes)`` when ``gather`` is ``GatherND(Convert(mask, boolean), Concat(Unsqueeze(
    Broadcast(B, S), -1), Unsqueeze(Broadcast(keys, S), -1), -1))`` with ``B`` the Unsqueezes of
    ``Range(0, batch, 1)`` to ``[b, 1, 1, 1]`` and ``S = ShapeOf(Maximum(B, keys))``; else None."""
    if gather.attrs["batch_dims"] != 0:
        return None
    convert, grid = gather.input_value(0).node, gather.input_value(1).node
    if convert.type_name != "Convert" or convert.attrs["destination_type"] != Type.boolean:
        return None
    mask = convert.input_value(0)
    if mask.element_type.value not in _MASK_TYPES or mask.partial_shape.rank != 2:
        return None
    if grid.type_name != "Concat" or grid.get_input_size() != 2 or grid.attrs["axis"] not in (-1, 4):
        return None
    expanded: list[tuple[Output, Output, Node, Node]] = []
    for source in grid.input_values():
        last = source.node
        if last.type_name != "Unsqueeze" or _ints(last.input_value(1)) not in ([-1], [4]):
            return None
        broadcast = last.input_value(0).node
        if broadcast.type_name != "Broadcast" or broadcast.get_input_size() != 2:
            return None
        if broadcast.attrs["mode"] not in ("numpy", "bidirectional"):
            return None
        expanded.append((broadcast.input_value(0), broadcast.input_value(1), broadcast, last))
    (rows, rows_shape, *rows_nodes), (columns, columns_shape, *columns_nodes) = expanded
    if columns != keys or rows_shape != columns_shape:
        return None
    shape_of = rows_shape.node
    maximum = shape_of.input_value(0).node if shape_of.type_name == "ShapeOf" else None
    if maximum is None or maximum.type_name != "Maximum" or maximum.attrs.get("auto_broadcast") != "numpy":
        return None
    if [maximum.input_value(0), maximum.input_value(1)] not in ([rows, keys], [keys, rows]):
        return None
    batch_rows = _unsqueezed(rows, (7, 1, 1, 1))
    batch = None if batch_rows is None else _range_from_zero(batch_rows[0])
    if batch_rows is None or batch is None:
        return None
    nodes = [gather, convert, grid, *rows_nodes, *columns_nodes, shape_of, maximum, *batch_rows[1], *batch[1]]
    return mask, batch[0], nodes
