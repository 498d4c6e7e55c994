"""f32 Softmax over the last axis through the XLA device's native kernel (``hetero_sdk_softmax_f32``,
:mod:`hetero_sdk_jax.native`, source ``native/src/softmax_f32.cc``).

XLA traces Softmax's definition into three loops (the max with the subtraction and exp, the sum, the multiply
by its reciprocal) around XLA's exp; the kernel runs each row in three vector passes with the native kernels'
exponential (``native/src/avx512_math.h``, about 1 ulp). At PP-OCRv4 rec's output layer, 40 rows of 6625
classes, it took 0.65x XLA's time (one thread, CPU time). :func:`native_softmax` is called where
:func:`runs_natively` says yes; elsewhere the definition runs (short rows stay in XLA, which fuses them with
their neighbours: an attention's scores with their product).

The second kernel (``hetero_sdk_softmax_expectation_f32``) computes the expectation of constant weights under a
Softmax over any axis, the op :data:`~hetero_sdk_jax.softmax_expectation.SOFTMAX_EXPECTATION_OP` (YOLOv8's DFL
head: 16 bins by 8400 anchors), 16 positions of the axes after it at a time, without storing the Softmax:
:func:`native_expectation` where :func:`expectation_runs_natively` says yes.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp

from hetero_sdk_jax.native import use_native

__all__ = [
    "EXPECTATION_TARGET",
    "MIN_COLUMNS",
    "MAX_LAST_BINS",
    "MIN_INNER",
    "TARGET",
    "expectation_runs_natively",
    "native_expectation",
    "native_softmax",
    "runs_natively",
]

TARGET = "hetero_sdk_softmax_f32"
"""The native kernel's FFI target."""

EXPECTATION_TARGET = "hetero_sdk_softmax_expectation_f32"
"""The expectation kernel's FFI target."""

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


MIN_INNER = 16
"""The fewest values after the Softmax's axis (one vector of the kernel) for which the expectation kernel runs."""

MAX_LAST_BINS = 64
"""Up to this many positions of the axis (the kernel's limit) the expectation is taken with the axis moved last,
``x`` as ``[rows, C]`` (16 rows a vector, transposed in registers at C = 16, gathered otherwise): YOLOv8's DFL
head comes from channels-last convolutions, where that order is a slice of the head rather than a transpose
(XLA's copy 89 -> 17-19 us, the kernel 45 -> 60-63 us, the result's transpose fused with its consumer's)."""


def expectation_runs_natively(x: Any, axis: int) -> bool:
    """Whether the expectation under the Softmax of ``x`` along ``axis`` runs the kernel: f32, at least
    :data:`MIN_INNER` values after ``axis``, and the lowering being traced may call the kernel."""
    axis %= max(x.ndim, 1)
    return (
        x.dtype == jnp.float32
        and x.ndim >= 1
        and math.prod(x.shape[axis + 1 :]) >= MIN_INNER
        and use_native(EXPECTATION_TARGET)
    )


def native_expectation(x: Any, weights: Any, axis: int) -> Any:
    """``sum(softmax(x, axis) * weights, axis, keepdims=True)`` of f32 ``x`` through the kernel; ``weights``
    holds one f32 value per position of ``axis``. Up to :data:`MAX_LAST_BINS` positions the axis is moved last
    (the axes after it first), else ``x`` goes as ``[outer, C, inner]`` slabs."""
    axis %= x.ndim
    outer, inner = math.prod(x.shape[:axis]), math.prod(x.shape[axis + 1 :])
    w = jnp.reshape(jnp.asarray(weights, jnp.float32), (x.shape[axis],))
    if x.shape[axis] <= MAX_LAST_BINS:
        order = (*range(axis + 1, x.ndim), *range(axis), axis)  # the axes after, those before, the bins last
        rows = jnp.reshape(jnp.transpose(x, order), (inner * outer, x.shape[axis]))
        flat = jax.ffi.ffi_call(EXPECTATION_TARGET, jax.ShapeDtypeStruct((inner * outer,), jnp.float32))(rows, w)
        out = jnp.transpose(jnp.reshape(flat, (inner, outer)))
        return jnp.reshape(out, (*x.shape[:axis], 1, *x.shape[axis + 1 :]))
    slabs = jnp.reshape(x, (outer, x.shape[axis], inner))
    out = jax.ffi.ffi_call(EXPECTATION_TARGET, jax.ShapeDtypeStruct((outer, inner), jnp.float32))(slabs, w)
    return jnp.reshape(out, (*x.shape[:axis], 1, *x.shape[axis + 1 :]))
