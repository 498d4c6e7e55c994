"""Shape checks the contrib ops' shape inference shares (what the plugin facade's ``expect_rank`` and
``expect_same_types`` do not say), and the type of what an ONNX rule returns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hetero_sdk import Node, PartialShape

__all__ = ["Outputs", "broadcast", "merge_dims", "normalize_axis"]

Outputs = Sequence[Any]
"""What an ONNX rule returns: one value per ONNX output of the node, None where it is not produced."""


def merge_dims(node: Node, a: int, b: int, what: str) -> int:
    """The dimension two dimensions agree on (-1: dynamic, agreeing with any); ``node.error(what)``
    when they differ."""
    if a < 0:
        return b
    if b >= 0 and a != b:
        raise node.error(what)
    return a


def broadcast(node: Node, a: PartialShape, b: PartialShape) -> PartialShape:
    """numpy's broadcast of two shapes, dynamic dimensions taking the other's; a dynamic rank stays
    dynamic. :raises ModelValidationError: when they do not broadcast."""
    if not a.rank_is_static or not b.rank_is_static:
        return PartialShape.dynamic()
    rank = max(a.rank, b.rank)
    left = [1] * (rank - a.rank) + list(a.dims)
    right = [1] * (rank - b.rank) + list(b.dims)
    dims = []
    for x, y in zip(left, right):
        if x == 1 or y == 1:
            dims.append(y if x == 1 else x)
        else:
            dims.append(merge_dims(node, x, y, f"shapes {a} and {b} do not broadcast"))
    return PartialShape(dims)


def normalize_axis(node: Node, axis: int, rank: int, what: str = "axis") -> int:
    """``axis`` in ``[0, rank)`` (negative counts from the end). :raises ModelValidationError: out of range."""
    if not -rank <= axis < rank:
        raise node.error(f"{what} {axis} is out of range for rank {rank}; expected {-rank}..{rank - 1}")
    return axis % rank
