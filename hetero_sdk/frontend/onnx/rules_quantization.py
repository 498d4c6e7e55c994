"""Rules for ONNX's linear quantization: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear, and
the quantized products MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv; decomposed into
existing ops (Convert, Divide, Round, Add, Clamp, Multiply, MatMul, Convolution) as OpenVINO's frontend
does without FakeQuantize; scales and zero points per tensor, per axis or per block. QuantizeLinear
and DequantizeLinear also take the 8-, 4- and 2-bit integer and float types (float targets round to
nearest even, without Round, and saturate as ONNX's ``saturate`` says)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.frontend.onnx.rules_basic import SATURATING, saturated
from hetero_sdk.frontend.onnx.rules_convolution import channel_bias, convolve
from hetero_sdk.frontend.onnx.types import element_type
from hetero_sdk.graph.limits import CONSTANT_ELEMENTS
from hetero_sdk.graph.node import Output

__all__: list[str] = []

_I64 = np.int64
_QUANTIZED = frozenset({Type.i8, Type.u8, Type.i16, Type.u16, Type.i32, Type.i4, Type.u4, Type.i2, Type.u2})
"""The integer types ONNX quantizes to."""
_FLOAT_QUANTIZED = SATURATING | {Type.f4e2m1}
"""The float types ONNX quantizes to: f4e2m1 always saturates (it has no infinity nor NaN)."""


def _f32(value: Output) -> Output:
    return value if value.element_type == Type.f32 else opset.convert(value, Type.f32).output(0)


def _along_axis(ctx: NodeContext, param: Output, x: Output) -> Output:
    """A scale or zero point shaped to broadcast against ``x``: a scalar as it is, a 1-D one along
    ``axis``, and with ``block_size`` each entry repeated over its block of ``axis``."""
    rank = x.partial_shape.rank
    block = ctx.attr("block_size", 0)
    if not block and (param.partial_shape.rank == 0 or rank < 2):
        return param  # per tensor, or one value per element of a 1-D x: the axis is not read
    axis = ctx.axis("axis", 1, rank)
    if block:
        size = x.partial_shape[axis]
        if size < 0:
            raise ctx.unsupported(f"block_size with a dynamic dimension {axis} of the input")
        CONSTANT_ELEMENTS.check(size, f"the block of each position of axis {axis}", ctx.error)
        positions = ctx.const(np.arange(size) // block, _I64)
        return opset.gather(param, positions, ctx.const(axis, _I64)).output(0)
    if param.partial_shape.rank == 1 and rank > 1:
        shape = [1] * rank
        shape[axis] = -1
        return opset.reshape(param, ctx.const(shape, _I64), special_zero=False).output(0)
    return param


def _target(ctx: NodeContext, zero_point: Output | None, default: Type) -> Type:
    if ctx.attr("output_dtype", 0):
        return element_type(ctx.attr("output_dtype"), f"ONNX {ctx.describe()} output_dtype")
    return default if zero_point is None else zero_point.element_type


def _quantize(ctx: NodeContext, x: Output, scale: Output, zero_point: Output | None, target: Type) -> Output:
    """``saturate(round(x / scale) + zero_point)`` in ``target``, computed in f32; float targets round
    to nearest even in the conversion, and saturate unless the node's ``saturate`` is 0."""
    if target not in _QUANTIZED | _FLOAT_QUANTIZED:
        raise ctx.unsupported(f"quantizing to {target.value}")
    y = opset.divide(_f32(x), _f32(scale)).output(0)
    if target in _QUANTIZED:
        y = opset.round(y, "half_to_even").output(0)
    if zero_point is not None:
        y = opset.add(y, _f32(zero_point)).output(0)
    if target in _FLOAT_QUANTIZED:
        keep_range = target is Type.f4e2m1 or ctx.flag("saturate", True)
        return opset.convert(saturated(y, target) if keep_range else y, target).output(0)
    info = ml_dtypes.iinfo(target.numpy)
    return opset.convert(opset.clamp(y, float(info.min), float(info.max)), target).output(0)


@rule("QuantizeLinear", since=10)
def quantize_linear(ctx: NodeContext) -> Outputs:
    if ctx.attr("precision", 0):
        raise ctx.unsupported("a precision attribute")
    x = ctx.input(0)
    zero_point = ctx.optional_input(2)
    target = _target(ctx, zero_point, Type.u8)
    scale = _along_axis(ctx, ctx.input(1), x)
    zero_point = None if zero_point is None else _along_axis(ctx, _f32(zero_point), x)  # f32 first: XLA
    # does not move 4- and 2-bit values
    return [_quantize(ctx, x, scale, zero_point, target)]


