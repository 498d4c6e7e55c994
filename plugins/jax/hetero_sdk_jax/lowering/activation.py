"""XLA's lowerings of Erf and Gelu, which use ``lax.erf`` and ``lax.erfc`` (the array API has no error
function), of HSwish and of :data:`~hetero_sdk_jax.level_lookup.LEVEL_LOOKUP`; the other activations trace
their definitions' array-API kernels."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node
from hetero_sdk.plugin import gelu_tanh
from jax import lax

from hetero_sdk_jax.level_lookup import LEVEL_LOOKUP
from hetero_sdk_jax.lowering.kernels.level_lookup import lookup_index, native_lookup, runs_natively
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


@lowering("HSwish")
def hswish(node: Node, x: jnp.ndarray) -> jnp.ndarray:
    """``x * min(max(x / 6 + 1/2, 0), 1)``, the definition's ``x * min(max(x + 3, 0), 6) / 6`` with the
    division moved into the gate. XLA:CPU otherwise fuses the division of the product into its
    consumers (MobileNetV3's squeeze-and-excitation means, PP-OCR rec's average pool) as a multiply
    by 1/6 that it materialises as a tensor-sized array on every call."""
    x = widened(x)
    return x * jnp.clip(x / 6 + 0.5, 0, 1)


@lowering(LEVEL_LOOKUP)
def level_lookup(node: Node, levels: jnp.ndarray) -> jnp.ndarray:
    """The native kernel where it runs (:mod:`.kernels.level_lookup` says why), else a gather from the
    table at the same indices."""
    table = np.asarray(node.attrs["table"], np.float32)
    low, nan_entry = node.attrs["low"], node.attrs["nan_entry"]
    if runs_natively(table):
        return native_lookup(levels, table, low, nan_entry)
    return jnp.take(jnp.asarray(table), lookup_index(levels, low, table.size, nan_entry), mode="clip")
