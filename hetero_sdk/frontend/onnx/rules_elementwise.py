"""Rules for element-wise ONNX ops: arithmetic, comparisons, logic, activations (casts: rules_basic)."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import reduce

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.graph.node import Output

__all__: list[str] = []

_UNARY: dict[str, Callable[..., object]] = {
    "Abs": opset.abs, "Ceil": opset.ceiling, "Floor": opset.floor, "Cos": opset.cos, "Sin": opset.sin,
    "Exp": opset.exp, "Log": opset.log, "Neg": opset.negative, "Sqrt": opset.sqrt, "Relu": opset.relu,
    "Sigmoid": opset.sigmoid, "Tanh": opset.tanh, "Erf": opset.erf, "Not": opset.logical_not,
    "HardSwish": opset.hswish, "Tan": opset.tan, "Asin": opset.asin, "Acos": opset.acos, "Atan": opset.atan,
    "Sinh": opset.sinh, "Cosh": opset.cosh, "Asinh": opset.asinh, "Acosh": opset.acosh, "Atanh": opset.atanh,
    "Sign": opset.sign, "Round": opset.round, "BitwiseNot": opset.bitwise_not,
}  # fmt: skip

_BINARY: dict[str, Callable[..., object]] = {
    "Add": opset.add, "Sub": opset.subtract, "Mul": opset.multiply, "Equal": opset.equal,
    "Greater": opset.greater, "Less": opset.less, "GreaterOrEqual": opset.greater_equal,
    "LessOrEqual": opset.less_equal, "And": opset.logical_and, "Or": opset.logical_or,
    "Xor": opset.not_equal, "BitwiseAnd": opset.bitwise_and, "BitwiseOr": opset.bitwise_or,
    "BitwiseXor": opset.bitwise_xor,
}  # fmt: skip

_VARIADIC: dict[str, Callable[..., object]] = {
    "Sum": opset.add, "Max": opset.maximum, "Min": opset.minimum, "Mean": opset.add,
}  # fmt: skip


def _out(node: object) -> Output:
    return node.output(0)  # type: ignore[attr-defined, no-any-return]


def _scalar(ctx: NodeContext, value: float, like: Output) -> Output:
    return ctx.const(np.array(value, dtype=like.element_type.numpy))


@rule(*_UNARY)
def unary(ctx: NodeContext) -> Outputs:
    return [_out(_UNARY[ctx.op_type](ctx.input(0)))]


@rule(*_BINARY)
def binary(ctx: NodeContext) -> Outputs:
    return [_out(_BINARY[ctx.op_type](ctx.input(0), ctx.input(1)))]


@rule("Div")
def div(ctx: NodeContext) -> Outputs:
    # integers divide truncating toward zero, as ONNX Runtime and C do
    return [_out(opset.divide(ctx.input(0), ctx.input(1), python_division=False))]


@rule("Pow")
def pow_(ctx: NodeContext) -> Outputs:
    """``base ** exponent`` in the base's type. Opset 12 lets the exponent have its own type: an integer
    base with a real exponent is raised in f64 and the result truncated to the base's type, as ONNX
    Runtime computes ``std::pow`` in double (``2 ** 2.5`` is 5, not ``2 ** 2``)."""
    base, exponent = ctx.input(0), ctx.input(1)
    if base.element_type.is_integral and not exponent.element_type.is_integral:
        wide = opset.power(opset.convert(base, Type.f64), opset.convert(exponent, Type.f64))
        return [_out(opset.convert(wide, base.element_type))]
    if exponent.element_type != base.element_type:
        exponent = _out(opset.convert(exponent, base.element_type))
    return [_out(opset.power(base, exponent))]


@rule("Mod", since=10)
def mod(ctx: NodeContext) -> Outputs:
    factory = opset.mod if ctx.flag("fmod", False) else opset.floor_mod
    return [_out(factory(ctx.input(0), ctx.input(1)))]


@rule(*_VARIADIC)
def variadic(ctx: NodeContext) -> Outputs:
    # before opset 8 the inputs had one shape: broadcasting them changes nothing
    values = [ctx.input(i) for i in range(len(ctx.inputs))]
    total = reduce(lambda a, b: _out(_VARIADIC[ctx.op_type](a, b)), values)
    if ctx.op_type == "Mean" and len(values) > 1:
        total = _out(opset.divide(total, _scalar(ctx, len(values), total)))
    return [total]


@rule("Reciprocal")
def reciprocal(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    return [_out(opset.divide(_scalar(ctx, 1, x), x))]


@rule("BitShift", since=11)
def bit_shift(ctx: NodeContext) -> Outputs:
    direction = ctx.attr("direction", "")
    factory = {"LEFT": opset.bitwise_left_shift, "RIGHT": opset.bitwise_right_shift}.get(direction)
    if factory is None:
        raise ctx.error(f"direction must be 'LEFT' or 'RIGHT', not {direction!r}")
    return [_out(factory(ctx.input(0), ctx.input(1)))]


@rule("Identity", "Dropout")
def identity(ctx: NodeContext) -> Outputs:
    if ctx.op_type == "Identity":  # of a tensor, a sequence or an optional alike
        value = ctx.any_input(0)
        if value is None:
            raise ctx.error("input 0 is required but not given")
        return [value]
    x = ctx.input(0)
    if ctx.op_type == "Dropout" and ctx.has_input(2):  # opset 12: training_mode, an input
        training = ctx.constant_input(2)
        if training is None or bool(np.asarray(training).reshape(-1)[0]):
            raise ctx.unsupported("training mode (training_mode true or computed at run time: random dropping)")
    if ctx.op_type == "Dropout" and ctx.wants_output(1):
        mask = _out(opset.broadcast(ctx.const(True), opset.shape_of(x)))
        return [x, mask]
    return [x]


@rule("Where", since=9)
def where(ctx: NodeContext) -> Outputs:
    return [_out(opset.select(ctx.input(0), ctx.input(1), ctx.input(2)))]


# -- activations with parameters ---------------------------------------------------------------------


@rule("Clip", since=6)
def clip_6(ctx: NodeContext) -> Outputs:
    low, high = ctx.attr("min", -math.inf), ctx.attr("max", math.inf)
    return [_out(opset.clamp(ctx.input(0), low, high))]


@rule("Clip", since=11)
def clip_11(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    low, high = ctx.constant_input(1), ctx.constant_input(2)
    if (
        x.element_type.is_real
        and (low is not None or not ctx.has_input(1))
        and (high is not None or not ctx.has_input(2))
    ):
        lo = -math.inf if low is None else float(low)
        hi = math.inf if high is None else float(high)
        return [_out(opset.clamp(x, lo, hi))]
    if ctx.has_input(1):
        x = _out(opset.maximum(x, ctx.input(1)))
    if ctx.has_input(2):
        x = _out(opset.minimum(x, ctx.input(2)))
    return [x]


@rule("HardSigmoid", since=6)
def hard_sigmoid(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    alpha, beta = ctx.attr("alpha", 0.2), ctx.attr("beta", 0.5)
    linear = opset.add(opset.multiply(x, _scalar(ctx, alpha, x)), _scalar(ctx, beta, x))
    return [_out(opset.clamp(linear, 0.0, 1.0))]


@rule("LeakyRelu", since=6)
def leaky_relu(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    scaled = opset.multiply(x, _scalar(ctx, ctx.attr("alpha", 0.01), x))
    return [_out(opset.select(opset.greater_equal(x, _scalar(ctx, 0, x)), x, scaled))]


@rule("Shrink", since=9)
def shrink(ctx: NodeContext) -> Outputs:
    """``x + bias`` below ``-lambd``, ``x - bias`` above ``lambd``, 0 between."""
    x = ctx.input(0)
    lambd, bias = ctx.attr("lambd", 0.5), ctx.attr("bias", 0.0)
    zero = _scalar(ctx, 0, x)
    above = opset.select(opset.greater(x, _scalar(ctx, lambd, x)), opset.subtract(x, _scalar(ctx, bias, x)), zero)
    return [_out(opset.select(opset.less(x, _scalar(ctx, -lambd, x)), opset.add(x, _scalar(ctx, bias, x)), above))]


@rule("Binarizer", domain="ai.onnx.ml")
def binarizer(ctx: NodeContext) -> Outputs:
    """1 where ``x`` is above ``threshold``, else 0, in the type of ``x``."""
    x = ctx.input(0)
    above = opset.greater(x, _scalar(ctx, ctx.attr("threshold", 0.0), x))
    return [_out(opset.select(above, _scalar(ctx, 1, x), _scalar(ctx, 0, x)))]


@rule("PRelu", since=7)
def prelu(ctx: NodeContext) -> Outputs:
    x, slope = ctx.input(0), ctx.input(1)
    return [_out(opset.select(opset.greater_equal(x, _scalar(ctx, 0, x)), x, opset.multiply(x, slope)))]


def _in_f32(x: Output, compute: Callable[[Output], Output]) -> Output:
    """``compute(x)``, in f32 when ``x`` is a 16-bit float (rounded once at the end, as ONNX's one op
    is, rather than after each op of its decomposition)."""
    if x.element_type not in (Type.f16, Type.bf16):
        return compute(x)
    return _out(opset.convert(compute(_out(opset.convert(x, Type.f32))), x.element_type))


def _exponential_linear(ctx: NodeContext, x: Output, alpha: float, gamma: float = 1.0) -> Output:
    """``gamma * (x if x > 0 else alpha * (exp(x) - 1))``: Elu, and Selu with its gamma."""
    if x.element_type in (Type.f16, Type.bf16):
        return _in_f32(x, lambda wide: _exponential_linear(ctx, wide, alpha, gamma))
    negative = opset.multiply(opset.subtract(opset.exp(x), _scalar(ctx, 1, x)), _scalar(ctx, alpha, x))
    out = _out(opset.select(opset.greater(x, _scalar(ctx, 0, x)), x, negative))
    return out if gamma == 1.0 else _out(opset.multiply(out, _scalar(ctx, gamma, x)))


@rule("Elu", since=6)
def elu(ctx: NodeContext) -> Outputs:
    return [_exponential_linear(ctx, ctx.input(0), ctx.attr("alpha", 1.0))]


@rule("Selu", since=6)
def selu(ctx: NodeContext) -> Outputs:
    alpha, gamma = ctx.attr("alpha", 1.67326319217681884765625), ctx.attr("gamma", 1.05070102214813232421875)
    return [_exponential_linear(ctx, ctx.input(0), alpha, gamma)]


@rule("Celu", since=12)
def celu(ctx: NodeContext) -> Outputs:
    alpha = ctx.attr("alpha", 1.0)

    def compute(x: Output) -> Output:
        scaled = _out(opset.divide(x, _scalar(ctx, alpha, x)))
        negative = opset.multiply(opset.subtract(opset.exp(scaled), _scalar(ctx, 1, x)), _scalar(ctx, alpha, x))
        return _out(opset.add(opset.maximum(x, _scalar(ctx, 0, x)), opset.minimum(negative, _scalar(ctx, 0, x))))

    return [_in_f32(ctx.input(0), compute)]


@rule("Softplus")
def softplus(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    # log(1 + exp(x)) without overflow: max(x, 0) + log(1 + exp(-|x|))
    tail = opset.log(opset.add(opset.exp(opset.negative(opset.abs(x))), _scalar(ctx, 1, x)))
    return [_out(opset.add(opset.maximum(x, _scalar(ctx, 0, x)), tail))]


@rule("Softsign")
def softsign(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    return [_out(opset.divide(x, opset.add(opset.abs(x), _scalar(ctx, 1, x))))]


@rule("Mish", since=18)
def mish(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    tail = opset.log(opset.add(opset.exp(opset.negative(opset.abs(x))), _scalar(ctx, 1, x)))
    softplus_x = opset.add(opset.maximum(x, _scalar(ctx, 0, x)), tail)
    return [_out(opset.multiply(x, opset.tanh(softplus_x)))]


@rule("Gelu", since=20)
def gelu(ctx: NodeContext) -> Outputs:
    mode = {"none": "ERF", "tanh": "TANH"}.get(ctx.attr("approximate", "none"))
    if mode is None:
        raise ctx.error(f"approximate must be 'none' or 'tanh', not {ctx.attr('approximate')!r}")
    return [_out(opset.gelu(ctx.input(0), approximation_mode=mode))]


@rule("ThresholdedRelu", since=10)
def thresholded_relu(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    above = opset.greater(x, _scalar(ctx, ctx.attr("alpha", 1.0), x))
    return [_out(opset.select(above, x, _scalar(ctx, 0, x)))]


@rule("IsNaN", since=9)
def is_nan(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    return [_out(opset.not_equal(x, x))]


@rule("IsInf", since=10)
def is_inf(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    positive = opset.equal(x, _scalar(ctx, math.inf, x))
    negative = opset.equal(x, _scalar(ctx, -math.inf, x))
    found = [
        n
        for n, wanted in ((positive, ctx.flag("detect_positive", True)), (negative, ctx.flag("detect_negative", True)))
        if wanted
    ]
    if not found:
        return [_out(opset.broadcast(ctx.const(False), opset.shape_of(x)))]
    return [_out(reduce(opset.logical_or, found) if len(found) > 1 else found[0])]
