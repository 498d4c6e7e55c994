"""LSTMSequence's recurrence through the XLA device's native CPU kernel (``hetero_sdk_lstm_sequence``,
:mod:`hetero_sdk_jax.native`): every step of every direction in one custom call.

:func:`prepare` replaces a Constant f32 R ``[dirs, 4H, H]`` once, at compile time, by :func:`packed_r`:
``R^T`` cut in column tiles of :data:`TILE` gates, ``[dirs, tiles, H, TILE]`` (each tile contiguous, zero
past ``4H``), the order the kernel streams it in. The lowering then calls :func:`native_recurrence` with
the input projection ``X W^T + B`` of every step: computed by the native GEMM kernel (:mod:`.gemm`) where
the product is in its class, W then packed once too (:func:`packed_w`), else by XLA. The kernel runs LSTMs with
the default activations (sigmoid, tanh, tanh), any ``clip`` and sequence lengths, in f32; other
activations, 16-bit precisions and an R computed at run time take the ``lax.scan`` lowering.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node, Type

from hetero_sdk_jax.lowering.kernels import gemm
from hetero_sdk_jax.lowering.weight_layout import PreparedByIdentity
from hetero_sdk_jax.native import use_native

__all__ = [
    "R_INPUT", "TARGET", "TILE", "W_INPUT", "is_packed_w", "native_projection", "native_recurrence", "packed_r",
    "packed_w", "prepare", "unpacked_r", "unpacked_w",
]  # fmt: skip

TARGET = "hetero_sdk_lstm_sequence"
"""The native kernel's FFI target."""

TILE = 128
"""Gates per column tile of the packed ``R^T`` (the kernel's 8 vectors of 16 lanes)."""

W_INPUT = 4
"""LSTMSequence's W: X, H0, C0, sequence lengths, W, R, B."""

R_INPUT = 5
"""LSTMSequence's R."""

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


def packed_w(w: np.ndarray) -> np.ndarray:
    """``W`` ``[dirs, 4H, I]`` as the GEMM kernel reads the product ``X [rows, I]`` by ``W^T`` of every
    direction side by side, ``[I, dirs * 4H]`` packed (:func:`.gemm.packed_b`)."""
    dirs, gates, inputs = w.shape
    return gemm.packed_b(np.reshape(w, (dirs * gates, inputs)).T)


def unpacked_w(packed: Any, dirs: int, gates: int) -> Any:
    """:func:`packed_w` undone in XLA (``[dirs, gates, I]``)."""
    inputs = packed.shape[1]
    return jnp.reshape(jnp.transpose(gemm.unpacked_b(packed, dirs * gates)), (dirs, gates, inputs))


def _packed_w_shape(node: Node) -> tuple[int, ...] | None:
    """The shape of ``node``'s W packed, where its input projection is in the GEMM kernel's class and that
    shape tells it from W's own; None elsewhere."""
    x, w = node.input_value(0).partial_shape, node.input_value(W_INPUT).partial_shape
    if not x.is_static or not w.is_static or x.rank != 3 or w.rank != 3:
        return None
    (batch, steps, inputs), (dirs, gates, _) = x.to_shape(), w.to_shape()
    if not gemm.faster_natively(batch * steps, inputs, dirs * gates):
        return None
    shape = (-(-dirs * gates // gemm.PANEL), inputs, gemm.PANEL)
    return None if shape == w.to_shape() else shape


def is_packed_w(node: Node, w: Any) -> bool:
    """True when ``w`` is :func:`packed_w`'s form of the LSTMSequence ``node``'s W."""
    shape = _packed_w_shape(node) if node.type_name == "LSTMSequence" else None
    return shape is not None and tuple(w.shape) == shape


_PACKED = PreparedByIdentity(packed_r)
_PACKED_W = PreparedByIdentity(packed_w)


def prepare(node: Node, values: Sequence[np.ndarray | None]) -> dict[int, np.ndarray | None]:
    """R packed for the kernel (:func:`packed_r`) in place of input :data:`R_INPUT`, when ``node`` is an
    LSTMSequence the kernel runs (default activations, f32 Constant R that is read-only) and the lowering
    being traced may call it; with it W packed for the GEMM kernel (:func:`packed_w`) in place of input
    :data:`W_INPUT` when W is such a Constant too and the input projection is in that kernel's class;
    ``{}`` otherwise."""
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
    replaced: dict[int, np.ndarray | None] = {R_INPUT: _PACKED.get(r)}
    w = values[W_INPUT]
    if (
        w is not None
        and w.dtype == np.float32
        and not w.flags.writeable
        and node.input_value(0).element_type is Type.f32
        and _packed_w_shape(node) is not None
        and use_native(gemm.TARGET_BIAS)
    ):
        replaced[W_INPUT] = _PACKED_W.get(w)
    return replaced


def native_projection(x: Any, packed: Any, b: Any, dirs: int, gates: int) -> Any:
    """The input projection ``X W^T + B`` of every step and direction, ``[seq, dirs, batch, gates]``, from
    ``x`` ``[batch, seq, I]`` f32, W packed (:func:`packed_w`) and ``b`` ``[dirs, >= gates]``, through the
    GEMM kernel."""
    batch, steps, _ = x.shape
    bias = jnp.reshape(jnp.asarray(b, jnp.float32)[:, :gates], (dirs * gates,))
    product = gemm.native_matmul(jnp.swapaxes(x, 0, 1), packed, dirs * gates, bias)  # [seq, batch, dirs * gates]
    return jnp.transpose(jnp.reshape(product, (steps, batch, dirs, gates)), (0, 2, 1, 3))


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
