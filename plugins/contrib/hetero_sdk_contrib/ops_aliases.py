"""com.microsoft ops that are ONNX's own under another domain, translated by the SDK's rule of the ONNX
op at the opset whose meaning they have: QuantizeLinear and DequantizeLinear (13), QLinearConv (10),
GatherND (11), Trilu (14), Pad (11), Range (11, ``delta`` 1 when left out) and QLinearWhere (a Where
between dequantized inputs)."""

from __future__ import annotations

import numpy as np
from hetero_sdk import opset
from hetero_sdk.extensions import OnnxRule
from hetero_sdk.plugin import OnnxNodeContext as NodeContext

from hetero_sdk_contrib.checks import Outputs
from hetero_sdk_contrib.constants import DOMAIN
from hetero_sdk_contrib.ops_qlinear import dequantized, quantized, translated_as

__all__ = ["ONNX_RULES"]

_ALIASES = {
    "QuantizeLinear": 13,
    "DequantizeLinear": 13,
    "QLinearConv": 10,
    "GatherND": 11,
    "Trilu": 14,
    "Pad": 11,
}
"""The ONNX opset whose op each com.microsoft op means."""


def _alias(ctx: NodeContext) -> Outputs:
    """The node translated as the ONNX op of the same name at the opset of :data:`_ALIASES`."""
    return translated_as(ctx, ctx.op_type, _ALIASES[ctx.op_type], ctx.inputs)  # type: ignore[arg-type]


def range_rule(ctx: NodeContext) -> Outputs:
    """com.microsoft Range: start, limit, [delta] (1 by default)."""
    start = ctx.input(0)
    delta = ctx.optional_input(2)
    if delta is None:
        delta = ctx.const(np.ones((), start.element_type.numpy))
    return translated_as(ctx, "Range", 11, [start, ctx.input(1), delta])


def qlinear_where_rule(ctx: NodeContext) -> Outputs:
    """QLinearWhere: condition, X, x_scale, x_zero_point, Y, y_scale, y_zero_point, z_scale,
    z_zero_point."""
    x = dequantized(ctx.input(1), ctx.input(2), ctx.optional_input(3))
    y = dequantized(ctx.input(4), ctx.input(5), ctx.optional_input(6))
    chosen = opset.select(ctx.input(0), x, y).output(0)
    zero = ctx.input(8)
    return [quantized(ctx, chosen, ctx.input(7), zero, zero.element_type)]


ONNX_RULES = [
    *(OnnxRule(DOMAIN, name, _alias, makes=()) for name in _ALIASES),
    OnnxRule(DOMAIN, "Range", range_rule, makes=()),
    OnnxRule(DOMAIN, "QLinearWhere", qlinear_where_rule, makes=("Select",)),
]
"""The ONNX ops this module translates."""
