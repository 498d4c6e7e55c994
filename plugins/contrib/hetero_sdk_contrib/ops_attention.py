"""com.microsoft Attention and MultiHeadAttention. Attention is the self-attention ONNX Runtime's
transformer optimizer fuses BERT's and GPT-2's layers into: the input projected to query, key and value
by one weight (and bias), split into heads, keys and values appended to a past cache, scaled dot
products with additive masks, softmax.

Masks are additive, as ONNX Runtime computes them: each masked position's score gets
``mask_filter_value`` (-10000 by default) added, once per reason (padding, and for ``unidirectional``
the positions after the query's). The mask index is either the key lengths per sequence, ``(batch)``,
or raw 0/1 masks, ``(batch, total)`` or ``(batch, sequence, total)``.

MultiHeadAttention takes the query, key and value already projected (self- or cross-attention; a key
and value already split in heads, as a cross-attention cache holds them, take no bias), with the same
masks.

The kernels are array-API code (numpy on TEMPLATE, traced by JAX on XLA).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hetero_sdk import Node, PartialShape, Type
from hetero_sdk.extensions import OnnxRule
from hetero_sdk.plugin import (
    BOOL,
    FLOAT,
    INT,
    INTS,
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

from hetero_sdk_contrib.checks import Outputs
from hetero_sdk_contrib.constants import DOMAIN, VERSION

__all__ = ["ATTENTION", "MULTI_HEAD_ATTENTION", "ONNX_RULES", "OPS", "attended", "RECIPES"]


def _sizes(node: Node, columns: int) -> tuple[int, int, int]:
    """The query, key and value hidden sizes: ``qkv_hidden_sizes``, or thirds of the weight's columns."""
    sizes = node.attrs["qkv_hidden_sizes"]
    if sizes:
        if len(sizes) != 3 or sizes[0] != sizes[1]:
            raise node.error(f"qkv_hidden_sizes={sizes} must be 3 sizes, the query's and key's equal")
        return sizes[0], sizes[1], sizes[2]
    if columns < 0:
        return -1, -1, -1
    if columns % 3:
        raise node.error(f"weights have {columns} columns; without qkv_hidden_sizes they must split in 3")
    return columns // 3, columns // 3, columns // 3


def _infer(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1)
    heads = node.attrs["num_heads"]
    data = expect_rank(node, 0, 3, what="input")
    weights = expect_rank(node, 1, 2, what="weights")
    q_size, _, v_size = _sizes(node, weights[1])
    for size, label in ((q_size, "query"), (v_size, "value")):
        if size >= 0 and size % heads:
            raise node.error(f"the {label}'s hidden size {size} is not a multiple of num_heads={heads}")
    if node.get_input_size() > 3:
        mask = node.input_value(3).partial_shape
        if mask.rank_is_static and mask.rank not in (1, 2, 3):
            raise node.error(f"mask_index has shape {mask}; expected (batch), (batch, total) or (batch, sequence, "
                             "total)")  # fmt: skip
        if mask.rank == 1 and data[0] >= 0 and mask[0] >= 0 and mask[0] != data[0]:
            raise node.error(f"mask_index {mask} must hold one key length per sequence of input {data}")
    outputs: list[OutputSpec] = [(element_type, PartialShape([data[0], data[1], v_size]))]
    past_length = 0
    if node.get_input_size() > 4:
        past = expect_rank(node, 4, 5, what="past")
        past_length = past[3]
    total = data[1] + past_length if data[1] >= 0 and past_length >= 0 else -1
    head_size = q_size // heads if q_size >= 0 else -1
    outputs.append((element_type, PartialShape([2, data[0], heads, total, head_size])))
    return outputs


