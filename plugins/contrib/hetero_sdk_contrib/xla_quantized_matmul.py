"""XLA's lowerings of :mod:`hetero_sdk_contrib.ops_quantized_matmul`'s MatMulIntegerToFloat and
DynamicQuantizeMatMul (imported only when XLA runs one: the package imports without jax): the integer
product is an i8 x i8 dot accumulating in i32 (``preferred_element_type``), u8 operands shifted to i8 by
flipping their top bit, the zero points applied afterwards through row and column sums:

``(a - za)(b - zb) = a.b - zb sum_k a - za sum_k b + K za zb``.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from hetero_sdk import Node
from jax import lax

from hetero_sdk_contrib.ops_quantized_matmul import dynamically_quantized

__all__ = ["dynamic", "integer_to_float"]


def _as_int8(x: Any, zero: Any | None) -> tuple[Any, Any]:
    """``x`` as i8 and its zero point as i32, the same differences ``x - zero``: u8 shifted by -128."""
    zero = jnp.zeros((), jnp.int32) if zero is None else zero.astype(jnp.int32)
    if x.dtype == jnp.uint8:
        return lax.bitcast_convert_type(x ^ jnp.uint8(0x80), jnp.int8), zero - 128
    return x, zero


def integer_product(a: Any, a_zero: Any | None, b: Any, b_zero: Any | None) -> Any:
    """``(a - a_zero) @ (b - b_zero)`` in i32, from an i8 dot: ``a`` (..., K), ``b`` (K, N), zero points
    per tensor or, for ``b``, per column."""
    a8, za = _as_int8(a, a_zero)
    b8, zb = _as_int8(b, b_zero)
    product = lax.dot_general(a8, b8, (((a8.ndim - 1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    row_sums = jnp.sum(a8, axis=-1, keepdims=True, dtype=jnp.int32)
    column_sums = jnp.sum(b8, axis=0, dtype=jnp.int32)
    return product - zb * row_sums - za * column_sums + a8.shape[-1] * za * zb


def integer_to_float(
    node: Node,
    a: Any,
    b: Any,
    a_scale: Any,
    b_scale: Any,
    a_zero: Any | None = None,
    b_zero: Any | None = None,
    bias: Any | None = None,
) -> Any:
    """MatMulIntegerToFloat: the i32 product times ``a_scale * b_scale``, plus ``bias``."""
    y = integer_product(a, a_zero, b, b_zero).astype(jnp.float32) * (a_scale * b_scale)
    return y if bias is None else y + bias


def dynamic(node: Node, a: Any, b: Any, b_scale: Any, b_zero: Any | None = None, bias: Any | None = None) -> Any:
    """DynamicQuantizeMatMul: ``a`` quantized to u8 over its range, then as MatMulIntegerToFloat."""
    values, scale, zero = dynamically_quantized(a)
    y = integer_product(values, zero, b, b_zero).astype(jnp.float32) * (scale * b_scale)
    return y if bias is None else y + bias
