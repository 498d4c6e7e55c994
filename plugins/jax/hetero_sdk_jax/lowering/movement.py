"""XLA's lowering of Gather: one batched ``take`` through ``jax.vmap`` rather than a loop over batch
entries. The other movement ops trace their definitions' array-API kernels."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node

from hetero_sdk_jax.lowering.registry import lowering


@lowering("Gather")
def gather(node: Node, x: jnp.ndarray, indices: jnp.ndarray, axis: np.ndarray) -> jnp.ndarray:
    batch = node.attrs["batch_dims"] % (indices.ndim + 1) if indices.ndim else 0
    dim = int(axis.reshape(-1)[0]) % x.ndim
    size = x.shape[dim]
    valid = (indices >= -size) & (indices < size)
    safe = jnp.where(valid, jnp.where(indices < 0, indices + size, indices), 0)

    def take(data: jnp.ndarray, where: jnp.ndarray) -> jnp.ndarray:
        return jnp.take(data, where, axis=dim - batch, mode="clip")

    for _ in range(batch):
        take = jax.vmap(take)
    out = take(x, safe) if size else jnp.zeros(node.get_output_shape(0), x.dtype)
    # Out-of-range indices give zeros, as in OpenVINO.
    mask_shape = indices.shape[:batch] + (1,) * (dim - batch) + indices.shape[batch:] + (1,) * (x.ndim - dim - 1)
    return jnp.where(valid.reshape(mask_shape), out, jnp.zeros((), x.dtype))
