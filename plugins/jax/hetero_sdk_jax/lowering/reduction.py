"""Lowerings of ReduceSum, ReduceMean, ReduceProd, ReduceMax and ReduceMin over axes known at compile time."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node
from hetero_sdk.plugin import reduced_axes, type_limits

from hetero_sdk_jax.lowering.registry import lowering, widened


@lowering("ReduceSum", "ReduceProd", "ReduceMean")
def reduce_arithmetic(node: Node, x: jnp.ndarray, axes: np.ndarray) -> jnp.ndarray:
    axis, keep = reduced_axes(x.ndim, axes), node.attrs["keep_dims"]
    if node.type_name == "ReduceProd":
        return jnp.prod(widened(x), axis=axis, keepdims=keep)
    integral = jnp.issubdtype(x.dtype, jnp.integer)
    # Integer sums wrap in the output type either way; a mean needs the exact sum first.
    wide = x.astype(jax.dtypes.canonicalize_dtype(jnp.int64)) if integral else widened(x)
    total = jnp.sum(wide, axis=axis, keepdims=keep)
    if node.type_name == "ReduceSum":
        return total
    count = math.prod(x.shape[a] for a in axis)
    if count == 0:  # OpenVINO gives 0, not NaN, for the mean of nothing
        return jnp.zeros_like(total)
    if integral:
        return jnp.sign(total) * (jnp.abs(total) // count)  # rounds toward zero
    return total / count


@lowering("ReduceMax", "ReduceMin")
def reduce_extreme(node: Node, x: jnp.ndarray, axes: np.ndarray) -> jnp.ndarray:
    axis, keep = reduced_axes(x.ndim, axes), node.attrs["keep_dims"]
    lowest, highest = type_limits(x.dtype)
    is_max = node.type_name == "ReduceMax"
    if any(x.shape[a] == 0 for a in axis):  # the type's limits only for an empty set: -inf stays -inf
        shape = tuple(1 if a in axis else d for a, d in enumerate(x.shape) if keep or a not in axis)
        return jnp.full(shape, lowest if is_max else highest, x.dtype)
    return jnp.max(x, axis=axis, keepdims=keep) if is_max else jnp.min(x, axis=axis, keepdims=keep)
