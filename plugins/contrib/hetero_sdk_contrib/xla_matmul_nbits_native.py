"""MatMulNBits through the XLA device's native CPU kernel (``hetero_sdk_matmul_nbits``,
:mod:`hetero_sdk_jax.native`): the packed weight stays packed.

:func:`native_operands` prepares, once per packed constant, what the kernel reads: the packed bytes
themselves as ``(N, blocks, blob)`` (not copied), the scales as f32 ``(N, blocks)`` and one u8 zero point
per block (``2^(bits-1)`` where the model has none). :func:`native_matmul` calls the kernel on them; it
computes ``y[m, n] = sum_b s[n,b] * dot(x_b, q_b - z[n,b])`` in f32 (the zero points subtracted from the
integers, exactly), the dequantized weight
times the f32 activations (the op's contract, regrouped), reading 4 bits a weight instead of 32.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node
from hetero_sdk.plugin import widened
from hetero_sdk_jax.native import use_native

from hetero_sdk_contrib.ops_matmul_nbits import unpacked

__all__ = ["MIN_WEIGHTS", "TARGET", "NativeOperands", "native_matmul", "native_operands", "runs_natively"]

TARGET = "hetero_sdk_matmul_nbits"
"""The native kernel's FFI target."""

_CHUNK_BYTES = 16  # the kernel reads a weight row 16 bytes at a time

MIN_WEIGHTS = 1 << 16
"""The fewest weights (``N * K``) the kernel is used for. Below, the f32 weight is at most 256 KiB (it fits
in L2 and costs little memory) and XLA fuses its small product with the ops around it, which a custom call
prevents: on the contrib tests' tiny int4 Llama (hidden 64, every weight below this) the kernel made a
token 5-10 % slower than the f32 weight (``bench/bench_decoders.py --xla-f32-weight``)."""


class NativeOperands:
    """The kernel's weight operands of MatMulNBits constants, by the identity of the read-only arrays they
    come from, each kept while its packed weight lives."""

    def __init__(self) -> None:
        self._entries: dict[tuple[int, ...], tuple[list[weakref.ref[np.ndarray]], tuple[np.ndarray, ...], object]] = {}
        self._lock = threading.Lock()

    def get(
        self, node: Node, weight: np.ndarray, scales: np.ndarray, zero_points: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(packed, scales, zeros)`` for ``node`` (the same arrays each time for the same constants)."""
        sources = [v for v in (weight, scales, zero_points) if v is not None]
        key = (
            *(id(v) for v in (weight, scales, zero_points)),
            *(node.attrs[a] for a in ("K", "N", "bits", "block_size")),
        )
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and all(ref() is v for ref, v in zip(entry[0], sources, strict=True)):
                return entry[1]  # type: ignore[return-value]
            operands, token = _operands(node, weight, scales, zero_points), object()
            self._entries[key] = ([weakref.ref(v) for v in sources], operands, token)
        weakref.finalize(weight, self._forget, key, token)
        return operands

    def _forget(self, key: tuple[int, ...], token: object) -> None:
        with self._lock:
            if key in self._entries and self._entries[key][2] is token:
                del self._entries[key]


OPERANDS = NativeOperands()
"""The process's native operands of MatMulNBits constants."""


def _operands(
    node: Node, weight: np.ndarray, scales: np.ndarray, zero_points: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k, n, bits, block_size = (node.attrs[a] for a in ("K", "N", "bits", "block_size"))
    blocks = -(-k // block_size)
    packed = np.ascontiguousarray(weight.reshape(n, blocks, block_size * bits // 8))
    scale = np.ascontiguousarray(np.asarray(widened(scales), np.float32).reshape(n, blocks))
    if zero_points is None:
        zeros = np.full((n, blocks), 1 << (bits - 1), np.uint8)
    else:
        zeros = np.asarray(unpacked(zero_points.reshape(n, -1), bits, blocks), np.uint8)
    for array in (packed, scale, zeros):
        array.setflags(write=False)
    return packed, scale, zeros


def native_operands(node: Node, values: list[np.ndarray | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The kernel's operands for ``node`` when the kernel can run it in the lowering being traced; None
    otherwise (the pure-XLA lowering runs). ``values``: B, scales, zero points and ``g_idx`` (None where
    absent), all Constants. The kernel takes 2-, 4- and 8-bit weights whose packed row is a whole number of
    16-byte chunks, u8 zero points (not floats), and ``g_idx`` absent or in order, of :data:`MIN_WEIGHTS`
    weights or more."""
    weight, scales, zero_points, g_idx = values
    k, n, bits, block_size = (node.attrs[a] for a in ("K", "N", "bits", "block_size"))
    blocks = -(-k // block_size)
    if bits not in (2, 4, 8) or block_size * bits % 8 or (blocks * block_size * bits // 8) % _CHUNK_BYTES:
        return None
    if n * k < MIN_WEIGHTS:
        return None
    if (
        weight is None
        or scales is None
        or weight.dtype != np.uint8
        or weight.size != n * blocks * block_size * bits // 8
    ):
        return None
    if zero_points is not None and zero_points.dtype != np.uint8:
        return None
    if g_idx is not None and not np.array_equal(np.asarray(g_idx).reshape(-1), np.arange(k) // block_size):
        return None
    if not all(
        isinstance(v, np.ndarray) and not v.flags.writeable for v in (weight, scales, zero_points) if v is not None
    ):
        return None
    if not use_native(TARGET):
        return None
    return OPERANDS.get(node, weight, scales, zero_points)


def runs_natively(node: Node, weight: Any, scales: Any, zero_points: Any | None, g_idx: Any | None) -> bool:
    """True when the lowering being traced may call the kernel and its operands are in the kernel's form
    (what :func:`native_operands` made, or arrays that mean the same): packed u8 ``(N, blocks, blob)``,
    f32 scales ``(N, blocks)``, u8 zero points ``(N, blocks)`` or none, no ``g_idx``."""
    k, n, bits, block_size = (node.attrs[a] for a in ("K", "N", "bits", "block_size"))
    blocks = -(-k // block_size)
    blob = block_size * bits // 8
    return (
        g_idx is None
        and n * k >= MIN_WEIGHTS
        and bits in (2, 4, 8)
        and (blocks * blob) % _CHUNK_BYTES == 0
        and weight.dtype == np.uint8
        and tuple(weight.shape) == (n, blocks, blob)
        and scales.dtype == np.float32
        and tuple(scales.shape) == (n, blocks)
        and (zero_points is None or (zero_points.dtype == np.uint8 and tuple(zero_points.shape) == (n, blocks)))
        and use_native(TARGET)
    )


def native_matmul(node: Node, a: Any, packed: Any, scales: Any, zeros: Any | None) -> Any:
    """``a @ dequantize(B)^T`` in f32 through the native kernel (``a``: any leading dimensions, then K)."""
    k, n = node.attrs["K"], node.attrs["N"]
    rows = a.reshape(-1, k).astype(jnp.float32)
    if zeros is None:
        zeros = jnp.full(scales.shape, 1 << (node.attrs["bits"] - 1), jnp.uint8)
    call = jax.ffi.ffi_call(TARGET, jax.ShapeDtypeStruct((rows.shape[0], n), jnp.float32))
    y = call(
        rows, packed, scales.astype(jnp.float32), zeros,
        bits=np.int64(node.attrs["bits"]), block_size=np.int64(node.attrs["block_size"]), k=np.int64(k),
    )  # fmt: skip
    return y.reshape(*a.shape[:-1], n)
