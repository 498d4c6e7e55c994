"""Export rules of the elementwise and activation families: mostly one ONNX node each; the integer floor
division, the two remainders and Swish take a few, a HardSigmoid with alpha or beta computed is written out.
One table (``_SAME``) maps unary and binary ops alike, so the module holds both families."""

from __future__ import annotations

import math

import numpy as np

from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter

__all__: list[str] = []


@exporter("IsNaN")
def is_nan(ctx: ExportContext) -> None:
    ctx.emit1("IsNaN", [ctx.input(0)], ctx.out())


@exporter("HardSigmoid")
def hard_sigmoid(ctx: ExportContext) -> None:
    alpha, beta = ctx.constant(1), ctx.constant(2)
    if alpha is not None and beta is not None:
        ctx.emit1(
            "HardSigmoid", [ctx.input(0)], ctx.out(), alpha=float(alpha.reshape(())), beta=float(beta.reshape(()))
        )
        return
    scalar = ctx.const(np.zeros(0, np.int64), name="scalar")  # alpha and beta as scalars: x's shape is kept
    alpha_in, beta_in = (ctx.emit1("Reshape", [ctx.input(i), scalar]) for i in (1, 2))
    line = ctx.emit1("Add", [ctx.emit1("Mul", [ctx.input(0), alpha_in]), beta_in])
    element_type = ctx.element_type(0)
    zero, one = ctx.const(0, element_type, "zero"), ctx.const(1, element_type, "one")
    ctx.emit1("Max", [ctx.emit1("Min", [line, one]), zero], ctx.out())


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
