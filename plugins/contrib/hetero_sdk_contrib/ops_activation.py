"""``com.microsoft`` activations: ``BiasGelu`` (Gelu of input plus bias) and ``QuickGelu``
(``x * sigmoid(alpha * x)``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hetero_sdk import Node, Type
from hetero_sdk.extensions import REFERENCE, OnnxRule
from hetero_sdk.plugin import FLOAT, REAL_TYPES, Attr, Input, OpDef, OutputSpec, erfc_values, namespace, widened

from hetero_sdk_contrib.constants import DOMAIN, VERSION

__all__ = ["BIAS_GELU", "KERNELS", "ONNX_RULES", "OPS", "QUICK_GELU", "RECIPES"]

_FLOATS: frozenset[Type] = REAL_TYPES


def _bias_gelu_infer(node: Node) -> list[OutputSpec]:
    data, bias = node.input_value(0), node.input_value(1)
    if bias.element_type != data.element_type:
        raise node.error(f"bias has element type {bias.element_type.value}; it must match the input's "
                         f"({data.element_type.value})")  # fmt: skip
    shape, bias_shape = data.partial_shape, bias.partial_shape
    if bias_shape.rank_is_static and bias_shape.rank != 1:
        raise node.error(f"bias must be 1-D, got {bias_shape}")
    if shape.rank_is_static and shape.rank == 0:
        raise node.error("input must have rank >= 1")
    if shape.rank_is_static and bias_shape.rank_is_static:
        last, width = shape[shape.rank - 1], bias_shape[0]
        if isinstance(last, int) and isinstance(width, int) and last >= 0 and width >= 0 and last != width:
            raise node.error(f"bias has {width} values; the input's last dimension is {last}")
    return [(data.element_type, shape)]


def _quick_gelu_infer(node: Node) -> list[OutputSpec]:
    data = node.input_value(0)
    return [(data.element_type, data.partial_shape)]


def _quick_gelu(node: Node, x: Any) -> Any:
    x = widened(x)
    return x / (1 + namespace(x).exp(-node.attrs["alpha"] * x))


BIAS_GELU = OpDef(
    "BiasGelu",
    "contrib",
    _bias_gelu_infer,
    (Input("data", _FLOATS), Input("bias", _FLOATS)),
    version=VERSION,
    doc="Gelu (the exact, erf form) of `data + bias`, the bias added along the last axis (com.microsoft).",
)
QUICK_GELU = OpDef(
    "QuickGelu",
    "activation",  # an activation's cases are derived from its definition by the conformance kit
    _quick_gelu_infer,
    (Input("data", _FLOATS),),
    (Attr("alpha", FLOAT, 1.702, doc="the sigmoid's slope"),),
    version=VERSION,
    evaluate=_quick_gelu,
    doc="`x * sigmoid(alpha * x)`, a fast Gelu approximation (com.microsoft).",
)
OPS = [BIAS_GELU, QUICK_GELU]


def _bias_gelu_reference(node: Node, data: np.ndarray, bias: np.ndarray) -> np.ndarray:
    x = data.astype(np.float64) + bias.astype(np.float64)
    return 0.5 * x * erfc_values(-x / math.sqrt(2))


KERNELS = {
    REFERENCE: {"BiasGelu": _bias_gelu_reference},
    "XLA": {"BiasGelu": "hetero_sdk_contrib.xla_activation:bias_gelu"},
}


def _bias_gelu_rule(ctx: Any) -> list[Any]:
    return [Node(BIAS_GELU, [ctx.input(0), ctx.input(1)]).output(0)]


def _quick_gelu_rule(ctx: Any) -> list[Any]:
    return [Node(QUICK_GELU, [ctx.input(0)], {"alpha": float(ctx.attr("alpha", 1.702))}).output(0)]


ONNX_RULES = [
    OnnxRule(DOMAIN, "BiasGelu", _bias_gelu_rule, makes=("BiasGelu",)),
    OnnxRule(DOMAIN, "QuickGelu", _quick_gelu_rule, makes=("QuickGelu",)),
]


def _bias_gelu_case(b: Any, op_type: str) -> Any:
    """A conformance-kit case: ``data`` of rank 1 to 3 and a bias as long as its last axis (the kit's
    builder draws the values and makes each operand a Parameter or a Constant)."""
    dtype = b.pick([np.float32, np.float16])
    shape = b.shape(1, 3, 1, 4)
    data = b.input(b.values(shape, dtype, -4, 4), "data")
    bias = b.operand(b.values(shape[-1:], dtype, -1, 1), "bias")
    return b.case(op_type, Node(BIAS_GELU, [data.output(0), bias.output(0)], {}, "op"), "transcendental")


RECIPES = {"BiasGelu": _bias_gelu_case}
