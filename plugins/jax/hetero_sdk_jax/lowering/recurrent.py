"""Lowerings of LSTMSequence, GRUSequence and RNNSequence: one ``lax.scan`` over time for all directions.

The op's array-API definition loops over time in Python, which ``jax.jit`` unrolls into one copy of
the cell per step. Here the input projection ``X @ W^T + B`` of every step and direction is one
product outside the loop, and ``lax.scan`` runs the steps with only ``h @ R^T`` inside. A reversed
direction reads its projections (and its step mask) flipped in time, so both directions of a
bidirectional layer share one scan; its outputs are flipped back. The cell math, masking (a step at or
past a batch entry's sequence length holds the state and writes zeros to ``Y``), clipping and
activations follow :mod:`hetero_sdk.ops.recurrent` exactly.

An LSTMSequence whose R is a Constant runs its recurrence in the device's native kernel where the CPU
has it (:mod:`.kernels.lstm`: R packed once at compile time by this lowering's ``prepare``); its
input projection then runs the native GEMM kernel where it is in that kernel's class (W packed once too).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax.numpy as jnp
from hetero_sdk import Node
from hetero_sdk.plugin import recurrent_activation as activation
from jax import lax

from hetero_sdk_jax.lowering.kernels.lstm import (
    is_packed,
    is_packed_w,
    native_projection,
    native_recurrence,
    prepare,
    unpacked_r,
    unpacked_w,
)  # fmt: skip
from hetero_sdk_jax.lowering.linear_algebra import accumulation
from hetero_sdk_jax.lowering.registry import lowering, precision_of

__all__ = ["recurrent_sequence"]

_GATES = {"LSTMSequence": 4, "GRUSequence": 3, "RNNSequence": 1}
_STATES = {"LSTMSequence": 2, "GRUSequence": 1, "RNNSequence": 1}

Step = Callable[[Any, list[Any], Any], list[Any]]
"""``step(projected, states, r) -> new states``: one time step of every direction at once."""


def _product(equation: str, a: Any, b: Any) -> Any:
    """``einsum`` at full precision for f32/f64, accumulated in f32 for 16-bit floats, in ``a``'s type."""
    result = jnp.einsum(equation, a, b, precision=precision_of(a.dtype), preferred_element_type=accumulation(a.dtype))
    return result.astype(a.dtype)


def _recurrent_product(h: Any, r: Any) -> Any:
    """``h @ R^T`` per direction: ``h`` ``[dirs, batch, hidden]``, ``r`` ``[dirs, rows, hidden]``."""
    return _product("dbh,dgh->dbg", h, r)


def _clipped(x: Any, clip: float) -> Any:
    return jnp.clip(x, -clip, clip) if clip > 0 else x


def _lstm_step(node: Node) -> Step:
    f_act, g_act, h_act = activation(node, 0), activation(node, 1), activation(node, 2)
    size, clip = node.attrs["hidden_size"], node.attrs["clip"]

    def step(projected: Any, states: list[Any], r: Any) -> list[Any]:
        h, c = states
        gates = _clipped(projected + _recurrent_product(h, r), clip)
        # Each activation over all four gates at once (elementwise, so the same values): one pass that
        # XLA fuses with the sum above, instead of one fusion per gate reading it again.
        gated, activated = f_act(gates), g_act(gates)
        f, i = gated[..., :size], gated[..., size : 2 * size]
        candidate, o = activated[..., 2 * size : 3 * size], gated[..., 3 * size :]
        c_next = f * c + i * candidate
        return [o * h_act(c_next), c_next]

    return step


def _gru_step(node: Node, b: Any) -> Step:
    f_act, g_act = activation(node, 0), activation(node, 1)
    size, clip = node.attrs["hidden_size"], node.attrs["clip"]
    linear_before_reset = node.attrs["linear_before_reset"]
    recurrent_bias = b[:, None, 3 * size :] if linear_before_reset else None

    def step(projected: Any, states: list[Any], r: Any) -> list[Any]:
        (h,) = states
        h_part = _recurrent_product(h, r if linear_before_reset else r[:, : 2 * size])
        z = f_act(_clipped(projected[..., :size] + h_part[..., :size], clip))
        reset = f_act(_clipped(projected[..., size : 2 * size] + h_part[..., size : 2 * size], clip))
        if linear_before_reset:
            hidden = projected[..., 2 * size :] + reset * (h_part[..., 2 * size :] + recurrent_bias)
        else:
            hidden = projected[..., 2 * size :] + _recurrent_product(reset * h, r[:, 2 * size :])
        candidate = g_act(_clipped(hidden, clip))
        return [(1 - z) * candidate + z * h]

    return step


