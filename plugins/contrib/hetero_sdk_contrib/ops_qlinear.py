"""com.microsoft's quantized (QLinear*) and fused (FusedConv, FusedGemm) ops, as ONNX Runtime's quantizer
(QOperator format) and its graph optimizer write them, translated into the SDK's own ops: each input
dequantized, the float op (the SDK's translation of the ONNX op where one exists), the result quantized
to the output's scale and zero point (round half to even, saturated). Every device runs them; no op
definition is added.

QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearAveragePool,
QLinearGlobalAveragePool, QLinearConcat, QLinearSoftmax, QGemm; FusedConv and FusedGemm (Conv and Gemm followed by
their ``activation``); DynamicQuantizeLSTM (ONNX's LSTM over the dequantized weights).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np
from hetero_sdk import Output, Type, opset
from hetero_sdk.extensions import OnnxRule
from hetero_sdk.plugin import ONNX_RULES as SDK_RULES
from hetero_sdk.plugin import OnnxNodeContext as NodeContext

from hetero_sdk_contrib.checks import Outputs
from hetero_sdk_contrib.constants import DOMAIN

__all__ = ["ONNX_RULES", "activated", "dequantized", "quantized"]

_I64 = np.int64
_QUANTIZED = frozenset({Type.i8, Type.u8})


def _f32(value: Output) -> Output:
    return value if value.element_type == Type.f32 else opset.convert(value, Type.f32).output(0)


def dequantized(x: Output, scale: Output, zero: Output | None) -> Output:
    """``(x - zero) * scale`` in f32."""
    shifted = _f32(x) if zero is None else opset.subtract(_f32(x), _f32(zero)).output(0)
    return opset.multiply(shifted, _f32(scale)).output(0)


def quantized(ctx: NodeContext, y: Output, scale: Output, zero: Output | None, target: Type) -> Output:
    """``saturate(round_half_even(y / scale) + zero)`` in ``target`` (i8 or u8)."""
    if target not in _QUANTIZED:
        raise ctx.unsupported(f"quantizing to {target.value} (only int8 and uint8)")
    levels = opset.round(opset.divide(y, _f32(scale)), "half_to_even").output(0)
    if zero is not None:
        levels = opset.add(levels, _f32(zero)).output(0)
    info = ml_dtypes.iinfo(target.numpy)
    return opset.convert(opset.clamp(levels, float(info.min), float(info.max)), target).output(0)


def _target(zero: Output | None, x: Output) -> Type:
    """The output's type: its zero point's, else the quantized input's."""
    return (zero if zero is not None else x).element_type


def _binary(combine: Callable[[Output, Output], object]) -> Callable[[NodeContext], Outputs]:
    def translate(ctx: NodeContext) -> Outputs:
        """A, A_scale, [A_zero_point], B, B_scale, [B_zero_point], C_scale, [C_zero_point]."""
        a = dequantized(ctx.input(0), ctx.input(1), ctx.optional_input(2))
        b = dequantized(ctx.input(3), ctx.input(4), ctx.optional_input(5))
        zero = ctx.optional_input(7)
        y = combine(a, b).output(0)  # type: ignore[attr-defined]
        return [quantized(ctx, y, ctx.input(6), zero, _target(zero, ctx.input(0)))]

    return translate


def _unary(apply: Callable[[NodeContext, Output], Output]) -> Callable[[NodeContext], Outputs]:
    def translate(ctx: NodeContext) -> Outputs:
        """X, X_scale, [X_zero_point], Y_scale, [Y_zero_point]."""
        x = dequantized(ctx.input(0), ctx.input(1), ctx.optional_input(2))
        zero = ctx.optional_input(4)
        return [quantized(ctx, apply(ctx, x), ctx.input(3), zero, _target(zero, ctx.input(0)))]

    return translate


def _leaky_relu(ctx: NodeContext, x: Output) -> Output:
    alpha = ctx.const(np.float32(ctx.attr("alpha", 0.01)))
    negative = opset.greater_equal(x, ctx.const(np.float32(0)))
    return opset.select(negative, x, opset.multiply(x, alpha)).output(0)


def _sigmoid(ctx: NodeContext, x: Output) -> Output:
    return opset.sigmoid(x).output(0)


def _global_average(ctx: NodeContext, x: Output) -> Output:
    rank = x.partial_shape.rank
    axes = range(1, rank - 1) if ctx.attr("channels_last", 0) else range(2, rank)
    return opset.reduce_mean(x, ctx.const(list(axes), _I64), keep_dims=True).output(0)


