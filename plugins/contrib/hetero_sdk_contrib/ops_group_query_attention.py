"""com.microsoft GroupQueryAttention, the attention of onnxruntime-genai's decoders: grouped key/value
heads, a key/value cache of a fixed or growing length whose filled length per sequence comes from
``seqlens_k`` (not from the cache's shape), optional rotary embedding of the query and key, a local
(sliding) window and a soft cap of the scores.

Per sequence ``b`` of the batch, ``total_b = seqlens_k[b] + 1`` tokens are valid; the new tokens sit
at positions ``past_b = total_b - sequence`` on (0 for the first prompt, where the query's length is
``total_sequence_length``). The present cache holds the past's first ``past_b`` entries, then the new
keys and values, then zeros, over ``max(past length, total_sequence_length)`` positions. Query ``i``
attends to positions ``j <= past_b + i`` with ``j < total_b`` (and ``j > past_b + i - window`` with a
local window).

The kernel is array-API code (numpy on TEMPLATE, traced by JAX on XLA): ``seqlens_k`` stays a run-time
value, only ``total_sequence_length`` (which decides the present cache's length) must be known to
compile for static shapes.

The op declares its caches written in place (``OpDef.caches``): ``present_key``/``present_value`` are
``past_key``/``past_value`` with the new entries at ``seqlens_k + 1 - sequence``, so on a device that
compiles per input shape a stateful decoder keeps them in fixed-capacity buffers (the attention mask
padded with zeros to the capacity gives ``seqlens_k`` and ``total_sequence_length``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hetero_sdk import Node, Output, PartialShape, Type, opset
from hetero_sdk.extensions import OnnxRule
from hetero_sdk.plugin import (
    BOOL,
    FLOAT,
    INT,
    REAL_TYPES,
    Attr,
    InPlaceCache,
    Input,
    OpDef,
    OutputSpec,
    constant_value,
    expect_rank,
    expect_same_types,
    namespace,
    widened,
)
from hetero_sdk.plugin import OnnxNodeContext as NodeContext

from hetero_sdk_contrib.checks import Outputs
from hetero_sdk_contrib.constants import DOMAIN, VERSION
from hetero_sdk_contrib.ops_rotary import rotated

__all__ = ["GROUP_QUERY_ATTENTION", "ONNX_RULES", "OPS", "RECIPES"]

_I32 = frozenset({Type.i32})


def _infer(node: Node) -> list[OutputSpec]:
    heads, kv_heads = node.attrs["num_heads"], node.attrs["kv_num_heads"]
    if heads % kv_heads:
        raise node.error(f"num_heads={heads} is not a multiple of kv_num_heads={kv_heads}")
    element_type = expect_same_types(node, 0, 1, 2, 5, 6)
    query, key = expect_rank(node, 0, 3, what="query"), expect_rank(node, 1, 3, what="key")
    head_size = query[2] // heads if query[2] >= 0 else -1
    if query[2] >= 0 and query[2] % heads:
        raise node.error(f"query's hidden size {query[2]} is not a multiple of num_heads={heads}")
    if key[2] >= 0 and head_size >= 0 and key[2] != kv_heads * head_size:
        raise node.error(f"key {key} must have kv_num_heads * head_size = {kv_heads * head_size} columns")
    past = expect_rank(node, 5, 4, what="past_key")
    expect_rank(node, 3, 1, what="seqlens_k")
    total = constant_value(node.input_value(4))
    length = -1
    if total is not None and past[2] >= 0:
        length = max(int(np.asarray(total).reshape(-1)[0]), past[2])
    if node.get_input_size() > 7:
        cos = expect_rank(node, 7, 2, what="cos_cache")
        if cos[1] >= 0 and head_size >= 0 and 2 * cos[1] > head_size:
            raise node.error(f"cos_cache {cos} rotates more than head_size={head_size} elements")
    elif node.attrs["do_rotary"]:
        raise node.error("do_rotary needs cos_cache and sin_cache")
    present = PartialShape([query[0], kv_heads, length, head_size])
    return [(element_type, query), (element_type, present), (element_type, present)]


def _place_new(xp: Any, past: Any, new: Any, past_lengths: Any, length: int) -> Any:
    """The present cache: ``past``'s first ``past_b`` positions, ``new`` at ``past_b`` on, zeros after;
    past (batch, heads, P, size), new (batch, heads, S, size), ``length`` positions."""
    batch, heads, sequence, size = new.shape
    if past.shape[2] < length:
        padding = xp.zeros((batch, heads, length - past.shape[2], size), dtype=past.dtype)
        past = xp.concat([past, padding], axis=2)
    positions = xp.reshape(xp.arange(length, dtype=xp.int32), (1, 1, length, 1))
    start = xp.reshape(past_lengths, (batch, 1, 1, 1))
    offset = positions - start
    in_new = (offset >= 0) & (offset < sequence)
    index = xp.broadcast_to(xp.clip(offset, 0, sequence - 1), (batch, heads, length, size))
    taken = xp.take_along_axis(new, index, axis=2)
    return xp.where(in_new, taken, xp.where(positions < start, past, xp.zeros_like(past)))


def _rows_at(xp: Any, table: Any, positions: Any) -> Any:
    """``table``'s rows at ``positions`` (batch, sequence); NaN rows where a position is past the table
    (a sequence longer than the model's rotary tables: ONNX Runtime refuses it, and a traced gather
    would clamp it silently)."""
    rows = table.shape[0]
    inside = (positions < rows)[:, :, None]
    taken = table[xp.clip(positions, 0, rows - 1)]
    return xp.where(inside, taken, xp.asarray(float("nan"), dtype=taken.dtype))


def _group_query_attention(
    node: Node,
    query: Any,
    key: Any,
    value: Any,
    seqlens_k: Any,
    total_sequence_length: Any,
    past_key: Any,
    past_value: Any,
    cos_cache: Any | None = None,
    sin_cache: Any | None = None,
) -> tuple[Any, Any, Any]:
    xp = namespace(query)
    attrs = node.attrs
    heads, kv_heads = attrs["num_heads"], attrs["kv_num_heads"]
    batch, sequence = query.shape[0], query.shape[1]
    size = query.shape[2] // heads
    total = int(np.asarray(total_sequence_length).reshape(-1)[0])
    length = max(total, past_key.shape[2])
    valid = xp.astype(xp.reshape(seqlens_k, (batch,)), xp.int32) + 1
    past_lengths = xp.zeros_like(valid) if sequence == total else valid - sequence
    positions = xp.reshape(past_lengths, (batch, 1)) + xp.reshape(xp.arange(sequence, dtype=xp.int32), (1, sequence))

    q = xp.reshape(widened(query), (batch, sequence, heads, size))
    k = xp.reshape(widened(key), (batch, sequence, kv_heads, size))
    if attrs["do_rotary"] and cos_cache is not None and sin_cache is not None:
        cos, sin = (_rows_at(xp, widened(table), positions)[:, :, None, :] for table in (cos_cache, sin_cache))
        q = rotated(q, cos, sin, attrs["rotary_interleaved"])
        k = rotated(k, cos, sin, attrs["rotary_interleaved"])
    v = xp.reshape(widened(value), (batch, sequence, kv_heads, size))
    new_key, new_value = (xp.permute_dims(t, (0, 2, 1, 3)) for t in (k, v))
    present_key = _place_new(xp, widened(past_key), new_key, past_lengths, length)
    present_value = _place_new(xp, widened(past_value), new_value, past_lengths, length)

    group = heads // kv_heads
    q = xp.reshape(xp.permute_dims(q, (0, 2, 1, 3)), (batch, kv_heads, group, sequence, size))
    scale = attrs["scale"] or 1 / float(np.sqrt(size))
    scores = xp.matmul(q * scale, xp.matrix_transpose(present_key)[:, :, None])  # (B, kvN, g, S, L)
    if attrs["softcap"] > 0:
        scores = attrs["softcap"] * xp.tanh(scores / attrs["softcap"])
    keys = xp.reshape(xp.arange(length, dtype=xp.int32), (1, 1, 1, 1, length))
    at = xp.reshape(positions, (batch, 1, 1, sequence, 1))
    allowed = (keys <= at) & (keys < xp.reshape(valid, (batch, 1, 1, 1, 1)))
    if attrs["local_window_size"] > 0:
        allowed = allowed & (keys > at - attrs["local_window_size"])
    scores = xp.where(allowed, scores, -xp.inf)
    top = xp.max(scores, axis=-1, keepdims=True)
    if attrs["smooth_softmax"]:  # a zero logit joins every row's softmax
        top = xp.maximum(top, 0.0)
    weights = xp.exp(scores - top)
    denominator = xp.sum(weights, axis=-1, keepdims=True)
    if attrs["smooth_softmax"]:
        denominator = denominator + xp.exp(-top)
    out = xp.matmul(weights / denominator, present_value[:, :, None])  # (B, kvN, g, S, size)
    out = xp.reshape(out, (batch, heads, sequence, size))
    return xp.reshape(xp.permute_dims(out, (0, 2, 1, 3)), (batch, sequence, heads * size)), present_key, present_value


GROUP_QUERY_ATTENTION = OpDef(
    "GroupQueryAttention",
    "contrib",
    _infer,
    inputs=(
        Input("query", REAL_TYPES, doc="(batch, sequence, num_heads * head_size)"),
        Input("key", REAL_TYPES, doc="(batch, sequence, kv_num_heads * head_size)"),
        Input("value", REAL_TYPES, doc="(batch, sequence, kv_num_heads * head_size)"),
        Input("seqlens_k", _I32, doc="(batch): each sequence's valid length minus 1"),
        Input("total_sequence_length", _I32, decides_shape=True, doc="scalar: the longest valid length"),
        Input("past_key", REAL_TYPES, doc="(batch, kv_num_heads, past, head_size); past may be 0"),
        Input("past_value", REAL_TYPES, doc="(batch, kv_num_heads, past, head_size)"),
        Input("cos_cache", REAL_TYPES, optional=True, doc="(positions, rotary_dim / 2)"),
        Input("sin_cache", REAL_TYPES, optional=True, doc="(positions, rotary_dim / 2)"),
    ),
    attrs=(
        Attr("num_heads", INT, minimum=1, doc="query heads"),
        Attr("kv_num_heads", INT, minimum=1, doc="key/value heads (num_heads is a multiple)"),
        Attr("scale", FLOAT, 0.0, doc="of the scores; 0: 1/sqrt(head_size)"),
        Attr("softcap", FLOAT, 0.0, doc="scores become softcap * tanh(scores / softcap) when > 0"),
        Attr("local_window_size", INT, -1, doc="keys within this many positions back (-1: all)"),
        Attr("do_rotary", BOOL, False, doc="rotate the query and key by their positions first"),
        Attr("rotary_interleaved", BOOL, False, doc="rotary over (even, odd) pairs rather than halves"),
        Attr("smooth_softmax", BOOL, False, doc="a zero logit joins each softmax"),
    ),
    version=VERSION,
    evaluate=_group_query_attention,
    caches=(  # present_key/present_value: past_key/past_value written in place, filled length from seqlens_k
        InPlaceCache(past=5, present=1, axis=2, lengths=(3,)),
        InPlaceCache(past=6, present=2, axis=2, lengths=(3,)),
    ),
    doc="Causal grouped-query attention over a key/value cache whose filled length per sequence is "
    "seqlens_k + 1; returns the output and the present key and value caches.",
)

OPS = [GROUP_QUERY_ATTENTION]
"""The op definitions this module contributes."""


def _empty_cache(ctx: NodeContext, query: Output, kv_heads: int, size: int) -> Output:
    """A cache of no positions, (batch, kv_heads, 0, size), for a node given no past."""
    batch = opset.gather(opset.shape_of(query), ctx.const([0], np.int64), ctx.const(0, np.int64))
    shape = opset.concat([batch, ctx.const([kv_heads, 0, size], np.int64)], 0)
    return opset.broadcast(ctx.const(np.zeros((), query.element_type.numpy)), shape).output(0)


def group_query_attention_rule(ctx: NodeContext) -> Outputs:
    """com.microsoft GroupQueryAttention: query (or packed QKV), [key], [value], [past_key],
    [past_value], seqlens_k, total_sequence_length, [cos_cache], [sin_cache]. Later inputs
    (position_ids, attention_bias, head_sink) and the qk output are refused."""
    for index, name in ((9, "position_ids"), (10, "attention_bias"), (11, "head_sink")):
        if ctx.has_input(index):
            raise ctx.unsupported(f"the {name} input")
    if ctx.wants_output(3):
        raise ctx.unsupported("the output_qk output")
    heads, kv_heads = ctx.attr("num_heads"), ctx.attr("kv_num_heads")
    query = ctx.input(0)
    key, value = ctx.optional_input(1), ctx.optional_input(2)
    hidden = query.partial_shape[2] if query.partial_shape.rank == 3 else -1
    if key is None or value is None:  # packed: (batch, sequence, (num_heads + 2 kv_num_heads) head_size)
        if hidden < 0 or hidden % (heads + 2 * kv_heads):
            raise ctx.error(f"packed QKV {query.partial_shape} must hold (num_heads + 2 kv_num_heads) heads")
        size = hidden // (heads + 2 * kv_heads)
        lengths = ctx.const([heads * size, kv_heads * size, kv_heads * size], np.int64)
        split = opset.variadic_split(query, ctx.const(2, np.int64), lengths)
        query, key, value = split.output(0), split.output(1), split.output(2)
    else:
        if hidden < 0 or hidden % heads:
            raise ctx.unsupported(f"a query of hidden size {hidden} (must be known, a multiple of num_heads)")
        size = hidden // heads
    past_key, past_value = ctx.optional_input(3), ctx.optional_input(4)
    if (past_key is None) != (past_value is None):
        raise ctx.error("past_key and past_value must be given together")
    if past_key is None or past_value is None:
        past_key = past_value = _empty_cache(ctx, query, kv_heads, size)
    inputs = [query, key, value, ctx.input(5), ctx.input(6), past_key, past_value]
    cos, sin = ctx.optional_input(7), ctx.optional_input(8)
    if ctx.attr("do_rotary", 0):
        if cos is None or sin is None:
            raise ctx.error("do_rotary=1 needs cos_cache and sin_cache")
        inputs += [cos, sin]
    attrs = {
        "num_heads": heads,
        "kv_num_heads": kv_heads,
        "scale": ctx.attr("scale", 0.0),
        "softcap": ctx.attr("softcap", 0.0),
        "local_window_size": ctx.attr("local_window_size", -1),
        "do_rotary": bool(ctx.attr("do_rotary", 0)),
        "rotary_interleaved": bool(ctx.attr("rotary_interleaved", 0)),
        "smooth_softmax": bool(ctx.attr("smooth_softmax", 0)),
    }
    node = Node(GROUP_QUERY_ATTENTION, inputs, attrs)
    return [node.output(i) if ctx.wants_output(i) else None for i in range(3)]


ONNX_RULES = [
    OnnxRule(
        DOMAIN,
        "GroupQueryAttention",
        group_query_attention_rule,
        makes=("GroupQueryAttention", "VariadicSplit", "Broadcast", "Concat", "Gather", "ShapeOf"),
    )
]
"""The ONNX ops this module translates."""


# -- conformance-kit recipes -----------------------------------------------------------------------------


def _gqa_case(b: Any, op_type: str) -> Any:
    """A decoding step over a fixed-capacity cache: each sequence's own filled length."""
    kv_heads, group, size = b.integer(1, 2), b.integer(1, 2), b.pick([2, 4])
    heads, batch, capacity = kv_heads * group, b.integer(1, 2), b.integer(2, 5)
    sequence = 1
    filled = b.values([batch], np.int32, 0, capacity - 1)
    query = b.input(b.values([batch, sequence, heads * size], np.float32), "query")
    key, value = (b.input(b.values([batch, sequence, kv_heads * size], np.float32), n) for n in ("key", "value"))
    seqlens = b.input(filled, "seqlens_k")
    total = b.operand(np.array(capacity, np.int32), "total_sequence_length", constant=True)
    past = [b.input(b.values([batch, kv_heads, capacity, size], np.float32), n) for n in ("past_key", "past_value")]
    attrs = {"num_heads": heads, "kv_num_heads": kv_heads, "softcap": b.pick([0.0, 5.0]),
             "local_window_size": b.pick([-1, 2])}  # fmt: skip
    inputs = [n.output(0) for n in (query, key, value, seqlens, total, *past)]
    node = Node(GROUP_QUERY_ATTENTION, inputs, attrs, "op")
    return b.case(op_type, node.outputs(), "accumulate", capacity * size, **attrs)


RECIPES = {"GroupQueryAttention": _gqa_case}
"""Conformance-kit case recipes by op type."""
