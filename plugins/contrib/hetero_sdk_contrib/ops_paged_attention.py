"""com.microsoft PagedAttention: attention over a block-based key/value cache, the form serving runtimes
use for continuous batching (ONNX Runtime's contrib op; it has a CUDA kernel only, so the tests check it
against numpy written there, as OpenVINO translates it into its own PagedAttention).

The batch is packed: ``query``, ``key`` and ``value`` hold only real tokens, ``(tokens, heads * size)``;
``cumulative_sequence_length`` (batch + 1) says where each sequence's tokens start. Token ``i`` of
sequence ``b`` sits at position ``p = past_seqlens[b] + i``; its key and value are written into the
caches, ``(blocks, block_size, kv_num_heads, size)``, at block ``block_table[b, p // block_size]``, row
``p % block_size``; its query then attends to the positions ``j <= p`` of its sequence (``j > p - window``
with ``local_window_size``) read from the updated caches through the block table, keys and values shared
by ``num_heads / kv_num_heads`` query heads. ``do_rotary`` rotates queries and keys at ``p`` first. A
position whose block is unmapped (negative, or beyond the caches' blocks or the table) is neither written
nor attended (as ONNX Runtime documents for unmapped pages), and a query with nothing to attend gives
zeros. The updated caches are the op's second and third outputs (ONNX Runtime aliases them
with the inputs): the op is a function of its inputs, and needs no state of the runtime's; who allocates
blocks and builds the block table (a serving scheduler) is the caller's concern.

The computation is written once (:func:`paged_attention`) for numpy and ``jax.numpy``; only the cache
write differs (a scatter), so TEMPLATE and XLA each pass theirs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from hetero_sdk import Node, Type, opset
from hetero_sdk.extensions import REFERENCE, OnnxRule
from hetero_sdk.plugin import (
    BOOL,
    FLOAT,
    INT,
    REAL_TYPES,
    Attr,
    Input,
    OpDef,
    OutputSpec,
    expect_rank,
    expect_same_types,
    namespace,
    widened,
)
from hetero_sdk.plugin import OnnxNodeContext as NodeContext

from hetero_sdk_contrib.checks import Outputs, merge_dims
from hetero_sdk_contrib.constants import DOMAIN, VERSION
from hetero_sdk_contrib.ops_rotary import rotated

__all__ = ["KERNELS", "ONNX_RULES", "OPS", "PAGED_ATTENTION", "RECIPES", "Scatter", "paged_attention"]

_INDEX = frozenset({Type.i32, Type.i64})

Scatter = Callable[[Any, Any, Any], Any]
"""``scatter(rows, slots, values)``: ``rows`` (slots, ...) with ``values[i]`` written at ``slots[i]``
where ``slots[i] >= 0`` (the others dropped), as a new array."""


def _infer(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1, 2)
    cache_type = expect_same_types(node, 3, 4)
    query = expect_rank(node, 0, 2, what="query")
    key = expect_rank(node, 1, 2, what="key")
    expect_rank(node, 2, 2, what="value")
    cache = expect_rank(node, 3, 4, what="key_cache")
    value_cache = expect_rank(node, 4, 4, what="value_cache")
    for axis in range(4):
        merge_dims(node, cache[axis], value_cache[axis], f"key_cache {cache} and value_cache {value_cache} differ")
    expect_rank(node, 5, 1, what="cumulative_sequence_length")
    expect_rank(node, 6, 1, what="past_seqlens")
    expect_rank(node, 7, 2, what="block_table")
    heads, kv_heads = node.attrs["num_heads"], node.attrs["kv_num_heads"]
    if heads % kv_heads:
        raise node.error(f"num_heads={heads} is not a multiple of kv_num_heads={kv_heads}")
    if cache[2] >= 0 and cache[2] != kv_heads:
        raise node.error(f"the caches {cache} hold {cache[2]} heads; kv_num_heads={kv_heads}")
    size = cache[3]
    if query[1] >= 0 and size >= 0 and query[1] != heads * size:
        raise node.error(f"query {query} must hold num_heads={heads} heads of the caches' size {size}")
    if key[1] >= 0 and size >= 0 and key[1] != kv_heads * size:
        raise node.error(f"key {key} must hold kv_num_heads={kv_heads} heads of the caches' size {size}")
    if node.attrs["do_rotary"]:
        if node.get_input_size() < 10:
            raise node.error("do_rotary needs cos_cache and sin_cache")
        expect_rank(node, 8, 2, what="cos_cache")
        expect_rank(node, 9, 2, what="sin_cache")
    if node.attrs["local_window_size"] == 0 or node.attrs["local_window_size"] < -1:
        raise node.error(f"local_window_size={node.attrs['local_window_size']}; expected -1 (off) or >= 1")
    return [(element_type, query), (cache_type, cache), (cache_type, value_cache)]


def _slots(table: Any, sequence: Any, position: Any, blocks: int, block_size: int) -> Any:
    """The flat cache row (``block * block_size + offset``) of ``position`` in ``sequence``, or -1 where
    its block is unmapped."""
    xp = namespace(table)
    page = position // block_size
    mapped = (position >= 0) & (page < table.shape[1])
    block = table[sequence, xp.where(mapped, page, 0)]
    mapped = mapped & (block >= 0) & (block < blocks)
    return xp.where(mapped, block * block_size + position % block_size, -1)


@dataclass(frozen=True)
class _Written:
    """The new tokens placed: their queries (rotated), sequences, positions and whether they belong to a
    sequence at all; the block table; the caches' rows with the new keys and values written."""

    queries: Any
    sequence: Any
    position: Any
    packed: Any
    table: Any
    keys: Any
    values: Any