def _heads(xp: Any, x: Any, heads: int) -> Any:
    """(batch, sequence, heads * size) -> (batch, heads, sequence, size)."""
    batch, sequence, hidden = x.shape
    return xp.permute_dims(xp.reshape(x, (batch, sequence, heads, hidden // heads)), (0, 2, 1, 3))


def _additive_mask(node: Node, mask: Any, batch: int, sequence: int, past: int) -> Any:
    """``mask_filter_value`` where a key is masked, 0 elsewhere: (batch or 1, 1, sequence, total)."""
    xp = namespace(mask)
    total, masked_value = past + sequence, node.attrs["mask_filter_value"]
    keys = xp.reshape(xp.arange(total, dtype=xp.int32), (1, 1, 1, total))
    if mask.ndim == 1:  # each sequence's key length
        masked = keys >= xp.reshape(xp.astype(mask, xp.int32), (batch, 1, 1, 1))
    elif mask.ndim == 2:
        masked = xp.reshape(mask == 0, (mask.shape[0], 1, 1, mask.shape[1]))
    else:
        masked = xp.reshape(mask == 0, (mask.shape[0], 1, *mask.shape[1:]))
    return xp.where(masked, masked_value, 0.0)


def attended(node: Node, q: Any, k: Any, v: Any, mask: Any | None, attention_bias: Any | None, past_length: int) -> Any:
    """softmax(q k^T * scale + masks + attention_bias) v over heads, (batch, sequence, heads * size): q
    (batch, heads, sequence, size), k and v (batch, heads, past + new keys, size); the node's
    ``scale``, ``mask_filter_value`` and ``unidirectional`` attributes."""
    xp = namespace(q)
    batch, sequence, total = q.shape[0], q.shape[2], k.shape[2]
    scale = node.attrs["scale"] or 1 / float(np.sqrt(q.shape[-1]))
    scores = xp.matmul(q, xp.matrix_transpose(k)) * scale
    if mask is not None:
        scores = scores + _additive_mask(node, mask, batch, sequence, total - sequence)
    if node.attrs["unidirectional"]:
        keys = xp.reshape(xp.arange(total, dtype=xp.int32), (1, -1))
        queries = xp.reshape(xp.arange(sequence, dtype=xp.int32), (-1, 1)) + past_length
        scores = scores + xp.where(keys > queries, node.attrs["mask_filter_value"], 0.0)
    if attention_bias is not None:
        scores = scores + widened(attention_bias)
    weights = xp.exp(scores - xp.max(scores, axis=-1, keepdims=True))
    out = xp.matmul(weights / xp.sum(weights, axis=-1, keepdims=True), v)
    return xp.reshape(xp.permute_dims(out, (0, 2, 1, 3)), (batch, sequence, -1))


def _attention(
    node: Node,
    data: Any,
    weights: Any,
    bias: Any | None = None,
    mask_index: Any | None = None,
    past: Any | None = None,
    attention_bias: Any | None = None,
) -> tuple[Any, Any]:
    xp = namespace(data)
    heads = node.attrs["num_heads"]
    q_size, k_size, _ = _sizes(node, weights.shape[1])
    projected = xp.matmul(widened(data), widened(weights))
    if bias is not None:
        projected = projected + widened(bias)
    q = _heads(xp, projected[..., :q_size], heads)
    k = _heads(xp, projected[..., q_size : q_size + k_size], heads)
    v = _heads(xp, projected[..., q_size + k_size :], heads)
    past_length = 0 if past is None else past.shape[3]
    if past is not None and past_length:
        k = xp.concat([widened(past[0]), k], axis=2)
        v = xp.concat([widened(past[1]), v], axis=2)
    out = attended(node, q, k, v, mask_index, attention_bias, past_length)
    return out, xp.stack([k, v])


_MASK_TYPES = frozenset({Type.i32, Type.i64, Type.boolean})
ATTENTION = OpDef(
    "Attention",
    "contrib",
    _infer,
    inputs=(
        Input("input", REAL_TYPES, doc="(batch, sequence, input_hidden)"),
        Input("weights", REAL_TYPES, doc="(input_hidden, q_hidden + k_hidden + v_hidden)"),
        Input("bias", REAL_TYPES, optional=True, doc="(q_hidden + k_hidden + v_hidden)"),
        Input("mask_index", _MASK_TYPES, optional=True, doc="(batch) key lengths, or 0/1 (batch[, sequence], total)"),
        Input("past", REAL_TYPES, optional=True, doc="(2, batch, heads, past, head_size): keys and values"),
        Input("attention_bias", REAL_TYPES, optional=True, doc="added to the scores, (batch or 1, heads or 1, S, T)"),
    ),
    attrs=(
        Attr("num_heads", INT, minimum=1, doc="attention heads"),
        Attr("qkv_hidden_sizes", INTS, [], doc="the query, key and value hidden sizes (default: thirds)"),
        Attr("unidirectional", BOOL, False, doc="causal: each query sees the past and itself"),
        Attr("mask_filter_value", FLOAT, -10000.0, doc="added to the scores of masked keys"),
        Attr("scale", FLOAT, 0.0, doc="of the scores; 0: 1/sqrt(head_size)"),
    ),
    version=VERSION,
    evaluate=_attention,
    doc="Multi-head self-attention of input projected by weights and bias, over the past and new keys "
    "and values, with additive masks; returns the output and the present keys and values.",
)


def _infer_mha(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1, 2)
    heads = node.attrs["num_heads"]
    query = expect_rank(node, 0, 3, what="query")
    key, value = node.input_value(1).partial_shape, node.input_value(2).partial_shape
    if (key.rank_is_static and key.rank not in (3, 4)) or (value.rank_is_static and value.rank != key.rank):
        raise node.error(f"key {key} and value {value} must both be (batch, keys, hidden) or (batch, heads, keys, "
                         "head_size)")  # fmt: skip
    if query[2] >= 0 and query[2] % heads:
        raise node.error(f"query's hidden size {query[2]} is not a multiple of num_heads={heads}")
    if key.rank == 4 and node.get_input_size() > 6:
        raise node.error("past_key with a key already split in heads (cross-attention's cache)")
    head_size = query[2] // heads if query[2] >= 0 else -1
    if value.rank == 4:
        value_hidden = heads * value[3] if value[3] >= 0 else -1
    else:
        value_hidden = value[2] if value.rank_is_static else -1
    keys = key[key.rank - 2] if key.rank_is_static else -1
    if node.get_input_size() > 6:
        past = expect_rank(node, 6, 4, what="past_key")
        keys = past[2] + keys if past[2] >= 0 and keys >= 0 else -1
    value_size = value_hidden // heads if value_hidden >= 0 else -1
    return [
        (element_type, PartialShape([query[0], query[1], value_hidden])),
        (element_type, PartialShape([query[0], heads, keys, head_size])),
        (element_type, PartialShape([query[0], heads, keys, value_size])),
    ]


def _multi_head_attention(
    node: Node,
    query: Any,
    key: Any,
    value: Any,
    bias: Any | None = None,
    key_padding_mask: Any | None = None,
    attention_bias: Any | None = None,
    past_key: Any | None = None,
    past_value: Any | None = None,
) -> tuple[Any, Any, Any]:
    xp = namespace(query)
    heads = node.attrs["num_heads"]
    q, k, v = widened(query), widened(key), widened(value)
    hidden = query.shape[2]
    if bias is not None:
        bias = widened(bias)
        q = q + bias[:hidden]
        if key.ndim == 3:  # a key already in heads (cross-attention's cache) takes no bias
            k = k + bias[hidden : hidden + key.shape[2]]
            v = v + bias[hidden + key.shape[2] :]
    q = _heads(xp, q, heads)
    if key.ndim == 3:
        k, v = _heads(xp, k, heads), _heads(xp, v, heads)
    past_length = 0 if past_key is None else past_key.shape[2]
    if past_key is not None and past_value is not None and past_length:
        k = xp.concat([widened(past_key), k], axis=2)
        v = xp.concat([widened(past_value), v], axis=2)
    return attended(node, q, k, v, key_padding_mask, attention_bias, past_length), k, v


MULTI_HEAD_ATTENTION = OpDef(
    "MultiHeadAttention",
    "contrib",
    _infer_mha,
    inputs=(
        Input("query", REAL_TYPES, doc="(batch, sequence, hidden)"),
        Input("key", REAL_TYPES, doc="(batch, keys, hidden), or (batch, heads, keys, head_size) as cached"),
        Input("value", REAL_TYPES, doc="as key, with the value's hidden size"),
        Input("bias", REAL_TYPES, optional=True, doc="(hidden + key hidden + value hidden)"),
        Input("key_padding_mask", _MASK_TYPES, optional=True, doc="(batch) key lengths, or 0/1 (batch, total)"),
        Input("attention_bias", REAL_TYPES, optional=True, doc="added to the scores, (batch or 1, heads or 1, S, T)"),
        Input("past_key", REAL_TYPES, optional=True, doc="(batch, heads, past, head_size)"),
        Input("past_value", REAL_TYPES, optional=True, doc="(batch, heads, past, value head_size)"),
    ),
    attrs=(
        Attr("num_heads", INT, minimum=1, doc="attention heads"),
        Attr("unidirectional", BOOL, False, doc="causal: each query sees the past and itself"),
        Attr("mask_filter_value", FLOAT, -10000.0, doc="added to the scores of masked keys"),
        Attr("scale", FLOAT, 0.0, doc="of the scores; 0: 1/sqrt(head_size)"),
    ),
    version=VERSION,
    evaluate=_multi_head_attention,
    doc="Multi-head attention of a query over keys and values (self or cross), after the past ones, with "
    "additive masks; returns the output and the present keys and values.",
)

OPS = [ATTENTION, MULTI_HEAD_ATTENTION]
"""The op definitions this module contributes."""


def attention_rule(ctx: NodeContext) -> Outputs:
    """com.microsoft Attention: input, weights, [bias], [mask_index], [past], [attention_bias]. Rotary,
    a shared past/present buffer, past_sequence_length, the (2 * batch) mask index and 4-D masks are
    refused. A left-out input a later one follows is written as its neutral value: zero bias, a mask
    of ones, a past of no positions."""
    if ctx.attr("do_rotary", 0):
        raise ctx.unsupported("do_rotary=1")
    if ctx.attr("past_present_share_buffer", 0) or ctx.has_input(6):
        raise ctx.unsupported("a shared past/present buffer (past_present_share_buffer, past_sequence_length)")
    data, weights = ctx.input(0), ctx.input(1)
    heads = ctx.attr("num_heads")
    mask = ctx.optional_input(3)
    if mask is not None:
        shape = mask.partial_shape
        if shape.rank == 1 and shape[0] >= 0 and data.partial_shape[0] >= 0 and shape[0] == 2 * data.partial_shape[0]:
            raise ctx.unsupported("a mask_index of end and start positions (2 * batch)")
        if shape.rank == 4:
            raise ctx.unsupported("a 4-D mask_index")
    given = [ctx.optional_input(i) for i in (2, 3, 4, 5)]
    last = max((i for i, v in enumerate(given) if v is not None), default=-1)
    columns = weights.partial_shape[1] if weights.partial_shape.rank == 2 else -1
    sizes = list(ctx.attr("qkv_hidden_sizes", [])) or ([columns // 3] * 3 if columns >= 0 else [])

    def neutral(index: int) -> Any:
        if index == 0 and columns >= 0:
            return ctx.const(np.zeros(columns, data.element_type.numpy))
        if index == 1:
            return ctx.const(np.ones((1, 1), np.int32))
        if index == 2 and sizes:
            return ctx.const(np.zeros((2, 1, heads, 0, sizes[0] // heads), data.element_type.numpy))
        raise ctx.unsupported("a left-out input before a given one, with weights of unknown width")

    inputs = [data, weights] + [v if v is not None else neutral(i) for i, v in enumerate(given[: last + 1])]
    attrs = {
        "num_heads": heads,
        "qkv_hidden_sizes": list(ctx.attr("qkv_hidden_sizes", [])),
        "unidirectional": bool(ctx.attr("unidirectional", 0)),
        "mask_filter_value": ctx.attr("mask_filter_value", -10000.0),
        "scale": ctx.attr("scale", 0.0),
    }
    node = Node(ATTENTION, inputs, attrs)
    return [node.output(0), node.output(1) if ctx.wants_output(1) else None]


def multi_head_attention_rule(ctx: NodeContext) -> Outputs:
    """com.microsoft MultiHeadAttention: query, key, value, [bias], [key_padding_mask],
    [attention_bias], [past_key], [past_value]. Packed QKV or KV, past_sequence_length, cache
    indirection and the qk output are refused; a left-out input a later one follows is written as its
    neutral value (zero bias, a mask of ones, a zero attention bias, a past of no keys)."""
    query, key, value = ctx.input(0), ctx.optional_input(1), ctx.optional_input(2)
    if key is None or value is None or query.partial_shape.rank == 5 or key.partial_shape.rank == 5:
        raise ctx.unsupported("packed query/key/value (give query, key and value separately)")
    for index, name in ((8, "past_sequence_length"), (9, "cache_indirection")):
        if ctx.has_input(index):
            raise ctx.unsupported(f"the {name} input")
    if ctx.wants_output(3):
        raise ctx.unsupported("the qk output")
    heads = ctx.attr("num_heads")
    given = [ctx.optional_input(i) for i in (3, 4, 5, 6, 7)]
    last = max((i for i, v in enumerate(given) if v is not None), default=-1)
    dims = [value.partial_shape[i] for i in range(value.partial_shape.rank)]
    value_hidden = (heads * dims[3] if dims[3] >= 0 else -1) if len(dims) == 4 else dims[-1]
    hidden, key_hidden = query.partial_shape[2], key.partial_shape[key.partial_shape.rank - 1]
    if key.partial_shape.rank == 4:
        key_hidden = heads * key_hidden if key_hidden >= 0 else -1
    element = query.element_type.numpy

    def neutral(index: int) -> Any:
        if index == 0 and min(hidden, key_hidden, value_hidden) >= 0:
            return ctx.const(np.zeros(hidden + key_hidden + value_hidden, element))
        if index == 1:
            return ctx.const(np.ones((1, 1), np.int32))
        if index == 2:
            return ctx.const(np.zeros((1, 1, 1, 1), element))
        raise ctx.unsupported("a left-out input before a given one, with hidden sizes not known")

    inputs = [query, key, value] + [v if v is not None else neutral(i) for i, v in enumerate(given[: last + 1])]
    if (given[3] is None) != (given[4] is None) and last >= 3:
        raise ctx.error("past_key and past_value must be given together")
    attrs = {
        "num_heads": heads,
        "unidirectional": bool(ctx.attr("unidirectional", 0)),
        "mask_filter_value": ctx.attr("mask_filter_value", -10000.0),
        "scale": ctx.attr("scale", 0.0),
    }
    node = Node(MULTI_HEAD_ATTENTION, inputs, attrs)
    return [node.output(i) if ctx.wants_output(i) else None for i in range(3)]


ONNX_RULES = [
    OnnxRule(DOMAIN, "Attention", attention_rule, makes=("Attention",)),
    OnnxRule(DOMAIN, "MultiHeadAttention", multi_head_attention_rule, makes=("MultiHeadAttention",)),
]
"""The ONNX ops this module translates."""


# -- conformance-kit recipes -----------------------------------------------------------------------------


def _attention_case(b: Any, op_type: str) -> Any:
    heads, size, batch, sequence = b.integer(1, 3), b.pick([2, 4]), b.integer(1, 2), b.integer(1, 4)
    hidden = heads * size
    data = b.input(b.values([batch, sequence, hidden], np.float32), "input")
    weights = b.operand(b.values([hidden, 3 * hidden], np.float32, -0.5, 0.5), "weights")
    bias = b.operand(b.values([3 * hidden], np.float32), "bias")
    mask = b.input(b.values([batch], np.int32, 1, sequence), "mask_index")
    attrs = {"num_heads": heads, "unidirectional": b.flag()}
    inputs = [n.output(0) for n in (data, weights, bias, mask)]
    return b.case(op_type, [Node(ATTENTION, inputs, attrs, "op").output(0)], "accumulate", hidden, **attrs)


def _mha_case(b: Any, op_type: str) -> Any:
    heads, size, batch, sequence, keys = (
        b.integer(1, 3),
        b.pick([2, 4]),
        b.integer(1, 2),
        b.integer(1, 3),
        b.integer(1, 4),
    )
    hidden = heads * size
    query = b.input(b.values([batch, sequence, hidden], np.float32), "query")
    key, value = (b.input(b.values([batch, keys, hidden], np.float32), n) for n in ("key", "value"))
    attrs = {"num_heads": heads}
    inputs = [n.output(0) for n in (query, key, value)]
    return b.case(op_type, [Node(MULTI_HEAD_ATTENTION, inputs, attrs, "op").output(0)], "accumulate", hidden, **attrs)


RECIPES = {"Attention": _attention_case, "MultiHeadAttention": _mha_case}
"""Conformance-kit case recipes by op type."""
