"""XLA's lowering of :mod:`hetero_sdk_contrib.ops_matmul`'s ``FusedMatMul`` (imported only when XLA runs
one: the package imports without jax)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from hetero_sdk import Node
from hetero_sdk.plugin import widened
from jax import lax

from hetero_sdk_contrib.ops_matmul import operands

__all__ = ["fused_matmul"]


def fused_matmul(node: Node, a: Any, b: Any) -> Any:
    """``alpha * op(a) @ op(b)``, at full precision for f32 and wider (no TF32 on GPUs)."""
    a, b = operands(node, widened(a), widened(b))
    precision = lax.Precision.HIGHEST if a.dtype.itemsize >= 4 else lax.Precision.DEFAULT
    return node.attrs["alpha"] * jnp.matmul(a, b, precision=precision)
