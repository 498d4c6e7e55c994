"""Channel concatenates read in place by the 1x1 convolutions they feed: the native GEMM kernel's multi-operand
in-place path (``hetero_sdk_gemm_f32_fused_concat``, ``native/src/gemm_f32.cc``).

``concat([a, b, c], channels) @ W = a @ W[:Ca] + b @ W[Ca:Ca+Cb] + c @ W[Ca+Cb:]``: the kernel sums the operands'
column ranges in the same registers, B's rows packed as for one operand (:func:`~.gemm.packed_b`), so a channel
Concat (YOLOv8n's C2f, SPPF and neck, YOLOX's CSP blocks) that feeds 1x1 convolutions is never written out. The
channels-last lowering (:mod:`..layout`) records what each concatenate it makes is made of
(:func:`record_concat`), and what each split along the channels is a range of (:func:`record_split`); the fused 1x1
convolution's lowering asks :func:`operands_of` for its data's parts, consecutive ranges of one tensor merged back
into that tensor's range (C2f's two halves of its first convolution's output: one operand). XLA drops a
concatenate no other op reads; one that other ops read stays, for them.

Records live as long as the traced array they describe (a finaliser drops them): they are a trace's knowledge of
its own values, never saved.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from hetero_sdk_jax.lowering.kernels.gemm import ACTIVATIONS
from hetero_sdk_jax.native import use_native

__all__ = [
    "CONCAT_TARGET", "MAX_OPERANDS", "ColumnRange", "enabled", "native_fused_concat_matmul", "operands_of",
    "record_concat", "record_split", "set_enabled",
]  # fmt: skip

CONCAT_TARGET = "hetero_sdk_gemm_f32_fused_concat"
"""The kernel's multi-operand in-place path: ``act(bias + concat(operands' column ranges) @ B)``."""

MAX_OPERANDS = 8
"""The most operands of ``A`` one call takes (the kernel's ``kMaxOperands``)."""


@dataclass(frozen=True)
class ColumnRange:
    """Channels ``[start, start + width)`` (the last axis) of the traced array ``source``."""

    source: Any
    start: int
    width: int


_CONCATS: dict[int, tuple[ColumnRange, ...]] = {}
_SLICES: dict[int, ColumnRange] = {}
_enabled = [True]


def enabled() -> bool:
    """Whether fused 1x1 convolutions read recorded concatenates' parts in place (on by default)."""
    return _enabled[0]


def set_enabled(on: bool) -> None:
    """Turns the rule on or off for the lowerings traced from now (benchmarks compare the two in one process)."""
    _enabled[0] = bool(on)


def _remember(table: dict[int, Any], array: Any, value: Any) -> None:
    key = id(array)
    table[key] = value
    weakref.finalize(array, table.pop, key, None)


def record_split(x: Any, outputs: Sequence[Any], axis: int) -> None:
    """Records each of ``outputs``, the consecutive pieces of ``x`` along ``axis``, as a range of ``x``'s channels
    when ``axis`` is ``x``'s last."""
    if axis % x.ndim != x.ndim - 1:
        return
    start = 0
    for piece in outputs:
        width = int(piece.shape[-1])
        _remember(_SLICES, piece, ColumnRange(x, start, width))
        start += width


def record_concat(result: Any, parts: Sequence[Any], axis: int) -> None:
    """Records ``result``, the concatenation of ``parts`` along ``axis``, as its parts' channel ranges when
    ``axis`` is the last; a part that :func:`record_split` recorded is the range of its source."""
    if axis % result.ndim != result.ndim - 1 or isinstance(result, np.ndarray):
        return
    ranges = [_SLICES.get(id(part)) or ColumnRange(part, 0, int(part.shape[-1])) for part in parts]
    _remember(_CONCATS, result, tuple(_merged(ranges)))


def _merged(ranges: Sequence[ColumnRange]) -> list[ColumnRange]:
    """``ranges`` with each run of consecutive ranges of one source as one range."""
    out: list[ColumnRange] = []
    for r in ranges:
        last = out[-1] if out else None
        if last is not None and last.source is r.source and last.start + last.width == r.start:
            out[-1] = ColumnRange(r.source, last.start, last.width + r.width)
        else:
            out.append(r)
    return out


def operands_of(x: Any) -> tuple[ColumnRange, ...] | None:
    """The operands the kernel reads in place of ``x``, a recorded channel concatenate of f32 parts whose leading
    axes are ``x``'s, when the rule is on and the kernel can be had; None otherwise."""
    ranges = _CONCATS.get(id(x))
    if ranges is None or not enabled() or len(ranges) > MAX_OPERANDS:
        return None
    lead = tuple(x.shape[:-1])
    if any(r.source.dtype != jnp.float32 or tuple(r.source.shape[:-1]) != lead for r in ranges):
        return None
    return ranges if use_native(CONCAT_TARGET) else None


def native_fused_concat_matmul(
    operands: Sequence[ColumnRange], packed: Any, columns: int, bias: Any, activation: str = "none"
) -> Any:
    """``activation(concat(operands) @ B + bias)`` for ``operands`` channel ranges of f32 arrays ``[..., L_i]`` of
    one leading shape, ``B`` ``[sum of widths, columns]`` packed (:func:`~.gemm.packed_b`) and ``bias``
    ``[columns]``, through :data:`CONCAT_TARGET` (each operand read in place): ``[..., columns]``."""
    lead = tuple(operands[0].source.shape[:-1])
    rows = math.prod(lead)
    flat = [jnp.reshape(r.source, (rows, r.source.shape[-1])) for r in operands]
    result = jax.ShapeDtypeStruct((rows, columns), jnp.float32)
    call = jax.ffi.ffi_call(CONCAT_TARGET, result)
    out = call(
        packed,
        jnp.asarray(bias, jnp.float32),
        *flat,
        activation=np.int64(ACTIVATIONS[activation]),
        starts=np.array([r.start for r in operands], np.int64),
        widths=np.array([r.width for r in operands], np.int64),
    )
    return jnp.reshape(out, (*lead, columns))
