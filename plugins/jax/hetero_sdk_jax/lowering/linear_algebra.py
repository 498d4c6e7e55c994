"""Lowering of MatMul: f32 and f64 at full precision, 16-bit floats accumulated in f32."""

from __future__ import annotations

import jax.numpy as jnp
from hetero_sdk import Node

from hetero_sdk_jax.lowering.registry import lowering, precision_of


def accumulation(dtype: jnp.dtype) -> jnp.dtype | None:
    """The accumulator type of a matrix product or convolution: f32 for 16-bit floats, else the own type."""
    return jnp.dtype(jnp.float32) if jnp.issubdtype(dtype, jnp.floating) and dtype.itemsize < 4 else None


@lowering("MatMul")
def matmul(node: Node, a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    if a.ndim > 1 and node.attrs["transpose_a"]:
        a = jnp.swapaxes(a, -1, -2)
    if b.ndim > 1 and node.attrs["transpose_b"]:
        b = jnp.swapaxes(b, -1, -2)
    return jnp.matmul(a, b, precision=precision_of(a.dtype), preferred_element_type=accumulation(a.dtype))