@rule("DequantizeLinear", since=10)
def dequantize_linear(ctx: NodeContext) -> Outputs:
    """``(x - zero_point) * scale``, computed in f32, in the scale's type (or ``output_dtype``)."""
    x = ctx.input(0)
    if x.element_type not in _QUANTIZED | _FLOAT_QUANTIZED:
        raise ctx.unsupported(f"dequantizing {x.element_type.value}")
    scale = ctx.input(1)
    target = _target(ctx, None, scale.element_type)
    y = _f32(x)
    zero_point = ctx.optional_input(2)
    if zero_point is not None:
        y = opset.subtract(y, _along_axis(ctx, _f32(zero_point), x)).output(0)
    y = opset.multiply(y, _f32(_along_axis(ctx, scale, x))).output(0)
    return [y if target == Type.f32 else opset.convert(y, target).output(0)]


@rule("DynamicQuantizeLinear", since=11)
def dynamic_quantize_linear(ctx: NodeContext) -> Outputs:
    """u8 quantization with the scale and zero point that map ``[min(x, 0), max(x, 0)]`` onto ``[0, 255]``."""
    x = _f32(ctx.input(0))
    axes = ctx.const(list(range(x.partial_shape.rank)), _I64)
    zero = ctx.const(0.0, np.float32)
    high = opset.maximum(opset.reduce_max(x, axes), zero)
    low = opset.minimum(opset.reduce_min(x, axes), zero)
    scale = opset.divide(opset.subtract(high, low), ctx.const(255.0, np.float32)).output(0)
    zero_point = _quantize(ctx, opset.negative(low).output(0), scale, None, Type.u8)
    return [_quantize(ctx, x, scale, zero_point, Type.u8), scale, zero_point]


def _on_axis(ctx: NodeContext, param: Output, rank: int, axis: int) -> Output:
    """A scalar or 1-D scale or zero point of a quantized product, along ``axis`` of a rank-``rank`` operand."""
    if param.partial_shape.rank != 1 or rank < 2:
        return param
    shape = [1] * rank
    shape[ctx.check_axis(axis, rank, "attribute axis")] = -1
    return opset.reshape(param, ctx.const(shape, _I64), special_zero=False).output(0)


def _shifted(ctx: NodeContext, x: Output, zero_point: int, axis: int, dtype: Type) -> Output:
    """``x - zero_point`` in ``dtype`` (input ``zero_point`` of the node, when it has one)."""
    y = opset.convert(x, dtype).output(0)
    given = ctx.optional_input(zero_point)
    if given is None:
        return y
    rank = x.partial_shape.rank
    return opset.subtract(y, opset.convert(_on_axis(ctx, given, rank, axis), dtype)).output(0)


def _dequantized(ctx: NodeContext, x: int, scale: int, zero_point: int, axis: int) -> Output:
    """Node input ``x`` dequantized in f32 with the node's inputs ``scale`` and ``zero_point``."""
    value = ctx.input(x)
    shifted = _shifted(ctx, value, zero_point, axis, Type.f32)
    return opset.multiply(shifted, _f32(_on_axis(ctx, ctx.input(scale), value.partial_shape.rank, axis))).output(0)


@rule("MatMulInteger", since=10)
def matmul_integer(ctx: NodeContext) -> Outputs:
    """``(a - a_zero_point) @ (b - b_zero_point)`` in i32; zero points per tensor, a's per row, b's per column."""
    a = _shifted(ctx, ctx.input(0), 2, -2, Type.i32)
    b = _shifted(ctx, ctx.input(1), 3, -1, Type.i32)
    return [opset.matmul(a, b).output(0)]


@rule("ConvInteger", since=10)
def conv_integer(ctx: NodeContext) -> Outputs:
    """``(x - x_zero_point) * (w - w_zero_point)`` convolved in f64 (exact for any integer sum an i32
    holds), then i32; w's zero point per tensor or per output channel."""
    x = _shifted(ctx, ctx.input(0), 2, 1, Type.f64)
    w = _shifted(ctx, ctx.input(1), 3, 0, Type.f64)
    return [opset.convert(convolve(ctx, x, w), Type.i32).output(0)]


@rule("QLinearMatMul", since=10)
def qlinear_matmul(ctx: NodeContext) -> Outputs:
    """a and b dequantized (per tensor, a per row, b per column), multiplied in f32, quantized again."""
    product = opset.matmul(_dequantized(ctx, 0, 1, 2, -2), _dequantized(ctx, 3, 4, 5, -1)).output(0)
    zero_point = ctx.input(7)
    return [_quantize(ctx, product, ctx.input(6), zero_point, zero_point.element_type)]


@rule("QLinearConv", since=10)
def qlinear_conv(ctx: NodeContext) -> Outputs:
    """x and w dequantized (w per output channel), convolved in f32 with the i32 bias at scale
    ``x_scale * w_scale``, quantized again."""
    y = convolve(ctx, _dequantized(ctx, 0, 1, 2, 1), _dequantized(ctx, 3, 4, 5, 0))
    bias = ctx.optional_input(8)
    if bias is not None:
        bias = opset.multiply(_f32(bias), opset.multiply(_f32(ctx.input(1)), _f32(ctx.input(4)))).output(0)
        y = channel_bias(ctx, y, bias)
    zero_point = ctx.input(7)
    return [_quantize(ctx, y, ctx.input(6), zero_point, zero_point.element_type)]
