"""Checks shared by op definitions' shape inference (what declarations cannot say): element types that
must agree, ranks, broadcasting, axes and dimensions; and the element-type groups inputs declare."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from hetero_sdk.element_type import Type
from hetero_sdk.shape import DYNAMIC, PartialShape, broadcast_shapes

if TYPE_CHECKING:
    from hetero_sdk.graph.node import Node

REAL_TYPES = frozenset({Type.f32, Type.f16, Type.bf16, Type.f64})
INTEGRAL_TYPES = frozenset(t for t in Type if t.is_integral and t.bitwidth >= 8)
"""The integer types ops compute in: the 4- and 2-bit ones are storage types (Convert and data movement)."""
NUMERIC_TYPES = REAL_TYPES | INTEGRAL_TYPES
INDEX_TYPES = frozenset({Type.i32, Type.i64})


def expect_type(node: Node, index: int, allowed: Collection[Type], what: str = "") -> Type:
    """Returns input ``index``'s element type, raising unless it is in ``allowed``."""
    t = node.input_value(index).element_type
    if t not in allowed:
        names = ", ".join(sorted(a.value for a in allowed))
        label = what or f"input {index}"
        raise node.error(f"{label} has element type {t.value}; expected one of: {names}")
    return t


def expect_same_types(node: Node, *indices: int) -> Type:
    """Returns the common element type of the given inputs, raising when they differ."""
    types = [node.input_value(i).element_type for i in indices]
    if len(set(types)) != 1:
        listed = ", ".join(f"input {i}: {t.value}" for i, t in zip(indices, types))
        raise node.error(f"inputs must share one element type ({listed}); insert a Convert")
    return types[0]


def expect_rank(node: Node, index: int, *ranks: int, what: str = "") -> PartialShape:
    """Returns input ``index``'s shape, raising unless its rank is one of ``ranks``."""
    shape = node.input_value(index).partial_shape
    if shape.rank not in ranks:
        label = what or f"input {index}"
        raise node.error(f"{label} has rank {shape.rank} ({shape}); expected rank {' or '.join(map(str, ranks))}")
    return shape


def broadcast(node: Node, a: PartialShape, b: PartialShape, mode: str = "numpy") -> PartialShape:
    """The result shape of an elementwise op with ``auto_broadcast=mode``."""
    if mode == "none":
        merged = a.merge(b)
        if merged is None:
            raise node.error(f"auto_broadcast='none' needs equal shapes, got {a} and {b}")
        return merged
    if mode != "numpy":
        raise node.error(f"auto_broadcast={mode!r} is not supported; use 'numpy' or 'none'")
    shape = broadcast_shapes(a, b)
    if shape is None:
        raise node.error(f"shapes {a} and {b} do not broadcast (numpy rules)")
    return shape


def normalize_axis(node: Node, axis: int, rank: int, what: str = "axis") -> int:
    """``axis`` made non-negative, raising when outside ``[-rank, rank)``."""
    if not -rank <= axis < rank:
        raise node.error(f"{what} {axis} is out of range for rank {rank}; expected {-rank}..{rank - 1}")
    return axis % rank if rank else 0


def dim_mul(a: int, b: int) -> int:
    """Product of two dims, dynamic when either is."""
    return DYNAMIC if DYNAMIC in (a, b) else a * b


def dims_equal_or_dynamic(a: int, b: int) -> bool:
    """True when two dims can be equal."""
    return a == b or DYNAMIC in (a, b)


def merge_dims(node: Node, a: int, b: int, what: str) -> int:
    """The more precise of two dims that must be equal, raising when they differ."""
    if not dims_equal_or_dynamic(a, b):
        raise node.error(f"{what}: {a} != {b}")
    return b if a == DYNAMIC else a
