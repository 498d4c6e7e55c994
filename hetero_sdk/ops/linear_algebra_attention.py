"""ScaledDotProductAttention (OpenVINO opset13, as optimum-intel and OpenVINO's ONNX frontend write
attention), of the linear-algebra family; one array-API kernel serves every device."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hetero_sdk.array_api import namespace
from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import BOOL, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import REAL_TYPES, broadcast, expect_same_types
from hetero_sdk.shape import PartialShape

__all__ = ["SCALED_DOT_PRODUCT_ATTENTION", "scaled_dot_product_attention"]


def scaled_dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    attention_mask: Any = None,
    scale: Any = None,
    causal: bool = False,
    name: str | None = None,
) -> Node:
    """``softmax(query @ key^T * scale + mask) @ value`` (``ScaledDotProductAttention``, opset13).

    :param attention_mask: added to the scores, or a boolean tensor (False masks out); ignored when
        ``causal``; a zero mask is added when only ``scale`` is given (the inputs are positional).
    :param scale: a scalar; ``1 / sqrt(query.shape[-1])`` by default.
    :param causal: mask out keys after each query's position (the lower triangle is kept).
    """
    inputs = [as_output(query), as_output(key), as_output(value)]
    if attention_mask is not None:
        inputs.append(as_output(attention_mask))
    if scale is not None:
        if attention_mask is None:
            attention_mask = 0.0
            inputs.append(as_output(np.zeros((), dtype=inputs[0].element_type.numpy)))
        inputs.append(as_output(scale))
    return Node(SCALED_DOT_PRODUCT_ATTENTION, inputs, {"causal": causal}, name)


# -- FakeQuantize -----------------------------------------------------------------------------------------


def _infer_attention(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1, 2)
    query, key, value = (node.input_value(i).partial_shape for i in range(3))
    for index, shape in enumerate((query, key, value)):
        if shape.rank < 3:
            raise node.error(f"input {index} has rank {shape.rank}; query, key and value need rank 3 or more")
    if node.get_input_size() > 3 and node.input_value(3).element_type not in (element_type, Type.boolean):
        raise node.error(
            f"attention_mask has element type {node.input_value(3).element_type.value}; "
            f"expected {element_type.value} or boolean"
        )
    if node.get_input_size() > 4 and node.input_value(4).element_type != element_type:
        raise node.error(
            f"scale has element type {node.input_value(4).element_type.value}; expected {element_type.value}"
        )
    batch = broadcast(node, broadcast(node, query[:-2], key[:-2]), value[:-2])
    return [(element_type, PartialShape([*batch, query[-2], value[-1]]))]


def _attention(node: Node, query: Any, key: Any, value: Any, mask: Any = None, scale: Any = None) -> Any:
    xp = namespace(query)
    factor = xp.reshape(scale, ()) if scale is not None else 1.0 / math.sqrt(query.shape[-1])
    scores = xp.matmul(query, xp.matrix_transpose(key)) * factor
    length, sources = scores.shape[-2], scores.shape[-1]
    if node.attrs["causal"]:
        rows = xp.arange(length)[:, None]
        cols = xp.arange(sources)[None, :]
        scores = xp.where(cols <= rows, scores, xp.asarray(-xp.inf, dtype=scores.dtype))
    elif mask is not None:
        if mask.dtype == xp.bool:
            scores = xp.where(mask, scores, xp.asarray(-xp.inf, dtype=scores.dtype))
        else:
            scores = scores + mask
    top = xp.max(scores, axis=-1, keepdims=True)
    top = xp.where(xp.isfinite(top), top, xp.zeros_like(top))
    weights = xp.exp(scores - top)
    total = xp.sum(weights, axis=-1, keepdims=True)
    weights = weights / xp.where(total == 0, xp.ones_like(total), total)
    return xp.astype(xp.matmul(weights, value), query.dtype)


# -- definitions ----------------------------------------------------------------------------------------


SCALED_DOT_PRODUCT_ATTENTION = define(
    OpDef(
        "ScaledDotProductAttention",
        "linear_algebra",
        _infer_attention,
        inputs=(
            Input("query", REAL_TYPES, doc="[..., L, E]"),
            Input("key", REAL_TYPES, doc="[..., S, E]"),
            Input("value", REAL_TYPES, doc="[..., S, Ev]"),
            Input("attention_mask", optional=True, doc="added to the scores [..., L, S], or boolean (False masks)"),
            Input("scale", REAL_TYPES, optional=True, doc="a scalar; 1/sqrt(E) by default"),
        ),
        attrs=(Attr("causal", BOOL, False, doc="keep only keys at or before each query's position"),),
        version="opset13",
        evaluate=_attention,
        doc="softmax(Q K^T * scale + mask) V, as OpenVINO's ScaledDotProductAttention.",
    )
)