def _write(node: Node, scatter: Scatter, inputs: Sequence[Any]) -> _Written:
    query, key, value, key_cache, value_cache, cumulative, past, table = inputs[:8]
    xp = namespace(query)
    attrs = node.attrs
    heads, kv_heads = attrs["num_heads"], attrs["kv_num_heads"]
    tokens, (blocks, block_size, _, size) = query.shape[0], key_cache.shape
    q = xp.reshape(widened(query), (tokens, heads, size))
    k = xp.reshape(widened(key), (tokens, kv_heads, size))
    v = xp.reshape(widened(value), (tokens, kv_heads, size))
    cumulative, past, table = (xp.astype(a, xp.int32) for a in (cumulative, past, table))
    token = xp.arange(tokens, dtype=xp.int32)
    sequence = xp.sum(xp.astype(cumulative[None, 1:] <= token[:, None], xp.int32), axis=1)
    packed = (token >= cumulative[0]) & (sequence < past.shape[0])
    sequence = xp.where(packed, sequence, 0)
    position = past[sequence] + token - cumulative[sequence]
    if attrs["do_rotary"]:
        cos, sin = widened(inputs[8]), widened(inputs[9])
        at = xp.where((position >= 0) & (position < cos.shape[0]), position, 0)
        q = rotated(q, cos[at][:, None, :], sin[at][:, None, :], attrs["rotary_interleaved"])
        k = rotated(k, cos[at][:, None, :], sin[at][:, None, :], attrs["rotary_interleaved"])
    written = xp.where(packed, _slots(table, sequence, position, blocks, block_size), -1)
    rows = (blocks * block_size, kv_heads, size)
    keys = scatter(xp.reshape(key_cache, rows), written, xp.astype(k, key_cache.dtype))
    values = scatter(xp.reshape(value_cache, rows), written, xp.astype(v, value_cache.dtype))
    return _Written(q, sequence, position, packed, table, keys, values)


