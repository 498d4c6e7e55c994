"""com.microsoft MatMulNBits: a MatMul by a weight quantized per block to 2, 4 or 8 bits, as
onnxruntime-genai's model builder and ONNX Runtime's weight-only quantizers write it.

``Y = A @ dequantize(B)^T + bias``, where row ``n`` of the weight holds ``K`` integers packed
little-end first into bytes, ``block_size`` of them per block, each block with a scale and a zero point
(packed the same way, or floats; ``2^(bits-1)`` when left out), and ``g_idx`` optionally naming each
column's block. The contract is the op's documented meaning, dequantized weights times the activations
in f32: ONNX Runtime's ``accuracy_level`` (which may quantize the activations too) does not change it.

The array-API kernel dequantizes the whole weight each call: it is the plain oracle. TEMPLATE computes
with the f32 weight dequantized once (:func:`prepared_weight`, kept while the packed constant lives: 8
times the packed bytes at 4 bits; up to a quarter of the machine's memory, beyond which weights are
dequantized each call), then one f32 matrix product per call. XLA on the CPU calls its native kernel on
the packed bytes (:mod:`.xla_matmul_nbits_native`), and elsewhere uses the same f32 weight (see
:mod:`.xla_matmul_nbits` for the figures). A weight that is not read-only (a model input, not a Constant)
is dequantized each call, never cached.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from typing import Any

import numpy as np
from hetero_sdk import Node, PartialShape, Type
from hetero_sdk.extensions import OnnxRule
from hetero_sdk.plugin import (
    INDEX_TYPES,
    INT,
    REAL_TYPES,
    Attr,
    Input,
    OpDef,
    OutputSpec,
    expect_same_types,
    namespace,
    widened,
)
from hetero_sdk.plugin import OnnxNodeContext as NodeContext

from hetero_sdk_contrib.checks import Outputs, merge_dims
from hetero_sdk_contrib.constants import DOMAIN, VERSION

__all__ = [
    "KERNELS", "MATMUL_NBITS", "ONNX_RULES", "OPS", "RECIPES", "PreparedWeights", "dequantized_weight",
    "prepared_weight", "unpacked",
]  # fmt: skip

_PACKED = frozenset({Type.u8})
_log = logging.getLogger(__name__)


def _blocks(k: int, block_size: int) -> int:
    return -(-k // block_size)


def _infer(node: Node) -> list[OutputSpec]:
    attrs = node.attrs
    k, n, bits, block_size = attrs["K"], attrs["N"], attrs["bits"], attrs["block_size"]
    if block_size < 16 or block_size & (block_size - 1):
        raise node.error(f"attribute block_size={block_size} must be a power of 2, at least 16")
    element_type = expect_same_types(node, 0, 2)
    data = node.input_value(0).partial_shape
    if data.rank_is_static:
        if data.rank < 1:
            raise node.error("A is a scalar; expected (..., K)")
        merge_dims(node, data[-1], k, f"A {data} must have K={k} values in its last axis")
    blocks = _blocks(k, block_size)
    weight = node.input_value(1).partial_shape
    expected = PartialShape([n, blocks, block_size * bits // 8])
    if weight.rank_is_static and not expected.compatible(weight):
        raise node.error(f"B has shape {weight}; expected {expected} (N, blocks of K, bytes per block)")
    scales = node.input_value(2).partial_shape
    if scales.rank_is_static and scales.is_static and int(np.prod(scales.to_shape())) != n * blocks:
        raise node.error(f"scales has shape {scales}; expected N * blocks = {n} * {blocks} values")
    if node.get_input_size() > 3:
        zero_points = node.input_value(3)
        if zero_points.element_type not in _PACKED and zero_points.element_type != element_type:
            raise node.error(
                f"zero_points has element type {zero_points.element_type.value}; expected u8 (packed) or "
                f"{element_type.value} (the scales' type)"
            )
    out = PartialShape([*data.dims[:-1], n]) if data.rank_is_static else PartialShape.dynamic()
    return [(element_type, out)]


def unpacked(packed: Any, bits: int, count: int) -> Any:
    """The first ``count`` ``bits``-bit unsigned integers of each row of ``packed`` (u8, the last axis
    the bytes), lowest bits first, as i32."""
    xp = namespace(packed)
    per_byte = 8 // bits
    shifts = xp.asarray(np.arange(0, 8, bits, dtype=np.uint8))
    values = (packed[..., None] >> shifts) & np.uint8((1 << bits) - 1)
    values = xp.reshape(values, (*packed.shape[:-1], packed.shape[-1] * per_byte))
    return xp.astype(values[..., :count], xp.int32)


def dequantized_weight(node: Node, weight: Any, scales: Any, zero_points: Any | None, g_idx: Any | None) -> Any:
    """The ``(N, K)`` f32 weight: ``(q - zero_point) * scale`` of each value's block."""
    xp = namespace(weight)
    k, n, bits, block_size = (node.attrs[a] for a in ("K", "N", "bits", "block_size"))
    blocks = _blocks(k, block_size)
    q = unpacked(xp.reshape(weight, (n, -1)), bits, k)
    scales = xp.reshape(widened(scales), (n, blocks))
    if zero_points is None:
        zero = xp.full((n, blocks), float(1 << (bits - 1)), dtype=xp.float32)
    elif zero_points.dtype == np.uint8:
        zero = xp.astype(unpacked(xp.reshape(zero_points, (n, -1)), bits, blocks), xp.float32)
    else:
        zero = xp.reshape(widened(zero_points), (n, blocks))
    if g_idx is None:  # blocks in order: (N, blocks, block_size) without gathering
        padded = blocks * block_size
        if padded != k:
            q = xp.concat([q, xp.zeros((n, padded - k), dtype=xp.int32)], axis=1)
        q = xp.reshape(xp.astype(q, xp.float32), (n, blocks, block_size))
        dequantized = (q - zero[..., None]) * scales[..., None]
        return xp.reshape(dequantized, (n, padded))[:, :k]
    column_block = xp.astype(xp.reshape(g_idx, (k,)), xp.int32)
    zero = xp.take(zero, column_block, axis=1)
    return (xp.astype(q, xp.float32) - zero) * xp.take(scales, column_block, axis=1)


