"""com.microsoft's fused activations and additions, as ONNX Runtime's transformer optimizer writes them:
Gelu (the exact one, translated to the SDK's own ``Gelu``), FastGelu (the tanh approximation, with an
optional bias) and BiasAdd (``X + bias + skip``).

The kernels are array-API code (numpy on TEMPLATE, traced by JAX on XLA), computed in f32 for 16-bit
floats.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hetero_sdk import Node, opset
from hetero_sdk.extensions import OnnxRule
from hetero_sdk.plugin import REAL_TYPES, Input, OpDef, OutputSpec, expect_rank, expect_same_types, gelu_tanh, widened
from hetero_sdk.plugin import OnnxNodeContext as NodeContext

from hetero_sdk_contrib.checks import Outputs, broadcast, merge_dims
from hetero_sdk_contrib.constants import DOMAIN, VERSION

__all__ = ["BIAS_ADD", "FAST_GELU", "ONNX_RULES", "OPS", "RECIPES"]


def _infer_fast_gelu(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, *range(node.get_input_size()))
    data = node.input_value(0).partial_shape
    if node.get_input_size() > 1:
        bias = expect_rank(node, 1, 1, what="bias")
        last = data[-1] if data.rank_is_static and data.rank else -1
        merge_dims(node, last, bias[0], f"bias {bias} must have one value per element of the last axis of {data}")
    return [(element_type, data)]


def _infer_bias_add(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1, 2)
    data = expect_rank(node, 0, 3, what="X")
    bias = expect_rank(node, 1, 1, what="bias")
    merge_dims(node, data[-1], bias[0], f"bias {bias} must have one value per channel of X {data}")
    skip = expect_rank(node, 2, 3, what="skip")
    return [(element_type, broadcast(node, data, skip))]


def _fast_gelu(node: Node, x: Any, bias: Any | None = None) -> Any:
    x = widened(x)
    return gelu_tanh(x if bias is None else x + widened(bias))


def _bias_add(node: Node, x: Any, bias: Any, skip: Any) -> Any:
    return widened(x) + widened(bias) + widened(skip)


FAST_GELU = OpDef(
    "FastGelu",
    "contrib",
    _infer_fast_gelu,
    inputs=(Input("X", REAL_TYPES, doc="the input"), Input("bias", REAL_TYPES, optional=True, doc="1-D, last axis")),
    version=VERSION,
    evaluate=_fast_gelu,
    doc="Gelu's tanh approximation of X + bias: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).",
)
BIAS_ADD = OpDef(
    "BiasAdd",
    "contrib",
    _infer_bias_add,
    inputs=(
        Input("X", REAL_TYPES, doc="(batch, sequence, channels)"),
        Input("bias", REAL_TYPES, doc="(channels)"),
        Input("skip", REAL_TYPES, doc="(batch, sequence, channels)"),
    ),
    version=VERSION,
    evaluate=_bias_add,
    doc="X + bias + skip, the bias along the channel (last) axis.",
)

OPS = [FAST_GELU, BIAS_ADD]
"""The op definitions this module contributes."""


def gelu_rule(ctx: NodeContext) -> Outputs:
    """com.microsoft Gelu: the exact Gelu, the SDK's own ``Gelu`` (ERF)."""
    return [opset.gelu(ctx.input(0), "ERF").output(0)]


def fast_gelu_rule(ctx: NodeContext) -> Outputs:
    """com.microsoft FastGelu: X, [bias]."""
    bias = ctx.optional_input(1)
    return [Node(FAST_GELU, [ctx.input(0)] + ([] if bias is None else [bias])).output(0)]


def bias_add_rule(ctx: NodeContext) -> Outputs:
    """com.microsoft BiasAdd: X, bias, skip."""
    return [Node(BIAS_ADD, [ctx.input(0), ctx.input(1), ctx.input(2)]).output(0)]


ONNX_RULES = [
    OnnxRule(DOMAIN, "Gelu", gelu_rule, makes=("Gelu",)),
    OnnxRule(DOMAIN, "FastGelu", fast_gelu_rule, makes=("FastGelu",)),
    OnnxRule(DOMAIN, "BiasAdd", bias_add_rule, makes=("BiasAdd",)),
]
"""The ONNX ops this module translates."""


# -- conformance-kit recipes -----------------------------------------------------------------------------


def _fast_gelu_case(b: Any, op_type: str) -> Any:
    dtype = b.pick([np.float32, np.float16])
    shape = b.shape(1, 3)
    inputs = [b.input(b.values(shape, dtype), "x").output(0)]
    if b.flag():
        inputs.append(b.operand(b.values(shape[-1:], dtype), "bias").output(0))
    return b.case(op_type, Node(FAST_GELU, inputs, {}, "op"), "transcendental")


def _bias_add_case(b: Any, op_type: str) -> Any:
    dtype = b.pick([np.float32, np.float16])
    shape = [b.integer(1, 3), b.integer(1, 4), b.integer(1, 5)]
    x = b.input(b.values(shape, dtype), "x")
    bias = b.operand(b.values(shape[-1:], dtype), "bias")
    skip = b.input(b.values(shape, dtype), "skip")
    return b.case(op_type, Node(BIAS_ADD, [x.output(0), bias.output(0), skip.output(0)], {}, "op"))


RECIPES = {"FastGelu": _fast_gelu_case, "BiasAdd": _bias_add_case}
"""Conformance-kit case recipes by op type."""