def _attend(node: Node, written: _Written, queries: Any, read: Any, position: Any, packed: Any) -> Any:
    """``queries`` (n, heads, size) at ``position`` attending to the cache rows ``read`` ((n or 1, span):
    each of their sequence's positions, -1 where unmapped): (n, heads * size), in f32 or wider."""
    xp = namespace(queries)
    attrs = node.attrs
    count, heads, size = queries.shape
    kv_heads = attrs["kv_num_heads"]
    positions = xp.arange(read.shape[1], dtype=xp.int32)
    allowed = packed[:, None] & (read >= 0) & (positions[None, :] <= position[:, None])
    if attrs["local_window_size"] > 0:
        allowed = allowed & (positions[None, :] > position[:, None] - attrs["local_window_size"])
    at = xp.where(read >= 0, read, 0)
    seen_keys = xp.permute_dims(widened(written.keys)[at], (0, 2, 3, 1))  # (n or 1, kv_heads, size, span)
    seen_values = xp.permute_dims(widened(written.values)[at], (0, 2, 1, 3))  # (n or 1, kv_heads, span, size)
    grouped = xp.reshape(queries, (count, kv_heads, heads // kv_heads, size))
    scale = attrs["scale"] or 1 / float(np.sqrt(size))
    scores = xp.matmul(grouped * scale, seen_keys)  # (n, kv_heads, group, span)
    if attrs["softcap"] > 0:
        scores = attrs["softcap"] * xp.tanh(scores / attrs["softcap"])
    mask = allowed[:, None, None, :]
    top = xp.max(xp.where(mask, scores, -xp.inf), axis=-1, keepdims=True)
    weights = xp.where(mask, xp.exp(scores - xp.where(xp.isfinite(top), top, 0)), 0)
    total = xp.sum(weights, axis=-1, keepdims=True)
    attended = xp.matmul(weights / xp.where(total > 0, total, 1), seen_values)  # (n, kv_heads, group, size)
    return xp.reshape(attended, (count, heads * size))


def paged_attention(node: Node, scatter: Scatter, *inputs: Any) -> list[Any]:
    """The op on numpy or ``jax.numpy`` arrays (see the module docstring), computed in f32 or wider, every
    token at once (for XLA's static shapes: it gathers ``tokens x span`` cache rows); ``scatter`` writes
    the new keys and values into the caches."""
    query, key_cache, value_cache = inputs[0], inputs[3], inputs[4]
    xp = namespace(query)
    written = _write(node, scatter, inputs)
    blocks, block_size = key_cache.shape[:2]
    positions = xp.arange(written.table.shape[1] * block_size, dtype=xp.int32)
    read = _slots(written.table, written.sequence[:, None], positions[None, :], blocks, block_size)
    output = _attend(node, written, written.queries, read, written.position, written.packed)
    keys, values = xp.reshape(written.keys, key_cache.shape), xp.reshape(written.values, value_cache.shape)
    return [xp.astype(output, query.dtype), keys, values]


def _numpy_scatter(rows: Any, slots: Any, values: Any) -> Any:
    out = np.array(rows, copy=True)
    keep = np.asarray(slots) >= 0
    out[np.asarray(slots)[keep]] = np.asarray(values)[keep]
    return out


def _numpy_kernel(node: Node, *inputs: Any) -> list[Any]:
    """The op in numpy, one sequence at a time: each reads its span of the caches once."""
    arrays = [np.asarray(a) for a in inputs]
    query, key_cache, value_cache = arrays[0], arrays[3], arrays[4]
    written = _write(node, _numpy_scatter, arrays)
    blocks, block_size = key_cache.shape[:2]
    positions = np.arange(written.table.shape[1] * block_size, dtype=np.int32)
    output = np.zeros((query.shape[0], query.shape[1]), written.queries.dtype)
    for sequence in range(written.table.shape[0]):
        rows = np.flatnonzero(written.packed & (written.sequence == sequence))
        if rows.size:
            read = _slots(written.table, sequence, positions, blocks, block_size)[None, :]
            found = _attend(node, written, written.queries[rows], read, written.position[rows], written.packed[rows])
            output[rows] = found
    keys, values = written.keys.reshape(key_cache.shape), written.values.reshape(value_cache.shape)
    return [output.astype(query.dtype), keys, values]


PAGED_ATTENTION = OpDef(
    "PagedAttention",
    "contrib",
    _infer,
    inputs=(
        Input("query", REAL_TYPES, doc="(tokens, num_heads * head_size), the batch's real tokens packed"),
        Input("key", REAL_TYPES, doc="(tokens, kv_num_heads * head_size)"),
        Input("value", REAL_TYPES, doc="(tokens, kv_num_heads * head_size)"),
        Input("key_cache", REAL_TYPES, doc="(blocks, block_size, kv_num_heads, head_size)"),
        Input("value_cache", REAL_TYPES, doc="(blocks, block_size, kv_num_heads, head_size)"),
        Input("cumulative_sequence_length", _INDEX, doc="(batch + 1): where each sequence's tokens start"),
        Input("past_seqlens", _INDEX, doc="(batch): the tokens each sequence has in the caches"),
        Input("block_table", _INDEX, doc="(batch, blocks per sequence): each sequence's cache blocks (-1: none)"),
        Input("cos_cache", REAL_TYPES, optional=True, doc="(positions, head_size / 2), with do_rotary"),
        Input("sin_cache", REAL_TYPES, optional=True, doc="(positions, head_size / 2), with do_rotary"),
    ),
    attrs=(
        Attr("num_heads", INT, 1, minimum=1, doc="query heads"),
        Attr("kv_num_heads", INT, 1, minimum=1, doc="key and value heads (a divisor of num_heads)"),
        Attr("scale", FLOAT, 0.0, doc="of the scores; 0: 1/sqrt(head_size)"),
        Attr("softcap", FLOAT, 0.0, doc="scores become softcap * tanh(scores / softcap) when > 0"),
        Attr("local_window_size", INT, -1, doc="keys within this many positions back (-1: all)"),
        Attr("do_rotary", BOOL, False, doc="rotate queries and keys at their positions first"),
        Attr("rotary_interleaved", BOOL, False, doc="rotate (even, odd) pairs instead of the two halves"),
    ),
    version=VERSION,
    doc="Attention of packed sequences over a block-based key/value cache: each token's key and value "
    "written at its position through the block table, each query attending causally to its sequence's "
    "positions; outputs the attention and the updated caches.",
)

OPS = [PAGED_ATTENTION]
"""The op definitions this module contributes."""

KERNELS = {
    REFERENCE: {"PagedAttention": _numpy_kernel},
    "XLA": {"PagedAttention": "hetero_sdk_contrib.xla_paged_attention:paged_attention"},
}
"""numpy kernel (the oracle and TEMPLATE) and XLA's lowering (imported when XLA runs the op)."""

_REFUSED_INPUTS = {
    10: "slot_mapping (scheduler-chosen cache slots)",
    11: "head_sink",
    12: "q_norm_weight (Q/K RMSNorm)",
    13: "k_norm_weight (Q/K RMSNorm)",
    14: "k_scale (a quantized key cache)",
    15: "v_scale (a quantized value cache)",
}
_REFUSED_ATTRS = {
    "kv_cache_layout": ("SEPARATE", "the LATENT cache layout"),
    "k_quant_type": ("NONE", "a quantized key cache"),
    "v_quant_type": ("NONE", "a quantized value cache"),
    "k_cache_dtype": ("", "a key cache of another logical type"),
    "v_cache_dtype": ("", "a value cache of another logical type"),
    "is_causal": (1, "is_causal=0 (bidirectional block drafting)"),
    "rotary_offset": (0, "rotary_offset"),
    "v_head_size": (0, "v_head_size"),
}


def paged_attention_rule(ctx: NodeContext) -> Outputs:
    """com.microsoft PagedAttention: query (or packed QKV), [key], [value], key_cache, value_cache,
    cumulative_sequence_length, past_seqlens, block_table, [cos_cache], [sin_cache] (OpenVINO's
    translation reads the same). ``attention_metadata`` is a performance hint ONNX Runtime's
    documentation says never changes the result: ignored. The inputs and attributes of ONNX Runtime's
    later extensions (slot mapping, head sinks, Q/K norms, quantized or latent caches, non-causal
    attention) are refused with a typed error naming them."""
    for index, what in _REFUSED_INPUTS.items():
        if ctx.has_input(index):
            raise ctx.unsupported(f"the {what} input")
    for name, (default, what) in _REFUSED_ATTRS.items():
        if ctx.attr(name, default) != default:
            raise ctx.unsupported(f"{what} ({name}={ctx.attr(name)!r})")
    heads, kv_heads = ctx.attr("num_heads"), ctx.attr("kv_num_heads")
    query, key, value = ctx.input(0), ctx.optional_input(1), ctx.optional_input(2)
    if key is None or value is None:  # packed: (tokens, (num_heads + 2 kv_num_heads) head_size)
        hidden = query.partial_shape[1] if query.partial_shape.rank == 2 else -1
        if hidden < 0 or hidden % (heads + 2 * kv_heads):
            raise ctx.error(f"packed QKV {query.partial_shape} must hold (num_heads + 2 kv_num_heads) heads")
        size = hidden // (heads + 2 * kv_heads)
        lengths = ctx.const([heads * size, kv_heads * size, kv_heads * size], np.int64)
        split = opset.variadic_split(query, ctx.const(1, np.int64), lengths)
        query, key, value = split.output(0), split.output(1), split.output(2)
    inputs = [query, key, value, *(ctx.input(i) for i in range(3, 8))]
    rotary = bool(ctx.attr("do_rotary", 0))
    if rotary:
        if not (ctx.has_input(8) and ctx.has_input(9)):
            raise ctx.error("do_rotary=1 needs cos_cache and sin_cache")
        inputs += [ctx.input(8), ctx.input(9)]
    attrs = {
        "num_heads": heads,
        "kv_num_heads": kv_heads,
        "scale": ctx.attr("scale", 0.0),
        "softcap": ctx.attr("softcap", 0.0),
        "local_window_size": ctx.attr("local_window_size", -1),
        "do_rotary": rotary,
        "rotary_interleaved": bool(ctx.attr("rotary_interleaved", 0)),
    }
    node = Node(PAGED_ATTENTION, inputs, attrs)
    return [node.output(i) if ctx.wants_output(i) else None for i in range(3)]


ONNX_RULES = [
    OnnxRule(DOMAIN, "PagedAttention", paged_attention_rule, makes=("PagedAttention", "VariadicSplit")),
]
"""The ONNX ops this module translates."""


# -- conformance-kit recipes -----------------------------------------------------------------------------


def _paged_case(b: Any, op_type: str) -> Any:
    """Two sequences with a past in the caches and new tokens, blocks handed out in a shuffled order."""
    dtype = b.pick([np.float32, np.float16])
    kv_heads, group, size, block_size = b.integer(1, 2), b.integer(1, 2), 2 * b.integer(1, 2), b.integer(1, 3)
    heads = kv_heads * group
    past = np.array([b.integer(0, 4), b.integer(0, 4)], np.int32)
    new = np.array([b.integer(1, 3), b.integer(0, 3)], np.int32)
    per_sequence = int(-(-(past + new).max() // block_size))
    blocks = 2 * per_sequence + 1
    table = b.rng.permutation(blocks)[: 2 * per_sequence].reshape(2, per_sequence).astype(np.int32)
    tokens = int(new.sum())
    attrs = {"num_heads": heads, "kv_num_heads": kv_heads, "softcap": b.pick([0.0, 5.0]),
             "local_window_size": b.pick([-1, 2])}  # fmt: skip
    inputs = [
        b.input(b.values([tokens, heads * size], dtype, -1, 1), "query").output(0),
        b.input(b.values([tokens, kv_heads * size], dtype, -1, 1), "key").output(0),
        b.input(b.values([tokens, kv_heads * size], dtype, -1, 1), "value").output(0),
        b.input(b.values([blocks, block_size, kv_heads, size], dtype, -1, 1), "key_cache").output(0),
        b.input(b.values([blocks, block_size, kv_heads, size], dtype, -1, 1), "value_cache").output(0),
        b.operand(np.concatenate([[0], np.cumsum(new)]).astype(np.int32), "cumulative_sequence_length").output(0),
        b.operand(past, "past_seqlens").output(0),
        b.operand(table, "block_table").output(0),
    ]
    node = Node(PAGED_ATTENTION, inputs, attrs, "op")
    return b.case(op_type, [node.output(i) for i in range(3)], "accumulate", 2 * per_sequence * block_size, **attrs)


RECIPES = {"PagedAttention": _paged_case}
"""Conformance-kit case recipes by op type."""
