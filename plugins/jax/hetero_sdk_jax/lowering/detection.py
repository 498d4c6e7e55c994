"""Lowering of TopK. NonZero and NonMaxSuppression have none: their output shapes depend on values,
which XLA's static shapes cannot express (they run on XLA only when folded to constants). ROIAlign traces
its definition's kernel, except with an adaptive sampling ratio (a sample count per region that depends
on the region's coordinates), which XLA declines."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node
from jax import lax

from hetero_sdk_jax.lowering.registry import lowering, lowering_check


@lowering("TopK")
def topk(node: Node, data: jnp.ndarray, k: np.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    axis = node.attrs["axis"] % data.ndim
    count = int(k.reshape(()))
    moved = jnp.moveaxis(data, axis, -1)
    # XLA sorts -0.0 below 0.0; the reference ranks them equal (the lower index first).
    keys = (
        jnp.where(moved == 0, jnp.zeros((), moved.dtype), moved) if jnp.issubdtype(moved.dtype, jnp.floating) else moved
    )
    if node.attrs["mode"] == "max":
        _, indices = lax.top_k(keys, count)  # equal values: the lower index first
    else:
        indices = jnp.argsort(keys, axis=-1, stable=True)[..., :count]
    if node.attrs["sort"] == "index":
        indices = jnp.sort(indices, axis=-1)
    values = jnp.take_along_axis(moved, indices, axis=-1)
    return jnp.moveaxis(values, -1, axis), jnp.moveaxis(indices, -1, axis)


@lowering_check("ROIAlign")
def roi_align_problem(node: Node) -> str | None:
    """Why XLA cannot run this ROIAlign, or None when it can."""
    if node.attrs["sampling_ratio"] == 0:
        return "sampling_ratio 0 takes a number of samples per region that depends on its coordinates"
    return None
