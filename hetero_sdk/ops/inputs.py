"""Reading an op's index-like inputs and its attributes, using what is known at build time.

Shape-like operands (target shapes, axes, pads, slice bounds) are inputs, as in OpenVINO; factories
also take Python lists and ints and turn them into i64 constants (:func:`index_input`). When such an
input is known at build time (see :func:`~hetero_sdk.ops.folding.constant_value`), inference gives
exact dimensions; otherwise it gives the rank, with ``-1`` for each dimension it cannot know.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetero_sdk.graph.limits import RANK, Limit
from hetero_sdk.graph.node import Node, Output
from hetero_sdk.graph.op_def import Input
from hetero_sdk.ops.basic import as_output, constant
from hetero_sdk.ops.checks import INTEGRAL_TYPES, expect_rank, expect_type
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = [
    "INTEGER_TYPES", "index_input", "index_operand", "index_vector", "known_ints", "static_length", "values_or_length",
]  # fmt: skip

INTEGER_TYPES = INTEGRAL_TYPES
"""The element types an index-like input (a shape, axes, pads, slice bounds) may have."""


def index_operand(name: str, doc: str, optional: bool = False) -> Input:
    """The declaration of an index-like input (target shape, axes, pads, bounds): integers whose values
    decide the output shape."""
    return Input(name, INTEGER_TYPES, optional=optional, decides_shape=True, doc=doc)


def index_input(value: Any) -> Output:
    """An index-like operand as an Output: ints and lists or tuples of ints become i64 constants."""
    if isinstance(value, (list, tuple, int, np.integer)) and not isinstance(value, bool):
        return constant(np.asarray(value, dtype=np.int64)).output(0)
    return as_output(value)


def known_ints(node: Node, index: int) -> list[int] | None:
    """Input ``index`` flattened to a list of ints when known at build time, else None."""
    value = constant_value(node.input_value(index))
    return None if value is None else [int(v) for v in np.asarray(value).reshape(-1)]


def static_length(node: Node, shape: PartialShape, what: str, limit: Limit = RANK) -> int:
    """The number of values of a scalar or 1D operand whose values are unknown, raising when dynamic or
    beyond ``limit`` (:data:`~hetero_sdk.graph.limits.RANK`: the length is an output's rank)."""
    length = 1 if shape.rank == 0 else shape[0]
    if length == DYNAMIC:
        raise node.error(
            f"{what} has a dynamic length and values unknown at build time, so the output rank cannot be "
            "inferred; give it a static length or constant values"
        )
    limit.check(length, f"{what} of length {length}", node.error)
    return length


def index_vector(node: Node, index: int, what: str, scalar_ok: bool = False) -> PartialShape:
    """The shape of input ``index``, raising unless it is a 1D tensor of one of :data:`INTEGER_TYPES`.

    :param what: the operand's name in error messages.
    :param scalar_ok: accept a scalar as well.
    """
    expect_type(node, index, INTEGER_TYPES, what)
    return expect_rank(node, index, *((0, 1) if scalar_ok else (1,)), what=what)


def values_or_length(node: Node, index: int, what: str, limit: Limit = RANK) -> tuple[list[int] | None, int]:
    """The values of the 1D integer input ``index`` (None when unknown at build time) and its length.

    :param what: the operand's name in error messages.
    :param limit: the most values it may have (by default :data:`~hetero_sdk.graph.limits.RANK`: its
        length is an output's rank).
    :raises ModelValidationError: when neither its values nor its length are known, or it is too long.
    """
    shape = index_vector(node, index, what)
    values = known_ints(node, index)
    if values is not None:
        limit.check(len(values), f"{what} of length {len(values)}", node.error)
        return values, len(values)
    return values, static_length(node, shape, what, limit)
