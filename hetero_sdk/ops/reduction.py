"""Reductions over axes given as an input: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd."""

from __future__ import annotations

from typing import Any

from hetero_sdk.graph.node import Node
from hetero_sdk.ops.checks import INDEX_TYPES, NUMERIC_TYPES, expect_inputs, expect_rank, expect_type, normalize_axis
from hetero_sdk.ops.inputs import bool_attr, index_input, known_ints, static_length
from hetero_sdk.ops.registry import OutputSpec, as_output, register_op
from hetero_sdk.shape import DYNAMIC

__all__ = ["reduce_max", "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum"]

REDUCTIONS = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd")


def _reduce(type_name: str, data: Any, axes: Any, keep_dims: bool, name: str | None) -> Node:
    return Node(type_name, [as_output(data), index_input(axes)], {"keep_dims": keep_dims}, name)


def reduce_sum(data: Any, axes: Any, keep_dims: bool = False, name: str | None = None) -> Node:
    """Sum over ``axes`` (``ReduceSum``).

    :param data: the tensor to reduce (any numeric type).
    :param axes: the axes to reduce: an i32/i64 scalar or 1D input, or a list of ints; values in
        ``[-rank, rank-1]``, repeats count once; empty reduces nothing.
    :param keep_dims: keep each reduced axis as a dimension of size 1.
    :param name: the node's friendly name.
    """
    return _reduce("ReduceSum", data, axes, keep_dims, name)


def reduce_mean(data: Any, axes: Any, keep_dims: bool = False, name: str | None = None) -> Node:
    """Arithmetic mean over ``axes`` (``ReduceMean``); integers divide with truncation toward zero.

    Parameters as in :func:`reduce_sum`.
    """
    return _reduce("ReduceMean", data, axes, keep_dims, name)


def reduce_max(data: Any, axes: Any, keep_dims: bool = False, name: str | None = None) -> Node:
    """Maximum over ``axes`` (``ReduceMax``); an empty reduction gives the type's lowest value.

    Parameters as in :func:`reduce_sum`.
    """
    return _reduce("ReduceMax", data, axes, keep_dims, name)


def reduce_min(data: Any, axes: Any, keep_dims: bool = False, name: str | None = None) -> Node:
    """Minimum over ``axes`` (``ReduceMin``); an empty reduction gives the type's highest value.

    Parameters as in :func:`reduce_sum`.
    """
    return _reduce("ReduceMin", data, axes, keep_dims, name)


def reduce_prod(data: Any, axes: Any, keep_dims: bool = False, name: str | None = None) -> Node:
    """Product over ``axes`` (``ReduceProd``).

    Parameters as in :func:`reduce_sum`.
    """
    return _reduce("ReduceProd", data, axes, keep_dims, name)


def _infer_reduce(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 2)
    element_type = expect_type(node, 0, NUMERIC_TYPES, "data")
    expect_type(node, 1, INDEX_TYPES, "axes")
    axes_shape = expect_rank(node, 1, 0, 1, what="axes")
    keep_dims = bool_attr(node, "keep_dims", False)
    data = node.input_value(0).partial_shape
    axes = known_ints(node, 1)
    if axes is None:
        if keep_dims:
            return [(element_type, [1 if d == 1 else DYNAMIC for d in data])]
        count = static_length(node, axes_shape, "axes")
        if count > data.rank:
            raise node.error(f"axes has {count} values but data {data} has rank {data.rank}")
        return [(element_type, [DYNAMIC] * (data.rank - count))]
    reduced = {normalize_axis(node, a, data.rank, "axes value") for a in axes}
    if keep_dims:
        return [(element_type, [1 if i in reduced else d for i, d in enumerate(data)])]
    return [(element_type, [d for i, d in enumerate(data) if i not in reduced])]


for _type_name in REDUCTIONS:
    register_op(_type_name, "reduction", shape_inputs=(1,))(_infer_reduce)
