"""XLA's lowerings of Divide, Power and Mod (the other elementwise ops trace their definitions'
array-API kernels)."""

from __future__ import annotations

import jax.numpy as jnp
from hetero_sdk import Node
from jax import lax

from hetero_sdk_jax.lowering.registry import lowering


@lowering("Mod")
def mod(node: Node, a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    return jnp.fmod(a, b)


@lowering("Divide")
def divide(node: Node, a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    if not jnp.issubdtype(a.dtype, jnp.integer):
        return jnp.true_divide(a, b)
    if node.attrs.get("python_division", True):
        return jnp.floor_divide(a, b)
    a, b = jnp.broadcast_arrays(a, b)
    return lax.div(a, b)  # rounds toward zero


@lowering("Power")
def power(node: Node, a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    if not jnp.issubdtype(a.dtype, jnp.integer):
        return jnp.power(a, b)
    a, b = jnp.broadcast_arrays(a, b)
    exact = jnp.power(a, jnp.maximum(b, 0))
    if not jnp.issubdtype(a.dtype, jnp.signedinteger):
        return exact
    # a ** -k truncated toward zero: 1 stays 1, -1 alternates sign, anything else is 0.
    odd = (b % 2) != 0
    reciprocal = jnp.where(a == 1, 1, jnp.where(a == -1, jnp.where(odd, -1, 1), 0)).astype(a.dtype)
    return jnp.where(b >= 0, exact, reciprocal)