def _rnn_step(node: Node) -> Step:
    act, clip = activation(node, 0), node.attrs["clip"]

    def step(projected: Any, states: list[Any], r: Any) -> list[Any]:
        return [act(_clipped(projected + _recurrent_product(states[0], r), clip))]

    return step


def _in_time_order(values: Any, reversed_directions: Sequence[bool]) -> Any:
    """``values`` ``[seq, dirs, ...]`` with each reversed direction's steps flipped in time (an involution)."""
    if not any(reversed_directions):
        return values
    parts = [values[::-1, d] if flip else values[:, d] for d, flip in enumerate(reversed_directions)]
    return jnp.stack(parts, axis=1)


@lowering("LSTMSequence", "GRUSequence", "RNNSequence")
def recurrent_sequence(node: Node, x: Any, *rest: Any) -> tuple[Any, ...]:
    """Every direction of a recurrent op in one ``lax.scan`` over time; outputs as the op gives them."""
    kind = node.type_name
    state_count, size = _STATES[kind], node.attrs["hidden_size"]
    states, lengths, (w, r, b) = rest[:state_count], rest[state_count], rest[state_count + 1 :]
    x, w, r, b = (jnp.asarray(v) for v in (x, w, r, b))
    directions, steps = b.shape[0], x.shape[1]  # W may be packed (below): B is [dirs, ...] always
    direction = node.attrs["direction"]
    flipped = [direction == "reverse" or (direction == "bidirectional" and d == 1) for d in range(directions)]
    gates = _GATES[kind] * size
    packed_w = kind == "LSTMSequence" and is_packed_w(node, w)  # prepare packed W for the GEMM kernel
    if packed_w and x.dtype == jnp.float32 and w.dtype == jnp.float32:
        projected = native_projection(x, w, b, directions, gates)
    else:
        w = unpacked_w(w, directions, gates).astype(x.dtype) if packed_w else w
        # Every step's input projection at once: [seq, dirs, batch, gates * hidden].
        projected = _product("bsi,dgi->sdbg", x, w) + b[None, :, None, :gates]
    if kind == "LSTMSequence" and is_packed(node, r):  # prepare packed R for the native kernel
        if r.dtype == jnp.float32 and projected.dtype == jnp.float32:
            h0, c0 = (jnp.asarray(s) for s in states)
            return native_recurrence(node, projected, h0, c0, lengths, r)
        r = unpacked_r(r, gates).astype(projected.dtype)
    valid = jnp.arange(steps)[:, None] < jnp.reshape(jnp.asarray(lengths), (1, -1))  # [seq, batch]
    valid = jnp.broadcast_to(valid[:, None, :, None], (steps, directions, valid.shape[1], 1))
    if kind == "LSTMSequence":
        step = _lstm_step(node)
    elif kind == "GRUSequence":
        step = _gru_step(node, b)
    else:
        step = _rnn_step(node)

    def advance(carry: list[Any], inputs: tuple[Any, Any]) -> tuple[list[Any], Any]:
        projected_t, valid_t = inputs
        stepped = step(projected_t, carry, r)
        carry = [jnp.where(valid_t, new, old) for new, old in zip(stepped, carry)]
        return carry, jnp.where(valid_t, carry[0], jnp.zeros_like(carry[0]))

    initial = [jnp.swapaxes(jnp.asarray(s), 0, 1) for s in states]  # [dirs, batch, hidden]
    scanned = (_in_time_order(projected, flipped), _in_time_order(valid, flipped))
    finals, ys = lax.scan(advance, initial, scanned)
    y = jnp.transpose(_in_time_order(ys, flipped), (2, 1, 0, 3))  # [batch, dirs, seq, hidden]
    return (y, *(jnp.swapaxes(f, 0, 1) for f in finals))


recurrent_sequence.prepare = prepare  # type: ignore[attr-defined]
