"""XLA's lowerings of the scatters: ``x.at[positions]`` with the update or fold each reduction names
(GatherND and ReverseSequence trace their definitions' array-API kernels). Out-of-range indices are
dropped, as ``jax.numpy`` does; TEMPLATE raises for them."""

from __future__ import annotations

import jax.numpy as jnp
from hetero_sdk import Node
from hetero_sdk.plugin import scatter_positions

from hetero_sdk_jax.lowering.registry import lowering

_METHODS = {"none": "set", "sum": "add", "prod": "multiply", "min": "min", "max": "max"}


@lowering("ScatterElementsUpdate", "ScatterNDUpdate")
def scatter(node: Node, data: jnp.ndarray, indices: jnp.ndarray, updates: jnp.ndarray) -> jnp.ndarray:
    where = scatter_positions(node, jnp, data.shape, indices)
    update = getattr(data.at[where], _METHODS[node.attrs["reduction"]])
    return update(updates, mode="drop")
