"""Ops OpenVINO writes into IR files that no ONNX rule needed before: FakeQuantize (opset1, as NNCF
writes quantized models), HardSigmoid (opset1), IsNaN (opset10) and ScaledDotProductAttention
(opset13, as optimum-intel and OpenVINO's ONNX frontend write attention). Each follows OpenVINO's
specification; one array-API kernel serves the reference evaluator, TEMPLATE and XLA."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hetero_sdk.array_api import namespace
from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import BOOL, INT, LOWER_STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import REAL_TYPES, broadcast, expect_same_types
from hetero_sdk.shape import PartialShape

__all__ = [
    "FAKE_QUANTIZE", "HARD_SIGMOID", "IS_NAN", "SCALED_DOT_PRODUCT_ATTENTION", "fake_quantize", "hard_sigmoid",
    "is_nan", "scaled_dot_product_attention",
]  # fmt: skip


def fake_quantize(
    data: Any,
    input_low: Any,
    input_high: Any,
    output_low: Any,
    output_high: Any,
    levels: int,
    auto_broadcast: str = "numpy",
    name: str | None = None,
) -> Node:
    """Quantizes ``data`` to ``levels`` steps between ``input_low`` and ``input_high`` and maps them onto
    ``output_low..output_high`` (``FakeQuantize``, opset1): values at or below ``min(input_low,
    input_high)`` give ``output_low``, values above ``max(...)`` give ``output_high``, others
    ``round((x - il) / (ih - il) * (levels - 1)) / (levels - 1) * (oh - ol) + ol`` (halves to even)."""
    inputs = [as_output(v) for v in (data, input_low, input_high, output_low, output_high)]
    return Node(FAKE_QUANTIZE, inputs, {"levels": levels, "auto_broadcast": auto_broadcast}, name)


def hard_sigmoid(data: Any, alpha: Any, beta: Any, name: str | None = None) -> Node:
    """``max(0, min(1, alpha * x + beta))`` (``HardSigmoid``, opset1); ``alpha`` and ``beta`` are scalars."""
    return Node(HARD_SIGMOID, [as_output(data), as_output(alpha), as_output(beta)], {}, name)


def is_nan(data: Any, name: str | None = None) -> Node:
    """Whether each element is NaN (``IsNaN``, opset10): a boolean tensor of ``data``'s shape."""
    return Node(IS_NAN, [as_output(data)], {}, name)


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


def _infer_fake_quantize(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1, 2, 3, 4)
    if node.attrs["levels"] < 2:
        raise node.error(f"levels is {node.attrs['levels']}; FakeQuantize needs at least 2")
    mode = node.attrs["auto_broadcast"]
    shape = node.input_value(0).partial_shape
    for index in range(1, 5):
        shape = broadcast(node, shape, node.input_value(index).partial_shape, mode)
    return [(element_type, shape)]


def _fake_quantize(node: Node, x: Any, il: Any, ih: Any, ol: Any, oh: Any) -> Any:
    xp = namespace(x)
    steps = float(node.attrs["levels"] - 1)
    span = ih - il
    safe = xp.where(span == 0, xp.ones_like(span), span)
    quantized = xp.round((x - il) / safe * steps) / steps * (oh - ol) + ol
    out = xp.where(x <= xp.minimum(il, ih), ol, xp.where(x > xp.maximum(il, ih), oh, quantized))
    return xp.astype(out, x.dtype)


# -- HardSigmoid, IsNaN ------------------------------------------------------------------------------------


def _infer_hard_sigmoid(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1, 2)
    for index in (1, 2):
        if node.input_value(index).partial_shape.rank > 1 or any(d > 1 for d in node.input_value(index).partial_shape):
            raise node.error(f"input {index} must be a scalar")
    return [(element_type, node.input_value(0).partial_shape)]


def _hard_sigmoid(node: Node, x: Any, alpha: Any, beta: Any) -> Any:
    xp = namespace(x)
    a, b = xp.reshape(alpha, ()), xp.reshape(beta, ())
    return xp.astype(xp.clip(a * x + b, 0.0, 1.0), x.dtype)


def _infer_is_nan(node: Node) -> list[OutputSpec]:
    return [(Type.boolean, node.input_value(0).partial_shape)]


def _is_nan(node: Node, x: Any) -> Any:
    return namespace(x).isnan(x)


# -- ScaledDotProductAttention ----------------------------------------------------------------------------


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

FAKE_QUANTIZE = define(
    OpDef(
        "FakeQuantize",
        "quantization",
        _infer_fake_quantize,
        inputs=(
            Input("data", REAL_TYPES),
            Input("input_low", REAL_TYPES),
            Input("input_high", REAL_TYPES),
            Input("output_low", REAL_TYPES),
            Input("output_high", REAL_TYPES),
        ),
        attrs=(
            Attr("levels", INT, doc="the number of quantization levels (256 for 8 bits)"),
            Attr("auto_broadcast", LOWER_STRING, "numpy", ("numpy", "none"), doc="how the bounds broadcast"),
        ),
        version="opset1",
        evaluate=_fake_quantize,
        doc="Quantizes to `levels` steps and maps back onto the output range (NNCF's quantized models).",
    )
)
HARD_SIGMOID = define(
    OpDef(
        "HardSigmoid",
        "activation",
        _infer_hard_sigmoid,
        inputs=(Input("data", REAL_TYPES), Input("alpha", REAL_TYPES), Input("beta", REAL_TYPES)),
        version="opset1",
        evaluate=_hard_sigmoid,
        doc="max(0, min(1, alpha * x + beta)).",
    )
)
IS_NAN = define(
    OpDef(
        "IsNaN",
        "activation",
        _infer_is_nan,
        inputs=(Input("data", REAL_TYPES),),
        version="opset10",
        evaluate=_is_nan,
        doc="Whether each element is NaN.",
    )
)
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
