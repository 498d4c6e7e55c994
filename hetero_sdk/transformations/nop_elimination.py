"""No-op elimination: ops whose output equals their input are removed (``ov::pass::NopElimination``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hetero_sdk.transformations.graph_rewrite import ConsumerMap, eliminate_node

if TYPE_CHECKING:
    from hetero_sdk.graph.model import Model
    from hetero_sdk.graph.node import Node

__all__ = ["NopElimination", "is_nop"]

RESHAPING = frozenset({"Reshape", "Squeeze", "Unsqueeze", "Broadcast", "Tile"})
"""Ops that only rearrange data in row-major order: with an unchanged shape they change nothing."""


def is_nop(node: Node) -> bool:
    """True when ``node``'s single output always equals its input 0, element for element.

    That holds for a ``Convert`` to the input's own element type, a ``Transpose`` whose order is a
    Constant ``0, 1, ..., rank-1``, a ``Concat`` of one input, and a ``Reshape``, ``Squeeze``,
    ``Unsqueeze``, ``Broadcast`` or ``Tile`` whose static output shape equals its static input shape.
    """
    if node.get_output_size() != 1 or node.get_input_size() == 0:
        return False
    source = node.input_value(0)
    port = node.output(0)
    if source.element_type != port.element_type:
        return False
    kind = node.type_name
    if kind == "Convert":
        return True
    if kind == "Concat":
        return node.get_input_size() == 1
    if kind == "Transpose":
        order = node.input_value(1) if node.get_input_size() == 2 else None
        if order is None or order.node.type_name != "Constant":
            return False
        value = np.asarray(order.node.attrs["value"]).reshape(-1)
        if not source.partial_shape.rank_is_static:  # it gives the rank: keep it
            return False
        rank = source.partial_shape.rank
        return value.size == rank and bool(np.array_equal(value, np.arange(rank)))
    if kind in RESHAPING:
        shape = source.partial_shape
        return shape.is_static and port.partial_shape == shape
    return False


class NopElimination:
    """Removes every op :func:`is_nop` recognises, connecting its consumers to its input.

    The op's input producer absorbs its fused-names record and, when a model output reads the op,
    its tensor names (:func:`~hetero_sdk.transformations.graph_rewrite.eliminate_node`; an op between
    a Parameter and a Result stays, since the model's input and output names must both survive).
    """

    name = "NopElimination"

    def run(self, model: Model) -> bool:
        """Eliminates the no-ops of ``model``; returns True when one was removed."""
        users = ConsumerMap(model)
        changed = False
        for node in model.get_ops():
            if is_nop(node) and users.count(node.output(0)):
                changed |= eliminate_node(model, node, node.input_value(0), users)
        return changed