def translated_as(ctx: NodeContext, op_type: str, version: int, inputs: Sequence[Output | None]) -> Outputs:
    """The SDK's translation of ONNX ``op_type`` (default domain, opset ``version``) applied to this
    node's attributes and ``inputs``: the rule sees the node as that ONNX op."""
    found = None
    for candidate in SDK_RULES.find(op_type) or ():  # the SDK's rules of the op, oldest first
        if candidate.domain in ("", "ai.onnx") and candidate.since <= version:
            found = candidate
    if found is None:
        raise ctx.unsupported(f"no translation of {op_type} to build it from")
    proto = type(ctx.proto)()  # an onnx.NodeProto, without importing onnx here
    proto.CopyFrom(ctx.proto)
    proto.op_type, proto.domain = op_type, ""
    derived = copy.copy(ctx)
    derived.proto, derived.inputs, derived.version = proto, list(inputs), version
    return found.translate(derived)


def _average_pool(ctx: NodeContext, x: Output) -> Output:
    if ctx.attr("channels_last", 0):
        raise ctx.unsupported("channels_last=1")
    return translated_as(ctx, "AveragePool", 19, [x])[0]  # type: ignore[return-value]


def _softmax(ctx: NodeContext, x: Output) -> Output:
    """ONNX's Softmax at the node's ``opset`` (before 13 it normalises over the axes from ``axis`` on)."""
    return translated_as(ctx, "Softmax", int(ctx.attr("opset", 13)), [x])[0]  # type: ignore[return-value]


def concat_rule(ctx: NodeContext) -> Outputs:
    """QLinearConcat: Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input; axis."""
    count = len(ctx.inputs) - 2
    if count < 3 or count % 3:
        raise ctx.error(f"expects Y_scale, Y_zero_point and triples (X, X_scale, X_zero_point); got {count + 2} inputs")
    parts = [dequantized(ctx.input(i), ctx.input(i + 1), ctx.optional_input(i + 2)) for i in range(2, count + 2, 3)]
    rank = parts[0].partial_shape.rank
    y = opset.concat(parts, ctx.axis("axis", 0, rank)).output(0)
    zero = ctx.input(1)
    return [quantized(ctx, y, ctx.input(0), zero, zero.element_type)]


def qgemm_rule(ctx: NodeContext) -> Outputs:
    """QGemm: A, a_scale, a_zero_point, B, b_scale, b_zero_point, [C (i32, scaled a_scale * b_scale)],
    [y_scale], [y_zero_point]; alpha, transA, transB: ``alpha (A' B' + C a_scale b_scale)``, a float
    output without y_scale."""
    a = dequantized(ctx.input(0), ctx.input(1), ctx.optional_input(2))
    b = dequantized(ctx.input(3), ctx.input(4), ctx.optional_input(5))
    y = opset.matmul(a, b, transpose_a=ctx.flag("transA", False), transpose_b=ctx.flag("transB", False)).output(0)
    c = ctx.optional_input(6)
    if c is not None:  # C is the i32 accumulator's bias: alpha scales it too, as ONNX Runtime computes
        scale = opset.multiply(_f32(ctx.input(1)), _f32(ctx.input(4))).output(0)
        y = opset.add(y, opset.multiply(_f32(c), scale)).output(0)
    alpha = ctx.attr("alpha", 1.0)
    if alpha != 1.0:
        y = opset.multiply(y, ctx.const(np.float32(alpha))).output(0)
    y_scale = ctx.optional_input(7)
    if y_scale is None:
        return [y]
    zero = ctx.optional_input(8)
    return [quantized(ctx, y, y_scale, zero, _target(zero, ctx.input(0)))]


def activated(ctx: NodeContext, y: Output) -> Output:
    """``y`` through the node's ``activation`` (FusedConv's and FusedGemm's), with its parameters
    (``activation_params``, or FusedGemm's ``activation_alpha``/``beta``)."""
    name = ctx.attr("activation", "") or ""
    name = name.decode() if isinstance(name, bytes) else name
    params = list(ctx.attr("activation_params", [])) or [
        ctx.attr(k) for k in ("activation_alpha", "activation_beta") if ctx.has_attr(k)
    ]
    element = y.element_type.numpy
    if name in ("", "Identity"):
        return y
    if name == "Relu":
        return opset.relu(y).output(0)
    if name == "Sigmoid":
        return opset.sigmoid(y).output(0)
    if name == "Tanh":
        return opset.tanh(y).output(0)
    if name == "LeakyRelu":
        alpha = ctx.const(np.asarray(params[0] if params else 0.01, element))
        return opset.select(
            opset.greater_equal(y, ctx.const(np.zeros((), element))), y, opset.multiply(y, alpha)
        ).output(0)
    if name == "Clip":
        low, high = (params + [float("-inf"), float("inf")][len(params) :])[:2]
        return opset.clamp(y, float(low), float(high)).output(0)
    if name == "HardSigmoid":
        alpha, beta = (params + [0.2, 0.5][len(params) :])[:2]
        return opset.hard_sigmoid(
            y, ctx.const(np.asarray(alpha, element)), ctx.const(np.asarray(beta, element))
        ).output(0)
    raise ctx.unsupported(f"activation {name!r} (Relu, Sigmoid, Tanh, LeakyRelu, Clip, HardSigmoid)")


