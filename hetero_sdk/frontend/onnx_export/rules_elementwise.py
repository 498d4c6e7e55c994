"""Export rules of the elementwise and activation families and Convert: mostly one ONNX node each;
the integer floor division, the two remainders and Swish take a few."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter, onnx_type

__all__: list[str] = []

_SAME = {
    "Abs": "Abs", "Ceiling": "Ceil", "Cos": "Cos", "Erf": "Erf", "Exp": "Exp", "Floor": "Floor", "Log": "Log",
    "Negative": "Neg", "Relu": "Relu", "Sigmoid": "Sigmoid", "Sin": "Sin", "Sqrt": "Sqrt", "Tanh": "Tanh",
    "HSwish": "HardSwish", "LogicalNot": "Not", "Tan": "Tan", "Asin": "Asin", "Acos": "Acos", "Atan": "Atan",
    "Sinh": "Sinh", "Cosh": "Cosh", "Asinh": "Asinh", "Acosh": "Acosh", "Atanh": "Atanh", "Sign": "Sign",
    "BitwiseAnd": "BitwiseAnd", "BitwiseOr": "BitwiseOr", "BitwiseXor": "BitwiseXor", "BitwiseNot": "BitwiseNot",
    "Add": "Add", "Subtract": "Sub", "Multiply": "Mul", "Power": "Pow", "Maximum": "Max", "Minimum": "Min",
    "Equal": "Equal", "Less": "Less", "LessEqual": "LessOrEqual", "Greater": "Greater",
    "GreaterEqual": "GreaterOrEqual", "LogicalAnd": "And", "LogicalOr": "Or", "Select": "Where",
}  # fmt: skip
"""Op types whose ONNX counterpart computes the same, with numpy broadcasting, on the same inputs."""


@exporter(*_SAME)
def same(ctx: ExportContext) -> None:
    inputs = [ctx.input(i) for i in range(ctx.current.get_input_size())]
    ctx.emit(_SAME[ctx.current.type_name], inputs, [ctx.out()])


@exporter("Round")
def round_(ctx: ExportContext) -> None:
    if ctx.element_type(0).is_integral:
        ctx.emit1("Identity", [ctx.input(0)], ctx.out())  # integers are whole already
        return
    if ctx.attrs["mode"] == "half_to_even":
        ctx.emit1("Round", [ctx.input(0)], ctx.out())
        return
    x = ctx.input(0)  # half away from zero: sign(x) * floor(|x| + 0.5)
    half = ctx.const(0.5, ctx.element_type(0).numpy)
    magnitude = ctx.emit1("Floor", [ctx.emit1("Add", [ctx.emit1("Abs", [x]), half])])
    ctx.emit1("Mul", [ctx.emit1("Sign", [x]), magnitude], ctx.out())


@exporter("BitwiseLeftShift", "BitwiseRightShift")
def bit_shift(ctx: ExportContext) -> None:
    if ctx.element_type(0).is_signed:
        raise ctx.unsupported("a shift of signed integers (ONNX's BitShift takes unsigned ones)")
    direction = "LEFT" if ctx.current.type_name == "BitwiseLeftShift" else "RIGHT"
    ctx.emit1("BitShift", [ctx.input(0), ctx.input(1)], ctx.out(), direction=direction)


@exporter("NotEqual")
def not_equal(ctx: ExportContext) -> None:
    ctx.emit1("Not", [ctx.emit1("Equal", [ctx.input(0), ctx.input(1)])], ctx.out())


@exporter("SquaredDifference")
def squared_difference(ctx: ExportContext) -> None:
    difference = ctx.emit1("Sub", [ctx.input(0), ctx.input(1)])
    ctx.emit1("Mul", [difference, difference], ctx.out())


@exporter("Divide")
def divide(ctx: ExportContext) -> None:
    a, b = ctx.input(0), ctx.input(1)
    if not (ctx.attrs["python_division"] and ctx.element_type(0).is_integral and ctx.element_type(0).is_signed):
        ctx.emit1("Div", [a, b], ctx.out())
        return
    # ONNX's integer Div truncates; Python's floors: a - floor_mod(a, b) is a multiple of b, divided exactly
    remainder = ctx.emit1("Mod", [a, b], fmod=0)
    ctx.emit1("Div", [ctx.emit1("Sub", [a, remainder]), b], ctx.out())


@exporter("Mod")
def mod(ctx: ExportContext) -> None:
    ctx.emit1("Mod", [ctx.input(0), ctx.input(1)], ctx.out(), fmod=1)


@exporter("FloorMod")
def floor_mod(ctx: ExportContext) -> None:
    a, b = ctx.input(0), ctx.input(1)
    if ctx.element_type(0).is_integral:
        ctx.emit1("Mod", [a, b], ctx.out(), fmod=0)
        return
    # ONNX's Mod takes fmod=1 for real types: the truncated remainder, moved by b where the signs differ
    remainder = ctx.emit1("Mod", [a, b], fmod=1)
    zero = ctx.const(0, ctx.element_type(0), "zero")
    nonzero = ctx.emit1("Not", [ctx.emit1("Equal", [remainder, zero])])
    signs_differ = ctx.emit1("Xor", [ctx.emit1("Less", [remainder, zero]), ctx.emit1("Less", [b, zero])])
    moved = ctx.emit1("Add", [remainder, b])
    ctx.emit1("Where", [ctx.emit1("And", [nonzero, signs_differ]), moved, remainder], ctx.out())


@exporter("Clamp")
def clamp(ctx: ExportContext) -> None:
    element_type = ctx.element_type(0)
    low, high = ctx.attrs["min"], ctx.attrs["max"]
    if element_type.is_integral:  # the bounds rounded inward, as OpenVINO's Clamp on integers
        info = np.iinfo(element_type.numpy)
        low = min(max(math.ceil(low), info.min), info.max)
        high = max(min(math.floor(high), info.max), info.min)
    ctx.emit1(
        "Clip", [ctx.input(0), ctx.const(low, element_type, "min"), ctx.const(high, element_type, "max")], ctx.out()
    )


@exporter("Swish")
def swish(ctx: ExportContext) -> None:
    x = ctx.input(0)
    scaled = ctx.emit1("Mul", [x, ctx.input(1)]) if ctx.has_input(1) else x
    ctx.emit1("Mul", [x, ctx.emit1("Sigmoid", [scaled])], ctx.out())


@exporter("Gelu")
def gelu(ctx: ExportContext) -> None:
    tanh = ctx.attrs["approximation_mode"] == "TANH"
    if ctx.opset >= 20:
        ctx.emit1("Gelu", [ctx.input(0)], ctx.out(), approximate="tanh" if tanh else "none")
        return
    x, element_type = ctx.input(0), ctx.element_type(0)
    if tanh:  # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
        cube = ctx.emit1("Mul", [x, ctx.emit1("Mul", [x, x])])
        inner = ctx.emit1("Add", [x, ctx.emit1("Mul", [cube, ctx.const(0.044715, element_type)])])
        core = ctx.emit1("Tanh", [ctx.emit1("Mul", [inner, ctx.const(math.sqrt(2 / math.pi), element_type)])])
    else:  # 0.5 x (1 + erf(x / sqrt(2)))
        core = ctx.emit1("Erf", [ctx.emit1("Mul", [x, ctx.const(1 / math.sqrt(2), element_type)])])
    half_x = ctx.emit1("Mul", [x, ctx.const(0.5, element_type)])
    ctx.emit1("Mul", [half_x, ctx.emit1("Add", [core, ctx.const(1, element_type)])], ctx.out())


@exporter("Convert")
def convert(ctx: ExportContext) -> None:
    # OpenVINO's Convert saturates at the destination's limits where ONNX's Cast wraps: a Clip first.
    # Floats overflow (to infinity or NaN) where ONNX's Cast to float8 saturates: saturate=0.
    target: Type = ctx.attrs["destination_type"]
    source = ctx.element_type(0)
    x = ctx.input(0)
    if target in _SATURATING and source != Type.boolean:
        ctx.emit1("Cast", [x], ctx.out(), to=onnx_type(target), saturate=0)
        return
    if target is Type.f8e8m0 and source != Type.boolean:  # ml_dtypes' rounding: to nearest
        ctx.emit1("Cast", [x], ctx.out(), to=onnx_type(target), saturate=0, round_mode="nearest")
        return
    if target.is_integral and source not in (Type.boolean, Type.string):  # ONNX's Cast reads text itself
        info = ml_dtypes.iinfo(target.numpy)
        low: float
        high: float
        if source.is_integral:
            have = ml_dtypes.iinfo(source.numpy)
            low, high = max(int(info.min), int(have.min)), min(int(info.max), int(have.max))
            needed = low > have.min or high < have.max
        else:
            real = ml_dtypes.finfo(source.numpy)
            needed = float(real.max) > float(info.max)
            low = _inside(float(info.min), source)
            high = _inside(float(info.max), source)
        if needed:
            x = ctx.emit1("Clip", [x, ctx.const(low, source, "min"), ctx.const(high, source, "max")])
    ctx.emit1("Cast", [x], ctx.out(), to=onnx_type(target))


_SATURATING = frozenset({Type.f8e4m3, Type.f8e5m2, Type.f8e4m3fnuz, Type.f8e5m2fnuz})
"""The types ONNX's Cast saturates to unless told ``saturate=0``."""


def _inside(bound: float, source: Type) -> float:
    """The value of type ``source`` nearest ``bound`` on the side of zero (2**31 is not an i32)."""
    value = np.asarray(bound, source.numpy)
    if abs(float(value)) > abs(bound):
        value = np.nextafter(value, np.zeros_like(value))
    return float(value)


@exporter("BitCast")
def bit_cast(ctx: ExportContext) -> None:
    if ctx.opset < 26:
        raise ctx.unsupported(f"BitCast in ONNX opset {ctx.opset} (ONNX defines it from opset 26)")
    ctx.emit1("BitCast", [ctx.input(0)], ctx.out(), to=onnx_type(ctx.attrs["destination_type"]))