def _matmul_nbits(
    node: Node,
    a: Any,
    weight: Any,
    scales: Any,
    zero_points: Any | None = None,
    g_idx: Any | None = None,
    bias: Any | None = None,
) -> Any:
    xp = namespace(a)
    dequantized = dequantized_weight(node, weight, scales, zero_points, g_idx)
    y = xp.matmul(widened(a), xp.matrix_transpose(xp.astype(dequantized, xp.float32)))
    return y if bias is None else y + widened(bias)


def _memory_bytes() -> int:
    """The machine's physical memory in bytes (16 GiB where the OS does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return 16 << 30


class PreparedWeights:
    """f32 weights dequantized once, by the identity of the read-only arrays they come from, each kept
    while its packed weight lives (a compiled model's Constant: freed with the model).

    :param budget_bytes: the most bytes of f32 weights kept at once (default: a quarter of the
        machine's memory): a weight beyond it is dequantized each call instead, as for a model too
        large to hold 8 times its 4-bit weights (logged once, at INFO).
    """

    def __init__(self, budget_bytes: int | None = None) -> None:
        self._entries: dict[tuple[int, ...], tuple[list[weakref.ref[np.ndarray]], np.ndarray, object]] = {}
        self._lock = threading.RLock()
        self.budget_bytes = _memory_bytes() // 4 if budget_bytes is None else budget_bytes
        self.held_bytes = 0
        """The bytes of the f32 weights kept now."""
        self.computed = 0
        """How many weights were dequantized (a test reads it: once per constant, not per call)."""
        self._said_over = False

    def get(self, node: Node, weight: Any, scales: Any, zero_points: Any | None, g_idx: Any | None) -> Any:
        """``node``'s ``(N, K)`` f32 weight (read-only), kept for the next calls; None when it is not
        kept: arrays that are not read-only numpy arrays (something may write to them between calls),
        or a weight beyond :attr:`budget_bytes`."""
        sources = [v for v in (weight, scales, zero_points, g_idx) if v is not None]
        if not all(isinstance(v, np.ndarray) and not v.flags.writeable for v in sources):
            return None
        attrs = tuple(node.attrs[a] for a in ("K", "N", "bits", "block_size"))
        key = (*(id(v) for v in (weight, scales, zero_points, g_idx)), *attrs)
        size = 4 * node.attrs["K"] * node.attrs["N"]
        with self._lock:  # held while dequantizing: two compiles of one model get the same array
            entry = self._entries.get(key)
            if entry is not None and all(ref() is v for ref, v in zip(entry[0], sources, strict=True)):
                return entry[1]
            if self.held_bytes + size > self.budget_bytes:
                if not self._said_over:
                    self._said_over = True
                    _log.info(
                        "MatMulNBits '%s': its f32 weight (%d bytes) would take the f32 weights kept past their "
                        "budget of %d bytes (a quarter of the memory by default): it and any further one are "
                        "dequantized each call",
                        node.friendly_name, size, self.budget_bytes,
                    )  # fmt: skip
                return None
            value, token = self.dequantized(node, weight, scales, zero_points, g_idx), object()
            self._entries[key] = ([weakref.ref(v) for v in sources], value, token)
            self.held_bytes += value.nbytes
        weakref.finalize(weight, self._forget, key, token)
        return value

    def dequantized(self, node: Node, weight: Any, scales: Any, zero_points: Any | None, g_idx: Any | None) -> Any:
        """``node``'s ``(N, K)`` f32 weight computed now (numpy), not kept."""
        self.computed += 1
        value = np.ascontiguousarray(dequantized_weight(node, weight, scales, zero_points, g_idx), np.float32)
        value.setflags(write=False)
        return value

    def _forget(self, key: tuple[int, ...], token: object) -> None:
        with self._lock:
            if key in self._entries and self._entries[key][2] is token:
                self.held_bytes -= self._entries.pop(key)[1].nbytes

    def __len__(self) -> int:
        return len(self._entries)


PREPARED = PreparedWeights()
"""The process's f32 weights of MatMulNBits constants (TEMPLATE's kernel and XLA's lowering share them)."""


def prepared_weight(
    node: Node, weight: Any, scales: Any, zero_points: Any | None = None, g_idx: Any | None = None
) -> Any:
    """``node``'s ``(N, K)`` f32 weight, dequantized once per packed constant and kept
    (:class:`PreparedWeights`); None when it is not kept (see :meth:`PreparedWeights.get`)."""
    return PREPARED.get(node, weight, scales, zero_points, g_idx)


def _template_kernel(
    node: Node,
    a: Any,
    weight: Any,
    scales: Any,
    zero_points: Any | None = None,
    g_idx: Any | None = None,
    bias: Any | None = None,
) -> Any:
    """TEMPLATE's MatMulNBits: the activations times the f32 weight dequantized once (numpy)."""
    dense = prepared_weight(node, weight, scales, zero_points, g_idx)
    if dense is None:
        dense = PREPARED.dequantized(node, weight, scales, zero_points, g_idx)
    y = np.matmul(widened(a), dense.T)
    return y if bias is None else y + widened(bias)


MATMUL_NBITS = OpDef(
    "MatMulNBits",
    "contrib",
    _infer,
    inputs=(
        Input("A", REAL_TYPES, doc="(..., K): the activations"),
        Input("B", _PACKED, doc="(N, blocks, block_size * bits / 8): the packed weight"),
        Input("scales", REAL_TYPES, doc="N * blocks values: each block's scale"),
        Input("zero_points", optional=True, doc="u8 packed like B, or the scales' type; 2^(bits-1) by default"),
        Input("g_idx", INDEX_TYPES, optional=True, doc="(K): the block of each column of the weight"),
        Input("bias", REAL_TYPES, optional=True, doc="(N)"),
    ),
    attrs=(
        Attr("K", INT, minimum=1, doc="the weight's input features"),
        Attr("N", INT, minimum=1, doc="the weight's output features"),
        Attr("bits", INT, 4, choices=(2, 4, 8), doc="bits per quantized value"),
        Attr("block_size", INT, minimum=16, doc="values per block along K (a power of 2)"),
    ),
    version=VERSION,
    evaluate=_matmul_nbits,
    doc="A @ dequantize(B)^T + bias, with B quantized per block of K to 2, 4 or 8 bits.",
)

OPS = [MATMUL_NBITS]
"""The op definitions this module contributes."""

KERNELS = {
    "TEMPLATE": {"MatMulNBits": _template_kernel},
    "XLA": {"MatMulNBits": "hetero_sdk_contrib.xla_matmul_nbits:matmul_nbits"},
}
"""TEMPLATE and XLA multiply by the weight dequantized once; the reference backend keeps the
array-API kernel, dequantizing per call."""


def matmul_nbits_rule(ctx: NodeContext) -> Outputs:
    """com.microsoft MatMulNBits: A, B, scales, [zero_points], [g_idx], [bias]. A left-out zero point
    or g_idx that a later input follows is written as its default (constants of the node's size)."""
    k, n = ctx.attr("K"), ctx.attr("N")
    bits, block_size = ctx.attr("bits", 4), ctx.attr("block_size")
    attrs = {"K": k, "N": n, "bits": bits, "block_size": block_size}
    inputs = [ctx.input(0), ctx.input(1), ctx.input(2)]
    optional = [ctx.optional_input(i) for i in (3, 4, 5)]
    last = max((i for i, v in enumerate(optional) if v is not None), default=-1)
    if last >= 0 and bits not in (2, 4, 8):
        raise ctx.error(f"attribute bits={bits} must be 2, 4 or 8")
    blocks = _blocks(k, block_size) if block_size > 0 else 0
    defaults = (
        lambda: ctx.const(np.full((n, -(-blocks * bits // 8)), _default_zero_byte(bits), np.uint8)),
        lambda: ctx.const(np.arange(k, dtype=np.int32) // block_size),
    )
    for index in range(last + 1):
        value = optional[index]
        inputs.append(value if value is not None else defaults[index]())
    return [Node(MATMUL_NBITS, inputs, attrs).output(0)]


def _default_zero_byte(bits: int) -> int:
    """A byte of packed zero points, each ``2^(bits-1)``."""
    per_byte = 8 // bits
    return sum((1 << (bits - 1)) << (bits * i) for i in range(per_byte)) & 0xFF


ONNX_RULES = [OnnxRule(DOMAIN, "MatMulNBits", matmul_nbits_rule, makes=("MatMulNBits",))]
"""The ONNX ops this module translates."""


# -- conformance-kit recipes -----------------------------------------------------------------------------


def _matmul_nbits_case(b: Any, op_type: str) -> Any:
    dtype = b.pick([np.float32, np.float16])
    bits, block_size = b.pick([4, 8, 2]), b.pick([16, 32])
    k, n = b.integer(1, 40), b.integer(1, 6)
    blocks = _blocks(k, block_size)
    a = b.input(b.values([*b.shape(0, 2, 1, 3), k], dtype, -1, 1), "A")
    weight = b.operand(b.values([n, blocks, block_size * bits // 8], np.uint8, 0, 255), "B", constant=True)
    scales = b.operand(b.values([n * blocks], dtype, 0.01, 0.1), "scales", constant=True)
    inputs = [a.output(0), weight.output(0), scales.output(0)]
    if b.flag():
        zero = b.values([n, -(-blocks * bits // 8)], np.uint8, 0, 255)
        inputs.append(b.operand(zero, "zero_points", constant=True).output(0))
    attrs = {"K": k, "N": n, "bits": bits, "block_size": block_size}
    return b.case(op_type, Node(MATMUL_NBITS, inputs, attrs, "op"), "accumulate", k, **attrs)


RECIPES = {"MatMulNBits": _matmul_nbits_case}
"""Conformance-kit case recipes by op type."""
