"""Rules for ONNX's Constant and casts: Cast, CastLike and BitCast. Where ONNX's conversions differ from Convert's
(OpenVINO's), the rules add what ONNX does: casts to the float8 types saturate at the largest finite
value unless ``saturate`` is 0 (then Convert's overflow to infinity or NaN), casts to the 4- and 2-bit
integers keep the low bits of the integer, as ONNX's casts between integers do, and casts to
FLOAT8E8M0 (a power of two: f32's exponent byte) round the exponent as ``round_mode`` says."""

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


def _bits(ctx: NodeContext, value: Output, mask: int) -> Output:
    return opset.bitwise_and(value, ctx.const(mask, np.int32)).output(0)


def _positive(ctx: NodeContext, value: Output) -> Output:
    return opset.greater(value, ctx.const(0, np.int32)).output(0)


def _to_e8m0(ctx: NodeContext, x: Output, saturate: bool, mode: str) -> Output:
    """f32's exponent byte of ``x`` (its sign ignored), plus one where ``mode`` rounds the fraction up:
    ``up`` any fraction, ``nearest`` half or more (ties away), ``down`` none. NaN and infinity give
    NaN's code 255; so does rounding up past 2**127 unless ``saturate`` keeps it there."""
    if mode not in ("up", "down", "nearest"):
        raise ctx.unsupported(f"round_mode {mode!r} (ONNX defines up, down and nearest)")
    bits = opset.bit_cast(opset.convert(x, Type.f32) if x.element_type != Type.f32 else x, Type.i32).output(0)
    exponent = _bits(ctx, opset.bitwise_right_shift(bits, ctx.const(23, np.int32)).output(0), 0xFF)
    finite = opset.not_equal(exponent, ctx.const(0xFF, np.int32)).output(0)
    if mode == "up":
        round_up = opset.logical_and(_positive(ctx, _bits(ctx, bits, 0x7FFFFF)), finite).output(0)
    elif mode == "nearest":  # the fraction's first bit set, and any bit after it or an exponent above 0
        rest = opset.logical_or(_positive(ctx, _bits(ctx, bits, 0x3FFFFF)), _positive(ctx, exponent))
        half = opset.logical_and(_positive(ctx, _bits(ctx, bits, 0x400000)), rest)
        round_up = opset.logical_and(half, finite).output(0)
    if mode != "down":
        if saturate:
            below_max = opset.not_equal(exponent, ctx.const(0xFE, np.int32))
            round_up = opset.logical_and(round_up, below_max).output(0)
        exponent = opset.add(exponent, opset.convert(round_up, Type.i32)).output(0)
    return opset.bit_cast(opset.convert(exponent, Type.u8), Type.f8e8m0).output(0)


def onnx_cast(ctx: NodeContext, x: Output, target: Type, saturate: bool) -> Output:
    """``x`` cast to ``target`` as ONNX's Cast does (see the module's doc)."""
    source = x.element_type
    if target is Type.f8e8m0 and source is not Type.f8e8m0:
        if source is Type.boolean:
            x = opset.convert(x, Type.f32).output(0)
        return _to_e8m0(ctx, x, saturate, ctx.attr("round_mode", "up"))
    if target in _WRAPPING and source is not Type.boolean and source is not target:
        return _wrapped(ctx, x, target)
    if target in SATURATING and saturate and source not in (Type.boolean, target):
        x = saturated(x, target)
    return opset.convert(x, target).output(0)


@rule("Cast", since=6)
def cast(ctx: NodeContext) -> Outputs:
    target = element_type(ctx.attr("to"), f"ONNX {ctx.describe()} target")
    return [onnx_cast(ctx, ctx.input(0), target, ctx.flag("saturate", True))]


@rule("BitCast", since=26)
def bit_cast(ctx: NodeContext) -> Outputs:
    target = element_type(ctx.attr("to"), f"ONNX {ctx.describe()} target")
    return [opset.bit_cast(ctx.input(0), target).output(0)]


@rule("CastLike", since=15)
def cast_like(ctx: NodeContext) -> Outputs:
    return [onnx_cast(ctx, ctx.input(0), ctx.input(1).element_type, ctx.flag("saturate", True))]


_I64 = np.int64


@rule("Constant")
def constant(ctx: NodeContext) -> Outputs:
    for name, dtype in (
        ("value_float", np.float32),
        ("value_floats", np.float32),
        ("value_int", _I64),
        ("value_ints", _I64),
        ("value_string", Type.string.numpy),
        ("value_strings", Type.string.numpy),
    ):
        if ctx.has_attr(name):
            return [ctx.const(ctx.attr(name), dtype)]
    if ctx.has_attr("value"):
        return [ctx.const(ctx.attr("value"))]
    raise ctx.unsupported("a Constant without a dense tensor, number or string value (a sparse tensor)")
