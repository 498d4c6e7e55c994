"""A table lookup over f32 levels through the XLA device's native CPU kernel (``hetero_sdk_level_lookup``,
:mod:`hetero_sdk_jax.native`, source ``native/src/level_lookup.cc``), for
:data:`~hetero_sdk_jax.level_lookup.LEVEL_LOOKUP`.

XLA's gather computes the same values, but XLA:CPU fuses it into its consumer (the padding of the next int8
convolution's levels) as a scalar loop: YOLOv8n's QDQ model with its 57 SiLU chains read from tables ran
25 ms with ``jnp.take`` (``mode="clip"``; optimisation barriers around it did not change it) against 12-13
ms for the f32 chains, while a gather alone measured 0.6 ms on 1x32x160x160 (one thread). With the kernel
(XLA's fusion writes u8 indices, the kernel reads the table in one scalar pass): 9.3 ms against 13.1; an
f32-index kernel 12.2 ms, its branch-free form (vectorised with AVX gathers) 15.3 ms.
:func:`native_lookup` is called where :func:`runs_natively` says yes; elsewhere the gather runs, on the
same indices (:func:`lookup_index`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from hetero_sdk_jax.native import use_native

__all__ = ["TARGET", "lookup_index", "native_lookup", "runs_natively"]

TARGET = "hetero_sdk_level_lookup"
"""The native kernel's FFI target."""


def runs_natively(table: np.ndarray) -> bool:
    """Whether the kernel reads from ``table`` (while tracing for the CPU with native kernels on): every
    index, the NaN entry's included, fits a u8."""
    return table.size <= 256 and use_native(TARGET)


def lookup_index(levels: jnp.ndarray, low: int, size: int, nan_entry: bool) -> jnp.ndarray:
    """The index (i32) into a table of ``size`` entries of each level: ``levels - low`` clipped to the
    levels' entries, NaN at the last entry when ``nan_entry``, else at level 0's (as the op's definition
    reads them)."""
    high = low + size - (2 if nan_entry else 1)
    if jnp.issubdtype(levels.dtype, jnp.floating):
        nan = jnp.isnan(levels)
        index = jnp.clip(jnp.where(nan, 0, levels), low, high).astype(jnp.int32) - low
        return jnp.where(nan, size - 1, index) if nan_entry else index
    return jnp.clip(levels.astype(jnp.int32), low, high) - low


def native_lookup(levels: jnp.ndarray, table: np.ndarray, low: int, nan_entry: bool) -> jnp.ndarray:
    """``table[lookup_index(...)]``: f32 of ``levels``' shape, through the native kernel, the u8
    indices computed by XLA."""
    padded = np.zeros(256, np.float32)
    padded[: table.size] = table
    result = jax.ShapeDtypeStruct(levels.shape, jnp.float32)
    index = lookup_index(levels, low, table.size, nan_entry).astype(jnp.uint8)
    return jax.ffi.ffi_call(TARGET, result)(index, jnp.asarray(padded))
