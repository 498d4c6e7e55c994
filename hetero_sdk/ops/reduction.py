"""Reductions over axes given as an input: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd.

Their array-API kernel accumulates in f64 and i64, as an oracle must; a device whose widest types are
narrower (XLA without 64-bit types) registers its own, sharing the axes and the identities of empty
reductions (:func:`reduced_axes`, :func:`type_limits`).
"""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np

from hetero_sdk.array_api import namespace
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import BOOL, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import INDEX_TYPES, NUMERIC_TYPES, expect_rank, normalize_axis
from hetero_sdk.ops.inputs import index_input, known_ints, static_length
from hetero_sdk.shape import DYNAMIC

__all__ = [
    "REDUCTIONS", "reduce_max", "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum", "reduced_axes",
    "type_limits",
]  # fmt: skip


def reduced_axes(rank: int, axes: Any) -> tuple[int, ...]:
    """The distinct axes a reduction over ``axes`` (any ints in ``[-rank, rank)``) reduces, sorted."""
    return tuple(sorted({int(a) % rank for a in np.asarray(axes).reshape(-1)})) if rank else ()


def type_limits(dtype: Any) -> tuple[int, int] | tuple[float, float]:
    """The lowest and highest finite values of ``dtype``: the identities of an empty max and min."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)
    info = ml_dtypes.finfo(dtype)  # bfloat16 too
    return float(info.min), float(info.max)


def _evaluate(node: Node, x: Any, axes: Any) -> Any:
    xp = namespace(x)
    axis, keep = reduced_axes(x.ndim, axes), node.attrs["keep_dims"]
    integral = np.dtype(x.dtype).kind in "iu"
    wide = xp.astype(x, np.int64 if integral else np.float64)
    count = math.prod(x.shape[a] for a in axis)
    kind = node.type_name
    if kind in ("ReduceMax", "ReduceMin") and count == 0:
        shape = tuple(1 if i in axis else d for i, d in enumerate(x.shape) if keep or i not in axis)
        return xp.full(shape, type_limits(x.dtype)[0 if kind == "ReduceMax" else 1], dtype=wide.dtype)
    reduce = {"ReduceMax": xp.max, "ReduceMin": xp.min, "ReduceProd": xp.prod}.get(kind, xp.sum)
    total = reduce(wide, axis=axis, keepdims=keep)
    if kind != "ReduceMean":
        return total
    if count == 0:  # OpenVINO gives 0, not NaN, for the mean of nothing
        return xp.zeros_like(total)
    return xp.sign(total) * (xp.abs(total) // count) if integral else total / count


def _reduce(type_name: str, data: Any, axes: Any, keep_dims: bool, name: str | None) -> Node:
    return Node(REDUCTIONS[type_name], [as_output(data), index_input(axes)], {"keep_dims": keep_dims}, name)


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
    element_type = node.input_value(0).element_type
    axes_shape = expect_rank(node, 1, 0, 1, what="axes")
    keep_dims = node.attrs["keep_dims"]
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


_DOCS = {
    "ReduceSum": "the sum",
    "ReduceMean": "the mean (integers truncate toward zero; the mean of nothing is 0)",
    "ReduceMax": "the maximum (of nothing: the type's lowest value)",
    "ReduceMin": "the minimum (of nothing: the type's highest value)",
    "ReduceProd": "the product",
}

REDUCTIONS: dict[str, OpDef] = {
    type_name: define(
        OpDef(
            type_name,
            "reduction",
            _infer_reduce,
            inputs=(
                Input("data", NUMERIC_TYPES),
                Input("axes", INDEX_TYPES, decides_shape=True, doc="scalar or 1D; repeats count once"),
            ),
            attrs=(Attr("keep_dims", BOOL, False, doc="keep each reduced axis as a dimension of size 1"),),
            evaluate=_evaluate,
            doc=f"Reduces data over axes to {doc}.",
        )
    )
    for type_name, doc in _DOCS.items()
}
"""The reduction ops by type name."""
