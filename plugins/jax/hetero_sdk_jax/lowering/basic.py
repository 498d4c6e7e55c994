"""XLA's lowering of BitCast: ``lax.bitcast_convert_type``; booleans, which XLA does not bitcast, become
their one-byte integer values (the same bits)."""

from __future__ import annotations

import jax.numpy as jnp
from hetero_sdk import Node
from jax import lax

from hetero_sdk_jax.lowering.registry import lowering


@lowering("BitCast")
def bit_cast(node: Node, data: jnp.ndarray) -> jnp.ndarray:
    target = node.attrs["destination_type"].numpy
    if data.dtype == jnp.bool_:
        data = data.astype(jnp.uint8)
    if target == jnp.bool_:
        return lax.bitcast_convert_type(data, jnp.uint8) != 0
    return lax.bitcast_convert_type(data, target)
