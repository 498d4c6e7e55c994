"""com.microsoft's fused normalizations, as ONNX Runtime's transformer optimizer and onnxruntime-genai's
model builder write them: SkipLayerNormalization, SkipSimplifiedLayerNormalization,
SimplifiedLayerNormalization (which ONNX Runtime registers in the default domain too) and
EmbedLayerNormalization (BERT's embeddings: word + position + segment, then LayerNorm).

Each op is one array-API kernel (numpy on TEMPLATE, traced by JAX on XLA), computed in f32 for 16-bit
floats as ONNX Runtime does, normalizing over the last axis (from ``axis`` on for
SimplifiedLayerNormalization).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hetero_sdk import Node, Output, PartialShape, Type, opset
from hetero_sdk.extensions import OnnxRule
from hetero_sdk.plugin import (
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

from hetero_sdk_contrib.checks import Outputs, broadcast, merge_dims, normalize_axis
from hetero_sdk_contrib.constants import DOMAIN, VERSION

__all__ = [
    "EMBED_LAYER_NORMALIZATION", "ONNX_RULES", "OPS", "SIMPLIFIED_LAYER_NORMALIZATION", "SKIP_LAYER_NORMALIZATION",
    "SKIP_SIMPLIFIED_LAYER_NORMALIZATION", "RECIPES"]  # fmt: skip

_FAMILY = "contrib"


# -- shape inference -------------------------------------------------------------------------------------


def _per_row(shape: PartialShape) -> PartialShape:
    """The shape of a per-row statistic (mean, inverse standard deviation): the last axis kept as 1."""
    return PartialShape([*shape.dims[:-1], 1]) if shape.rank_is_static else shape


def _infer_skip(node: Node, parameters: tuple[str, ...]) -> list[OutputSpec]:
    """The skip ops' outputs: ``input`` and ``skip`` broadcast (skip may lack the batch axis), the
    per-row statistics, and their sum; the 1-D parameters hold one value per hidden unit."""
    element_type = expect_same_types(node, *range(node.get_input_size()))
    data = node.input_value(0).partial_shape
    if data.rank_is_static and data.rank not in (2, 3):
        raise node.error(f"input has shape {data}; expected (batch, sequence, hidden) or (tokens, hidden)")
    shape = broadcast(node, data, node.input_value(1).partial_shape)
    if shape.rank_is_static and data.rank_is_static and shape.rank != data.rank:
        raise node.error(f"skip {node.input_value(1).partial_shape} does not broadcast to input {data}")
    hidden = shape[-1] if shape.rank_is_static else -1
    for index, label in enumerate(parameters, start=2):
        if index < node.get_input_size():
            dims = expect_rank(node, index, 1, what=label)
            hidden = merge_dims(node, hidden, dims[0], f"{label} {dims} must have one value per hidden unit")
    statistic = _per_row(shape)
    return [(element_type, shape), (statistic_type(element_type), statistic), (statistic_type(element_type), statistic),
            (element_type, shape)]  # fmt: skip


def statistic_type(element_type: Type) -> Type:
    """The element type of the statistics outputs: ONNX Runtime's ``U``, f32 (the input's when f64)."""
    return element_type if element_type == Type.f64 else Type.f32


def _infer_skip_layer_norm(node: Node) -> list[OutputSpec]:
    _check_epsilon(node)
    return _infer_skip(node, ("gamma", "beta", "bias"))


def _infer_skip_simplified(node: Node) -> list[OutputSpec]:
    _check_epsilon(node)
    return _infer_skip(node, ("gamma", "bias"))


def _infer_simplified(node: Node) -> list[OutputSpec]:
    _check_epsilon(node)
    element_type = expect_same_types(node, 0, 1)
    data = node.input_value(0).partial_shape
    if not data.rank_is_static:
        return [(element_type, data), (statistic_type(element_type), PartialShape.dynamic())]
    axis = normalize_axis(node, node.attrs["axis"], data.rank)
    scale = node.input_value(1).partial_shape
    if scale.rank_is_static and scale.rank > data.rank - axis:
        raise node.error(f"scale {scale} has more axes than the normalized axes {axis}.. of input {data}")
    statistic = PartialShape([*data.dims[:axis], *[1] * (data.rank - axis)])
    return [(element_type, data), (statistic_type(element_type), statistic)]


def _infer_embed(node: Node) -> list[OutputSpec]:
    _check_epsilon(node)
    element_type = expect_same_types(node, 2, 3, 4, 5, 6)
    ids = expect_rank(node, 0, 2, what="input_ids")
    segments = expect_rank(node, 1, 2, what="segment_ids")
    hidden = -1
    for index, label in ((2, "word_embedding"), (3, "position_embedding"), (4, "segment_embedding")):
        hidden = merge_dims(node, hidden, expect_rank(node, index, 2, what=label)[1], f"{label} must have H columns")
    for index, label in ((5, "gamma"), (6, "beta")):
        hidden = merge_dims(node, hidden, expect_rank(node, index, 1, what=label)[0], f"{label} must have H values")
    batch, sequence = merge_dims(node, ids[0], segments[0], "segment_ids must match input_ids' shape"), ids[1]
    sequence = merge_dims(node, sequence, segments[1], "segment_ids must match input_ids' shape")
    if node.get_input_size() > 7:
        mask = expect_rank(node, 7, 2, what="mask")
        batch = merge_dims(node, batch, mask[0], f"mask {mask} must match input_ids {ids}")
    if node.get_input_size() > 8:
        positions = expect_rank(node, 8, 2, what="position_ids")
        sequence = merge_dims(node, sequence, positions[1], f"position_ids {positions} must have one id per token")
    embedded = PartialShape([batch, sequence, hidden])
    return [(element_type, embedded), (Type.i32, PartialShape([batch])), (element_type, embedded)]


def _check_epsilon(node: Node) -> None:
    if node.attrs["epsilon"] < 0:
        raise node.error(f"attribute epsilon={node.attrs['epsilon']} must be non-negative")


# -- kernels ---------------------------------------------------------------------------------------------


def layer_normalized(x: Any, axes: tuple[int, ...], epsilon: float) -> tuple[Any, Any, Any]:
    """``(x - mean) / sqrt(variance + epsilon)`` over ``axes``, with the mean and ``1 / sqrt(variance +
    epsilon)`` (kept dims); ``x`` already widened."""
    xp = namespace(x)
    mean = xp.mean(x, axis=axes, keepdims=True)
    centered = x - mean
    inv_std = 1 / xp.sqrt(xp.mean(centered * centered, axis=axes, keepdims=True) + epsilon)
    return centered * inv_std, mean, inv_std


def rms_normalized(x: Any, axes: tuple[int, ...], epsilon: float) -> tuple[Any, Any]:
    """``x / sqrt(mean(x^2) + epsilon)`` over ``axes``, with ``1 / sqrt(mean(x^2) + epsilon)`` (kept
    dims); ``x`` already widened."""
    xp = namespace(x)
    inv_std = 1 / xp.sqrt(xp.mean(x * x, axis=axes, keepdims=True) + epsilon)
    return x * inv_std, inv_std


def _skip_sum(x: Any, skip: Any, bias: Any | None) -> Any:
    total = widened(x) + widened(skip)
    return total if bias is None else total + widened(bias)


def _skip_layer_norm(
    node: Node, x: Any, skip: Any, gamma: Any, beta: Any | None = None, bias: Any | None = None
) -> tuple[Any, ...]:
    total = _skip_sum(x, skip, bias)
    normalized, mean, inv_std = layer_normalized(total, (total.ndim - 1,), node.attrs["epsilon"])
    y = normalized * widened(gamma)
    return (y if beta is None else y + widened(beta)), mean, inv_std, total


def _skip_simplified(node: Node, x: Any, skip: Any, gamma: Any, bias: Any | None = None) -> tuple[Any, ...]:
    total = _skip_sum(x, skip, bias)
    normalized, inv_std = rms_normalized(total, (total.ndim - 1,), node.attrs["epsilon"])
    # ONNX Runtime's mean output of an RMS normalization is zeros (the op computes no mean)
    return normalized * widened(gamma), namespace(x).zeros_like(inv_std), inv_std, total


def _simplified(node: Node, x: Any, scale: Any) -> tuple[Any, Any]:
    axis = node.attrs["axis"] % x.ndim
    normalized, inv_std = rms_normalized(widened(x), tuple(range(axis, x.ndim)), node.attrs["epsilon"])
    return normalized * widened(scale), inv_std


def _embed(
    node: Node,
    ids: Any,
    segments: Any,
    words: Any,
    positions: Any,
    segment_table: Any,
    gamma: Any,
    beta: Any,
    mask: Any | None = None,
    position_ids: Any | None = None,
) -> tuple[Any, Any, Any]:
    xp = namespace(words)
    if position_ids is None:
        position_ids = xp.arange(ids.shape[1])[None, :]
    total = widened(words)[ids] + widened(positions)[position_ids] + widened(segment_table)[segments]
    normalized = layer_normalized(total, (2,), node.attrs["epsilon"])[0]
    # ONNX Runtime's mask index counts each sequence's mask values equal to 1 (zeros without a mask)
    count = (
        xp.zeros(ids.shape[:1], dtype=xp.int32)
        if mask is None
        else xp.sum(xp.astype(mask == 1, xp.int32), axis=1, dtype=xp.int32)
    )
    return normalized * widened(gamma) + widened(beta), count, total


# -- definitions -----------------------------------------------------------------------------------------


def _parameter(name: str, doc: str, optional: bool = False) -> Input:
    return Input(name, REAL_TYPES, optional=optional, doc=doc)


_EPSILON = Attr("epsilon", FLOAT, 1e-12, doc="added to the variance (non-negative)")
_SKIP_INPUTS = (
    _parameter("input", "(batch, sequence, hidden) or (tokens, hidden)"),
    _parameter("skip", "the residual: input's shape, or broadcast to it"),
    _parameter("gamma", "(hidden): the scale"),
)
_SKIP_OUTPUTS_DOC = "Outputs: the normalized sum, its mean and 1/sqrt(variance + epsilon) per row, and the sum."

SKIP_LAYER_NORMALIZATION = OpDef(
    "SkipLayerNormalization",
    _FAMILY,
    _infer_skip_layer_norm,
    inputs=(*_SKIP_INPUTS, _parameter("beta", "(hidden): the shift", True), _parameter("bias", "(hidden)", True)),
    attrs=(_EPSILON,),
    version=VERSION,
    evaluate=_skip_layer_norm,
    doc="LayerNorm(input + skip + bias) over the last axis, times gamma plus beta. " + _SKIP_OUTPUTS_DOC,
)
SKIP_SIMPLIFIED_LAYER_NORMALIZATION = OpDef(
    "SkipSimplifiedLayerNormalization",
    _FAMILY,
    _infer_skip_simplified,
    inputs=(*_SKIP_INPUTS, _parameter("bias", "(hidden)", True)),
    attrs=(_EPSILON,),
    version=VERSION,
    evaluate=_skip_simplified,
    doc="RMSNorm(input + skip + bias) over the last axis, times gamma (the mean output is zeros, as ONNX "
    "Runtime gives). " + _SKIP_OUTPUTS_DOC,
)
SIMPLIFIED_LAYER_NORMALIZATION = OpDef(
    "SimplifiedLayerNormalization",
    _FAMILY,
    _infer_simplified,
    inputs=(_parameter("data", "the input"), _parameter("scale", "broadcast over the normalized axes")),
    attrs=(
        Attr("axis", INT, -1, doc="the first normalized axis (negative counts from the end)"),
        Attr("epsilon", FLOAT, 1e-5, doc="added to the mean of squares (non-negative)"),
    ),
    version=VERSION,
    evaluate=_simplified,
    doc="RMS normalization: data / sqrt(mean(data^2) + epsilon) over the axes from axis on, times scale; "
    "the second output is 1/sqrt(mean(data^2) + epsilon).",
)

_IDS = frozenset({Type.i32})
EMBED_LAYER_NORMALIZATION = OpDef(
    "EmbedLayerNormalization",
    _FAMILY,
    _infer_embed,
    inputs=(
        Input("input_ids", _IDS, doc="(batch, sequence): word ids"),
        Input("segment_ids", _IDS, doc="(batch, sequence): segment ids"),
        _parameter("word_embedding", "(vocabulary, hidden)"),
        _parameter("position_embedding", "(positions, hidden)"),
        _parameter("segment_embedding", "(segments, hidden)"),
        _parameter("gamma", "(hidden)"),
        _parameter("beta", "(hidden)"),
        Input("mask", _IDS, optional=True, doc="(batch, sequence): 1 for real tokens"),
        Input("position_ids", _IDS, optional=True, doc="(batch or 1, sequence); 0, 1, 2... by default"),
    ),
    attrs=(_EPSILON,),
    version=VERSION,
    evaluate=_embed,
    doc="LayerNorm(word_embedding[input_ids] + position_embedding[position_ids] + segment_embedding[segment_ids]) "
    "times gamma plus beta; with the number of ones of each sequence's mask, and the embeddings' sum.",
)

OPS = [
    SKIP_LAYER_NORMALIZATION,
    SKIP_SIMPLIFIED_LAYER_NORMALIZATION,
    SIMPLIFIED_LAYER_NORMALIZATION,
    EMBED_LAYER_NORMALIZATION,
]
"""The op definitions this module contributes."""


# -- ONNX rules ------------------------------------------------------------------------------------------


def _outputs(ctx: NodeContext, node: Node, order: tuple[int, ...]) -> Outputs:
    """The node's outputs in ONNX's order (``order``: the node's output index of each ONNX output), None
    where the ONNX node leaves one out."""
    return [node.output(i) if ctx.wants_output(k) else None for k, i in enumerate(order)]


def _zeros_like(ctx: NodeContext, value: Output) -> Output:
    """Zeros of ``value``'s type and shape, standing for a left-out input that a later input follows."""
    zero = ctx.const(np.zeros((), value.element_type.numpy))
    return opset.broadcast(zero, opset.shape_of(value)).output(0)


def skip_layer_norm_rule(ctx: NodeContext) -> Outputs:
    """com.microsoft SkipLayerNormalization: input, skip, gamma, [beta], [bias]."""
    inputs = [ctx.input(0), ctx.input(1), ctx.input(2)]
    beta, bias = ctx.optional_input(3), ctx.optional_input(4)
    if bias is not None:
        inputs += [beta if beta is not None else _zeros_like(ctx, inputs[2]), bias]
    elif beta is not None:
        inputs.append(beta)
    node = Node(SKIP_LAYER_NORMALIZATION, inputs, {"epsilon": ctx.attr("epsilon", 1e-12)})
    return _outputs(ctx, node, (0, 1, 2, 3))


def skip_simplified_rule(ctx: NodeContext) -> Outputs:
    """com.microsoft SkipSimplifiedLayerNormalization: input, skip, gamma, [bias]."""
    inputs = [ctx.input(i) for i in range(3)]
    if (bias := ctx.optional_input(3)) is not None:
        inputs.append(bias)
    node = Node(SKIP_SIMPLIFIED_LAYER_NORMALIZATION, inputs, {"epsilon": ctx.attr("epsilon", 1e-12)})
    return _outputs(ctx, node, (0, 1, 2, 3))


def simplified_rule(ctx: NodeContext) -> Outputs:
    """SimplifiedLayerNormalization (default domain and com.microsoft): X, scale -> Y, [inv_std_var].
    ``stash_type`` 1 (f32) is how the kernel computes anyway; other values are refused."""
    if ctx.attr("stash_type", 1) != 1:
        raise ctx.unsupported(f"stash_type={ctx.attr('stash_type')} (only 1, computing in float32)")
    x = ctx.input(0)
    attrs = {"axis": ctx.axis("axis", -1, x.partial_shape.rank), "epsilon": ctx.attr("epsilon", 1e-5)}
    node = Node(SIMPLIFIED_LAYER_NORMALIZATION, [x, ctx.input(1)], attrs)
    return _outputs(ctx, node, (0, 1))


def embed_layer_norm_rule(ctx: NodeContext) -> Outputs:
    """com.microsoft EmbedLayerNormalization: input_ids, [segment_ids], word_embedding, position_embedding,
    [segment_embedding], gamma, beta, [mask], [position_ids]. Without segments, segment 0 of a zero
    table; without a mask (and position ids given), a mask of zeros: the mask only counts into mask_index."""
    ids = ctx.input(0)
    segments, segment_table = ctx.optional_input(1), ctx.optional_input(4)
    if (segments is None) != (segment_table is None):
        raise ctx.error("segment_ids and segment_embedding must be given together")
    words = ctx.input(2)
    if segments is None or segment_table is None:
        hidden = words.partial_shape[1] if words.partial_shape.rank == 2 else -1
        if hidden < 0:
            raise ctx.unsupported("no segment embedding with a word embedding of unknown width")
        segments = _zeros_like(ctx, ids)
        segment_table = ctx.const(np.zeros((1, hidden), words.element_type.numpy))
    inputs = [ids, segments, words, ctx.input(3), segment_table, ctx.input(5), ctx.input(6)]
    mask, position_ids = ctx.optional_input(7), ctx.optional_input(8)
    if position_ids is not None:
        inputs += [mask if mask is not None else _zeros_like(ctx, ids), position_ids]
    elif mask is not None:
        inputs.append(mask)
    node = Node(EMBED_LAYER_NORMALIZATION, inputs, {"epsilon": ctx.attr("epsilon", 1e-12)})
    return _outputs(ctx, node, (0, 1, 2))


_SIMPLIFIED = ("SimplifiedLayerNormalization",)
ONNX_RULES = [
    OnnxRule(
        DOMAIN, "SkipLayerNormalization", skip_layer_norm_rule, makes=("SkipLayerNormalization", "Broadcast", "ShapeOf")
    ),
    OnnxRule(
        DOMAIN, "SkipSimplifiedLayerNormalization", skip_simplified_rule, makes=("SkipSimplifiedLayerNormalization",)
    ),
    OnnxRule(DOMAIN, "SimplifiedLayerNormalization", simplified_rule, makes=_SIMPLIFIED),
    OnnxRule("", "SimplifiedLayerNormalization", simplified_rule, makes=_SIMPLIFIED),
    OnnxRule(
        DOMAIN,
        "EmbedLayerNormalization",
        embed_layer_norm_rule,
        makes=("EmbedLayerNormalization", "Broadcast", "ShapeOf"),
    ),
]
"""The ONNX ops this module translates."""


# -- conformance-kit recipes -----------------------------------------------------------------------------


def _skip_case(b: Any, op_type: str) -> Any:
    dtype = b.pick([np.float32, np.float16])
    hidden = b.integer(1, 8)
    shape = [b.integer(1, 3), b.integer(1, 4), hidden] if b.flag() else [b.integer(1, 4), hidden]
    inputs = [b.input(b.values(shape, dtype), "input").output(0), b.input(b.values(shape, dtype), "skip").output(0)]
    names = ("gamma", "beta", "bias") if op_type == "SkipLayerNormalization" else ("gamma", "bias")
    for name in names[: b.integer(1, len(names))]:
        inputs.append(b.operand(b.values([hidden], dtype), name).output(0))
    op = SKIP_LAYER_NORMALIZATION if op_type == "SkipLayerNormalization" else SKIP_SIMPLIFIED_LAYER_NORMALIZATION
    epsilon = b.pick([1e-5, 1e-12])
    return b.case(op_type, Node(op, inputs, {"epsilon": epsilon}, "op").outputs(), "accumulate", hidden)


def _simplified_case(b: Any, op_type: str) -> Any:
    dtype = b.pick([np.float32, np.float16])
    shape = b.shape(1, 3)
    axis = b.integer(-len(shape), len(shape) - 1)
    x = b.input(b.values(shape, dtype), "data")
    scale = b.operand(b.values(shape[axis % len(shape) :], dtype), "scale")
    node = Node(SIMPLIFIED_LAYER_NORMALIZATION, [x.output(0), scale.output(0)], {"axis": axis, "epsilon": 1e-5}, "op")
    terms = int(np.prod(shape[axis % len(shape) :]))
    return b.case(op_type, node.outputs(), "accumulate", terms, axis=axis)


def _embed_case(b: Any, op_type: str) -> Any:
    batch, sequence, hidden, vocabulary = b.integer(1, 3), b.integer(1, 4), b.integer(1, 6), b.integer(2, 9)
    ids = b.input(b.values([batch, sequence], np.int32, 0, vocabulary - 1), "input_ids")
    segments = b.input(b.values([batch, sequence], np.int32, 0, 1), "segment_ids")
    tables = [b.operand(b.values([rows, hidden], np.float32), name) for rows, name in
              ((vocabulary, "word_embedding"), (sequence, "position_embedding"), (2, "segment_embedding"))]  # fmt: skip
    gamma, beta = (b.operand(b.values([hidden], np.float32), name) for name in ("gamma", "beta"))
    inputs = [ids, segments, *tables, gamma, beta]
    if b.flag():
        inputs.append(b.input(b.values([batch, sequence], np.int32, 0, 1), "mask"))
    node = Node(EMBED_LAYER_NORMALIZATION, [n.output(0) for n in inputs], {"epsilon": 1e-12}, "op")
    return b.case(op_type, node.outputs(), "accumulate", hidden)


RECIPES = {
    "SkipLayerNormalization": _skip_case,
    "SkipSimplifiedLayerNormalization": _skip_case,
    "SimplifiedLayerNormalization": _simplified_case,
    "EmbedLayerNormalization": _embed_case,
}
"""Conformance-kit case recipes by op type."""
