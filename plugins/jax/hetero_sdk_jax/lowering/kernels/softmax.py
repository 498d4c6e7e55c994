"""f32 Softmax over the last axis through the XLA device's native kernel (``hetero_sdk_softmax_f32``,
:mod:`hetero_sdk_jax.native`, source ``native/src/softmax_f32.cc``).

XLA traces Softmax's definition into three loops (the max with the subtraction and exp, the sum, the multiply
by its reciprocal) around XLA's exp; the kernel runs each row in three vector passes with the native kernels'
exponential (``native/src/avx512_math.h``, about 1 ulp). At PP-OCRv4 rec's output layer, 40 rows of 6625
classes, it took 0.65x XLA's time (one thread, CPU time). :func:`native_softmax` is called where
:func:`runs_natively` says yes; elsewhere the definition runs (short rows stay in XLA, which fuses them with
their neighbours: an attention's scores with their product).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp

from hetero_sdk_jax.native import use_native

__all__ = ["MIN_COLUMNS", "TARGET", "native_softmax", "runs_natively"]

TARGET = "hetero_sdk_softmax_f32"
"""The native kernel's FFI target."""

MIN_COLUMNS = 1024
"""The shortest rows the kernel is used for (shorter ones stay in XLA's loops, fused with their neighbours)."""


def runs_natively(x: Any, axis: int) -> bool:
    """Whether the Softmax of ``x`` along ``axis`` runs the kernel: f32, over the last axis, of rows of at least
    :data:`MIN_COLUMNS` values, and the lowering being traced may call the kernel."""
    return (
        x.dtype == jnp.float32
        and x.ndim >= 1
        and axis % x.ndim == x.ndim - 1
        and x.shape[-1] >= MIN_COLUMNS
        and use_native(TARGET)
    )


def native_softmax(x: Any) -> Any:
    """Softmax of f32 ``x`` ``[..., C]`` over its last axis, through the kernel."""
    flat = jnp.reshape(x, (math.prod(x.shape[:-1]), x.shape[-1]))
    out = jax.ffi.ffi_call(TARGET, jax.ShapeDtypeStruct(flat.shape, jnp.float32))(flat)
    return jnp.reshape(out, x.shape)
