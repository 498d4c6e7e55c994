"""Lowering of MatMul: f32 and f64 at full precision, 16-bit floats accumulated in f32; a product by a
constant matrix in the native GEMM kernel's class runs it (:mod:`.kernels.gemm`), with its per-column bias
(:data:`~hetero_sdk_jax.matmul_bias.MATMUL_BIAS`) added in the kernel."""

from __future__ import annotations

import jax.numpy as jnp
from hetero_sdk import Node

from hetero_sdk_jax.lowering.kernels import gemm
from hetero_sdk_jax.lowering.registry import lowering, precision_of


def accumulation(dtype: jnp.dtype) -> jnp.dtype | None:
    """The accumulator type of a matrix product or convolution: f32 for 16-bit floats, else the own type."""
    return jnp.dtype(jnp.float32) if jnp.issubdtype(dtype, jnp.floating) and dtype.itemsize < 4 else None


@lowering("MatMul")
def matmul(node: Node, a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    return _product(node, a, b, None)


def _product(node: Node, a: jnp.ndarray, b: jnp.ndarray, bias: jnp.ndarray | None) -> jnp.ndarray:
    """``a @ b (+ bias)`` for a MatMul or :data:`~hetero_sdk_jax.matmul_bias.MATMUL_BIAS` ``node``."""
    packed = gemm.is_packed(node, b)  # B [K, N] packed at compile time by gemm.prepare
    if packed:
        columns = gemm.columns(node)
        if a.dtype == jnp.float32 and b.dtype == jnp.float32:
            return gemm.native_matmul(a, b, columns, bias)
        b = gemm.unpacked_b(b, columns)
    if a.ndim > 1 and node.attrs["transpose_a"]:
        a = jnp.swapaxes(a, -1, -2)
    if b.ndim > 1 and node.attrs["transpose_b"] and not packed:
        b = jnp.swapaxes(b, -1, -2)
    product = jnp.matmul(a, b, precision=precision_of(a.dtype), preferred_element_type=accumulation(a.dtype))
    return product if bias is None else product + bias


@lowering(gemm.MATMUL_BIAS)
def matmul_bias(node: Node, a: jnp.ndarray, b: jnp.ndarray, bias: jnp.ndarray) -> jnp.ndarray:
    """:data:`~hetero_sdk_jax.matmul_bias.MATMUL_BIAS_OP`, ``a @ b + bias``: the native kernel adds ``bias``
    ``[N]`` in its epilogue where ``b`` arrives packed (:func:`.kernels.gemm.prepare`); elsewhere MatMul's
    lowering and the Add, which XLA may fuse."""
    return _product(node, a, b, bias)


matmul.prepare = gemm.prepare  # type: ignore[attr-defined]
matmul_bias.prepare = gemm.prepare  # type: ignore[attr-defined]
