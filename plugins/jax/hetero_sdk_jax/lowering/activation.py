"""XLA's lowerings of Erf and Gelu, which use ``lax.erf`` and ``lax.erfc`` (the array API has no error
function); the other activations trace their definitions' array-API kernels."""

from __future__ import annotations

import math

import jax.numpy as jnp
from hetero_sdk import Node
from hetero_sdk.ops import gelu_tanh
from jax import lax

from hetero_sdk_jax.lowering.registry import lowering, widened


@lowering("Erf")
def erf(node: Node, x: jnp.ndarray) -> jnp.ndarray:
    return lax.erf(widened(x))


@lowering("Gelu")
def gelu(node: Node, x: jnp.ndarray) -> jnp.ndarray:
    x = widened(x)
    if node.attrs["approximation_mode"] == "TANH":
        return gelu_tanh(x)
    return 0.5 * x * lax.erfc(-x / math.sqrt(2))  # erfc keeps the negative tail accurate
