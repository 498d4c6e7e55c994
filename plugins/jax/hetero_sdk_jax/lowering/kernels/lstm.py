"""LSTMSequence's recurrence through the XLA device's native CPU kernel (``hetero_sdk_lstm_sequence``,
:mod:`hetero_sdk_jax.native`): every step of every direction in one custom call.

:func:`prepare` replaces a Constant f32 R ``[dirs, 4H, H]`` once, at compile time, by :func:`packed_r`:
``R^T`` cut in column tiles of :data:`TILE` gates, ``[dirs, tiles, H, TILE]`` (each tile contiguous, zero
past ``4H``), the order the kernel streams it in. The lowering then calls :func:`native_recurrence` with
the input projection ``X W^T + B`` of every step, computed by XLA as before. The kernel runs LSTMs with
the default activations (sigmoid, tanh, tanh), any ``clip`` and sequence lengths, in f32; other
activations, 16-bit precisions and an R computed at run time take the ``lax.scan`` lowering.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node

from hetero_sdk_jax.lowering.weight_layout import PreparedByIdentity
from hetero_sdk_jax.native import use_native

__all__ = ["R_INPUT", "TARGET", "TILE", "native_recurrence", "packed_r", "prepare", "unpacked_r"]

TARGET = "hetero_sdk_lstm_sequence"
"""The native kernel's FFI target."""

TILE = 128
"""Gates per column tile of the packed ``R^T`` (the kernel's 8 vectors of 16 lanes)."""

R_INPUT = 5
"""LSTMSequence's R: X, H0, C0, sequence lengths, W, R, B."""

_DEFAULT_ACTIVATIONS = ["sigmoid", "tanh", "tanh"]
_DIRECTIONS = {"forward": 0, "reverse": 1, "bidirectional": 2}


def packed_r(r: np.ndarray) -> np.ndarray:
    """``R`` ``[dirs, 4H, H]`` as the kernel reads it: ``[dirs, tiles, H, TILE]``, ``[d, g // TILE, k,
    g % TILE] = R[d, g, k]``, zero past ``4H``; read-only."""
    dirs, gates, hidden = r.shape
    tiles = -(-gates // TILE)
    padded = np.zeros((dirs, tiles * TILE, hidden), np.float32)
    padded[:, :gates] = r
    packed = np.ascontiguousarray(padded.reshape(dirs, tiles, TILE, hidden).transpose(0, 1, 3, 2))
    packed.setflags(write=False)
    return packed


def unpacked_r(packed: Any, gates: int) -> Any:
    """:func:`packed_r` undone in XLA (``[dirs, gates, H]``), for a packed R that reaches the ``lax.scan``
    lowering (a 16-bit precision)."""
    dirs, tiles, hidden, tile = packed.shape
    return jnp.transpose(packed, (0, 1, 3, 2)).reshape(dirs, tiles * tile, hidden)[:, :gates]


def is_packed(node: Node, r: Any) -> bool:
    """True when ``r`` is :func:`packed_r`'s form of ``node``'s R."""
    size = node.attrs["hidden_size"]
    return tuple(r.shape[1:]) == (-(-4 * size // TILE), size, TILE)


_PACKED = PreparedByIdentity(packed_r)


def prepare(node: Node, values: Sequence[np.ndarray | None]) -> dict[int, np.ndarray | None]:
    """R packed for the kernel (:func:`packed_r`) in place of input :data:`R_INPUT`, when ``node`` is an
    LSTMSequence the kernel runs (default activations, f32 Constant R that is read-only) and the lowering
    being traced may call it; ``{}`` otherwise."""
    if node.type_name != "LSTMSequence" or len(values) <= R_INPUT:
        return {}
    r = values[R_INPUT]
    if (
        r is None
        or r.dtype != np.float32
        or r.ndim != 3
        or r.flags.writeable
        or list(node.attrs["activations"][:3]) != _DEFAULT_ACTIVATIONS
        or node.attrs["direction"] not in _DIRECTIONS
        or not use_native(TARGET)
    ):
        return {}
    return {R_INPUT: _PACKED.get(r)}


def native_recurrence(node: Node, projected: Any, h0: Any, c0: Any, lengths: Any, packed: Any) -> tuple[Any, ...]:
    """``(Y, Ho, Co)`` as LSTMSequence gives them, from ``projected`` ``[seq, dirs, batch, 4H]`` (``X W^T +
    B``), the states ``[batch, dirs, H]``, the lengths and the packed R, through the kernel."""
    steps, dirs, batch, _ = projected.shape
    size = node.attrs["hidden_size"]
    lengths = jnp.clip(jnp.broadcast_to(jnp.reshape(jnp.asarray(lengths), (-1,)), (batch,)), 0, steps)
    state = jax.ShapeDtypeStruct((batch, dirs, size), jnp.float32)
    call = jax.ffi.ffi_call(TARGET, (jax.ShapeDtypeStruct((batch, dirs, steps, size), jnp.float32), state, state))
    y, ho, co = call(
        projected.astype(jnp.float32), h0.astype(jnp.float32), c0.astype(jnp.float32), lengths.astype(jnp.int32),
        packed, direction=np.int64(_DIRECTIONS[node.attrs["direction"]]), clip=np.float32(node.attrs["clip"]),
    )  # fmt: skip
    return y, ho, co
