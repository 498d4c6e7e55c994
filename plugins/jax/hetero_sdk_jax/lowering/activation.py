"""Lowerings of the unary math ops and activations; 16-bit floats are computed in f32, as the reference does."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node
from jax import lax

from hetero_sdk_jax.lowering.registry import lowering, widened

_UNARY = {
    "Tanh": jnp.tanh,
    "Exp": jnp.exp,
    "Log": jnp.log,
    "Sqrt": jnp.sqrt,
    "Floor": jnp.floor,
    "Ceiling": jnp.ceil,
    "Sin": jnp.sin,
    "Cos": jnp.cos,
    "Erf": lax.erf,
    "Sigmoid": jax.nn.sigmoid,
}


@lowering(*_UNARY)
def unary(node: Node, x: jnp.ndarray) -> jnp.ndarray:
    return _UNARY[node.type_name](widened(x))


@lowering("Relu")
def relu(node: Node, x: jnp.ndarray) -> jnp.ndarray:
    return jnp.maximum(x, jnp.zeros((), x.dtype))


@lowering("Abs")
def abs_(node: Node, x: jnp.ndarray) -> jnp.ndarray:
    return jnp.abs(x)


@lowering("Negative")
def negative(node: Node, x: jnp.ndarray) -> jnp.ndarray:
    return jnp.negative(x)


@lowering("Gelu")
def gelu(node: Node, x: jnp.ndarray) -> jnp.ndarray:
    x = widened(x)
    if node.attrs["approximation_mode"] == "TANH":
        return 0.5 * x * (1 + jnp.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)))
    return 0.5 * x * lax.erfc(-x / math.sqrt(2))  # erfc keeps the negative tail accurate


@lowering("Swish")
def swish(node: Node, x: jnp.ndarray, beta: jnp.ndarray | None = None) -> jnp.ndarray:
    x = widened(x)
    scaled = x if beta is None else beta.reshape(()).astype(x.dtype) * x
    return x * jax.nn.sigmoid(scaled)


@lowering("HSwish")
def hswish(node: Node, x: jnp.ndarray) -> jnp.ndarray:
    x = widened(x)
    return x * jnp.clip(x + 3, 0, 6) / 6


@lowering("Clamp")
def clamp(node: Node, x: jnp.ndarray) -> jnp.ndarray:
    low, high = node.attrs["min"], node.attrs["max"]
    if jnp.issubdtype(x.dtype, jnp.integer):
        info = np.iinfo(x.dtype)
        low = min(max(math.ceil(low), int(info.min)), int(info.max))
        high = max(min(math.floor(high), int(info.max)), int(info.min))
    return jnp.clip(x, low, high)
