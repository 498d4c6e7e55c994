"""com.microsoft RotaryEmbedding: rotary position embedding of the heads of a query or key, from cached
cosines and sines, the halves rotated (or, ``interleaved``, the even and odd elements), as
onnxruntime-genai's model builder and ONNX Runtime's transformer optimizer write it.

The kernel is array-API code (numpy on TEMPLATE, traced by JAX on XLA); :func:`rotated` is shared with
GroupQueryAttention's ``do_rotary``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hetero_sdk import Node, Type
from hetero_sdk.extensions import OnnxRule
from hetero_sdk.plugin import (
    BOOL,
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

__all__ = ["ONNX_RULES", "OPS", "ROTARY_EMBEDDING", "positions_from", "rotated", "RECIPES"]


def rotated(x: Any, cos: Any, sin: Any, interleaved: bool) -> Any:
    """``x``'s first ``2 * cos.shape[-1]`` elements of the last axis rotated by the angles whose cosines
    and sines are ``cos`` and ``sin`` (broadcast against ``x[..., :half]``), the rest unchanged:
    ``(a, b) -> (a cos - b sin, b cos + a sin)`` over the halves, or over (even, odd) pairs."""
    xp = namespace(x)
    half = cos.shape[-1]
    rotary, rest = x[..., : 2 * half], x[..., 2 * half :]
    if interleaved:
        a, b = rotary[..., 0::2], rotary[..., 1::2]
        pairs = xp.stack([a * cos - b * sin, b * cos + a * sin], axis=-1)
        turned = xp.reshape(pairs, (*rotary.shape[:-1], 2 * half))
    else:
        a, b = rotary[..., :half], rotary[..., half:]
        turned = xp.concat([a * cos - b * sin, b * cos + a * sin], axis=-1)
    return xp.concat([turned, rest], axis=-1) if rest.shape[-1] else turned


def positions_from(position_ids: Any, sequence: int) -> Any:
    """``(batch or 1, sequence)`` positions: ``position_ids`` itself, or from its one value (an offset)
    on, one per token."""
    xp = namespace(position_ids)
    if position_ids.ndim == 2:
        return position_ids
    offset = xp.reshape(xp.astype(position_ids, xp.int32), (1, 1))
    return offset + xp.reshape(xp.arange(sequence, dtype=xp.int32), (1, sequence))


def _infer(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 2, 3)
    data = node.input_value(0).partial_shape
    if data.rank_is_static and data.rank not in (3, 4):
        raise node.error(f"input has shape {data}; expected (batch, sequence, hidden) or (batch, heads, sequence, "
                         "head_size)")  # fmt: skip
    cos = expect_rank(node, 2, 2, what="cos_cache")
    sin = expect_rank(node, 3, 2, what="sin_cache")
    half = merge_dims(node, cos[1], sin[1], f"cos_cache {cos} and sin_cache {sin} must have the same shape")
    heads, rotary_dim = node.attrs["num_heads"], node.attrs["rotary_embedding_dim"]
    if rotary_dim and half >= 0 and rotary_dim != 2 * half:
        raise node.error(f"rotary_embedding_dim={rotary_dim} but the caches hold {half} angles (half of it)")
    if data.rank_is_static and data.rank == 3 and heads == 0 and rotary_dim:
        raise node.error("num_heads is required with rotary_embedding_dim on a 3-D input")
    if data.rank_is_static and data.rank == 3 and heads and data[2] >= 0 and data[2] % heads:
        raise node.error(f"hidden size {data[2]} is not a multiple of num_heads={heads}")
    positions = node.input_value(1).partial_shape
    if positions.rank_is_static and positions.rank not in (0, 1, 2):
        raise node.error(f"position_ids has shape {positions}; expected (batch, sequence) or one offset")
    return [(element_type, data)]


def _rotary(node: Node, x: Any, position_ids: Any, cos_cache: Any, sin_cache: Any) -> Any:
    xp = namespace(x)
    data = widened(x)
    if x.ndim == 4:  # (batch, heads, sequence, head_size) -> (batch, sequence, heads, head_size)
        data = xp.permute_dims(data, (0, 2, 1, 3))
    else:
        heads = node.attrs["num_heads"] or x.shape[2] // (2 * cos_cache.shape[1])
        data = xp.reshape(data, (x.shape[0], x.shape[1], heads, x.shape[2] // heads))
    positions = positions_from(position_ids, data.shape[1])
    cos = widened(cos_cache)[positions][:, :, None, :]
    sin = widened(sin_cache)[positions][:, :, None, :]
    out = rotated(data, cos, sin, node.attrs["interleaved"])
    if x.ndim == 4:
        return xp.permute_dims(out, (0, 2, 1, 3))
    return xp.reshape(out, x.shape)


ROTARY_EMBEDDING = OpDef(
    "RotaryEmbedding",
    "contrib",
    _infer,
    inputs=(
        Input("input", REAL_TYPES, doc="(batch, sequence, hidden) or (batch, heads, sequence, head_size)"),
        Input("position_ids", frozenset({Type.i64, Type.i32}), doc="(batch, sequence), or one offset"),
        Input("cos_cache", REAL_TYPES, doc="(positions, rotary_dim / 2)"),
        Input("sin_cache", REAL_TYPES, doc="(positions, rotary_dim / 2)"),
    ),
    attrs=(
        Attr("interleaved", BOOL, False, doc="rotate (even, odd) pairs instead of the two halves"),
        Attr("num_heads", INT, 0, minimum=0, doc="heads of a 3-D input (0: head_size = rotary dim)"),
        Attr("rotary_embedding_dim", INT, 0, minimum=0, doc="elements of each head rotated (0: the caches')"),
    ),
    version=VERSION,
    evaluate=_rotary,
    doc="Rotary position embedding: each head's first rotary_dim elements rotated by the angles of its "
    "position (cos_cache, sin_cache), as halves or interleaved pairs; the rest unchanged.",
)

OPS = [ROTARY_EMBEDDING]
"""The op definitions this module contributes."""


def rotary_rule(ctx: NodeContext) -> Outputs:
    """com.microsoft RotaryEmbedding: input, position_ids, cos_cache, sin_cache. ``scale`` (other than
    1) and packed batching are refused."""
    if ctx.attr("scale", 1.0) != 1.0:
        raise ctx.unsupported(f"scale={ctx.attr('scale')} (only 1.0)")
    if ctx.attr("is_packed_batching", 0):
        raise ctx.unsupported("is_packed_batching=1")
    attrs = {
        "interleaved": bool(ctx.attr("interleaved", 0)),
        "num_heads": ctx.attr("num_heads", 0),
        "rotary_embedding_dim": ctx.attr("rotary_embedding_dim", 0),
    }
    return [Node(ROTARY_EMBEDDING, [ctx.input(i) for i in range(4)], attrs).output(0)]


ONNX_RULES = [OnnxRule(DOMAIN, "RotaryEmbedding", rotary_rule, makes=("RotaryEmbedding",))]
"""The ONNX ops this module translates."""


# -- conformance-kit recipes -----------------------------------------------------------------------------


def _rotary_case(b: Any, op_type: str) -> Any:
    dtype = b.pick([np.float32, np.float16])
    batch, sequence, heads, half = b.integer(1, 2), b.integer(1, 4), b.integer(1, 3), b.integer(1, 4)
    positions = sequence + b.integer(0, 3)
    x = b.input(b.values([batch, sequence, heads * 2 * half], dtype), "input")
    ids = b.input(b.values([batch, sequence], np.int64, 0, positions - 1), "position_ids")
    angles = b.values([positions, half], np.float64, 0, 6)
    cos = b.operand(np.cos(angles).astype(dtype), "cos_cache")
    sin = b.operand(np.sin(angles).astype(dtype), "sin_cache")
    attrs = {"interleaved": b.flag()}
    inputs = [x.output(0), ids.output(0), cos.output(0), sin.output(0)]
    return b.case(op_type, Node(ROTARY_EMBEDDING, inputs, attrs, "op"), "accumulate", 2, **attrs)


RECIPES = {"RotaryEmbedding": _rotary_case}
"""Conformance-kit case recipes by op type."""