def fused_conv_rule(ctx: NodeContext) -> Outputs:
    """FusedConv: X, W, [B], [Z]: Conv (with bias), plus Z, then the activation."""
    y = translated_as(ctx, "Conv", 11, [ctx.input(0), ctx.input(1), ctx.optional_input(2)])[0]
    z = ctx.optional_input(3)
    if z is not None:
        y = opset.add(y, z).output(0)
    return [activated(ctx, y)]  # type: ignore[arg-type]


def fused_gemm_rule(ctx: NodeContext) -> Outputs:
    """FusedGemm: A, B, [C]: Gemm, then the activation."""
    y = translated_as(ctx, "Gemm", 13, [ctx.input(0), ctx.input(1), ctx.optional_input(2)])[0]
    return [activated(ctx, y)]  # type: ignore[arg-type]


def _per_direction(ctx: NodeContext, weight: Output, scale: Output, zero: Output | None) -> Output:
    """A DynamicQuantizeLSTM weight, (directions, inputs, 4 hidden), dequantized with its per-direction
    or per-column scale and zero point, in ONNX LSTM's layout (directions, 4 hidden, inputs)."""
    rank = scale.partial_shape.rank
    shape = ctx.const([-1, 1, 1] if rank == 1 else [0, 1, -1], _I64)
    scale = opset.reshape(scale, shape, special_zero=True).output(0)
    if zero is not None:
        zero = opset.reshape(zero, shape, special_zero=True).output(0)
    float_weight = dequantized(weight, scale, zero)
    return opset.transpose(float_weight, ctx.const([0, 2, 1], _I64)).output(0)


def dynamic_quantize_lstm_rule(ctx: NodeContext) -> Outputs:
    """DynamicQuantizeLSTM: X, W, R, [B], [sequence_lens], [initial_h], [initial_c], [P], W_scale,
    W_zero_point, R_scale, R_zero_point: ONNX's LSTM over the dequantized weights (the op's meaning;
    ONNX Runtime also quantizes the activations per step, which moves its results by that rounding)."""
    w = _per_direction(ctx, ctx.input(1), ctx.input(8), ctx.optional_input(9))
    r = _per_direction(ctx, ctx.input(2), ctx.input(10), ctx.optional_input(11))
    inputs = [ctx.input(0), w, r, *(ctx.optional_input(i) for i in range(3, 8))]
    return translated_as(ctx, "LSTM", 14, inputs)


_ARITHMETIC = ("Convert", "Subtract", "Multiply", "Divide", "Round", "Add", "Clamp")
ONNX_RULES = [
    OnnxRule(DOMAIN, "QLinearAdd", _binary(opset.add), makes=_ARITHMETIC),
    OnnxRule(DOMAIN, "QLinearMul", _binary(opset.multiply), makes=_ARITHMETIC),
    OnnxRule(DOMAIN, "QLinearSigmoid", _unary(_sigmoid), makes=(*_ARITHMETIC, "Sigmoid")),
    OnnxRule(DOMAIN, "QLinearLeakyRelu", _unary(_leaky_relu), makes=(*_ARITHMETIC, "Select", "GreaterEqual")),
    OnnxRule(DOMAIN, "QLinearGlobalAveragePool", _unary(_global_average), makes=(*_ARITHMETIC, "ReduceMean")),
    OnnxRule(DOMAIN, "QLinearAveragePool", _unary(_average_pool), makes=(*_ARITHMETIC, "AvgPool")),
    OnnxRule(DOMAIN, "QLinearSoftmax", _unary(_softmax), makes=(*_ARITHMETIC, "Softmax", "Reshape", "ShapeOf")),
    OnnxRule(DOMAIN, "QLinearConcat", concat_rule, makes=(*_ARITHMETIC, "Concat")),
    OnnxRule(DOMAIN, "QGemm", qgemm_rule, makes=(*_ARITHMETIC, "MatMul")),
    OnnxRule(DOMAIN, "FusedConv", fused_conv_rule, makes=("Convolution", "Add", "Relu", "Sigmoid", "Tanh", "Clamp")),
    OnnxRule(DOMAIN, "FusedGemm", fused_gemm_rule, makes=("MatMul", "Multiply", "Add", "Relu", "Sigmoid", "Tanh")),
    OnnxRule(DOMAIN, "DynamicQuantizeLSTM", dynamic_quantize_lstm_rule, makes=(*_ARITHMETIC, "Reshape", "Transpose")),
]
"""The ONNX ops this module translates."""
