"""Rules for ONNX's casts: Cast, CastLike and BitCast. Where ONNX's conversions differ from Convert's
(OpenVINO's), the rules add what ONNX does: casts to the float8 types saturate at the largest finite
value unless ``saturate`` is 0 (then Convert's overflow to infinity or NaN), and casts to the 4- and
2-bit integers keep the low bits of the integer, as ONNX's casts between integers do."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.frontend.onnx.types import element_type
from hetero_sdk.graph.node import Output
from hetero_sdk.ops.checks import REAL_TYPES

__all__ = ["SATURATING", "onnx_cast", "saturated"]

SATURATING = frozenset({Type.f8e4m3, Type.f8e5m2, Type.f8e4m3fnuz, Type.f8e5m2fnuz})
"""The types ONNX's ``saturate`` attribute applies to."""
_WRAPPING = frozenset({Type.i4, Type.u4, Type.i2, Type.u2})


def saturated(x: Output, target: Type) -> Output:
    """``x`` clamped to ``[-max, max]`` of float type ``target`` (NaN stays NaN), in ``x``'s type when
    Clamp computes in it, else in f32 (which holds every value the narrow types hold)."""
    if x.element_type not in REAL_TYPES:
        x = opset.convert(x, Type.f32).output(0)
    high = float(ml_dtypes.finfo(target.numpy).max)
    return opset.clamp(x, -high, high).output(0)


def _wrapped(ctx: NodeContext, x: Output, target: Type) -> Output:
    """``x`` (truncated to an integer) in the 4- or 2-bit ``target``, keeping its low bits."""
    span = 1 << target.bitwidth
    offset = span // 2 if target.is_signed else 0
    value = opset.convert(x, Type.i64)
    if offset:
        value = opset.add(value, ctx.const(offset, np.int64))
    value = opset.floor_mod(value, ctx.const(span, np.int64))
    if offset:
        value = opset.subtract(value, ctx.const(offset, np.int64))
    return opset.convert(value, target).output(0)


def onnx_cast(ctx: NodeContext, x: Output, target: Type, saturate: bool) -> Output:
    """``x`` cast to ``target`` as ONNX's Cast does (see the module's doc)."""
    source = x.element_type
    if target is Type.f8e8m0 and source is not Type.f8e8m0:
        raise ctx.unsupported("casting to FLOAT8E8M0 (its round_mode)")
    if target in _WRAPPING and source is not Type.boolean and source is not target:
        return _wrapped(ctx, x, target)
    if target in SATURATING and saturate and source not in (Type.boolean, target):
        x = saturated(x, target)
    return opset.convert(x, target).output(0)


@rule("Cast", since=6)
def cast(ctx: NodeContext) -> Outputs:
    target = element_type(ctx.attr("to"), f"ONNX {ctx.describe()} target")
    return [onnx_cast(ctx, ctx.input(0), target, bool(ctx.attr("saturate", 1)))]


@rule("BitCast", since=26)
def bit_cast(ctx: NodeContext) -> Outputs:
    target = element_type(ctx.attr("to"), f"ONNX {ctx.describe()} target")
    return [opset.bit_cast(ctx.input(0), target).output(0)]


@rule("CastLike", since=15)
def cast_like(ctx: NodeContext) -> Outputs:
    return [onnx_cast(ctx, ctx.input(0), ctx.input(1).element_type, bool(ctx.attr("saturate", 1)))]
