"""Unary elementwise math and activations: Relu, Sigmoid, Exp, Gelu, Clamp, Floor, Sin, HardSigmoid, IsNaN...

16-bit floats (f16, bf16) are computed in f32 and rounded back, as reference backends do. Every op
but Erf and Gelu carries its array-API kernel; Erf and Gelu (``ERF`` mode) need an error function,
which the array API lacks, so numpy and XLA each compute it their own way.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from hetero_sdk.array_api import namespace, widened
from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import FLOAT, LOWER_STRING, STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import NUMERIC_TYPES, REAL_TYPES, expect_same_types

__all__ = [
    "CLAMP", "GELU", "HARD_SIGMOID", "IS_NAN", "ROUND", "SWISH", "UNARY_OPS", "abs", "acos", "acosh", "asin", "asinh",
    "atan", "atanh", "ceiling", "clamp", "cos", "cosh", "erf", "exp", "floor", "gelu", "gelu_tanh", "hard_sigmoid",
    "hswish", "is_nan", "log", "negative", "relu", "round", "sigmoid", "sign", "sin", "sinh", "sqrt", "swish", "tan",
    "tanh",
]  # fmt: skip


def _same_as_input(node: Node) -> list[OutputSpec]:
    source = node.input_value(0)
    return [(source.element_type, source.partial_shape)]


def _unary_def(
    type_name: str, types: frozenset[Type], evaluate: Callable[..., Any] | None, doc: str, *attrs: Attr,
    version: str = "opset1",
) -> OpDef:  # fmt: skip
    inputs = (Input(types=types),)
    return define(OpDef(type_name, "activation", _same_as_input, inputs, attrs, version, evaluate, doc=doc))


def _math(function: str) -> Callable[..., Any]:
    """The kernel applying the array API function ``function``, in f32 for 16-bit floats."""

    def evaluate(node: Node, x: Any) -> Any:
        return getattr(namespace(x), function)(widened(x))

    evaluate.__qualname__ = f"evaluate_{function}"
    return evaluate


def _sigmoid(x: Any) -> Any:
    return 1 / (1 + namespace(x).exp(-x))


def _relu(node: Node, x: Any) -> Any:
    return namespace(x).maximum(x, 0)


def _hswish(node: Node, x: Any) -> Any:
    x = widened(x)
    return x * namespace(x).clip(x + 3, 0, 6) / 6


def gelu_tanh(x: Any) -> Any:
    """Gelu's tanh approximation (without pow: it keeps the input's precision)."""
    return 0.5 * x * (1 + namespace(x).tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * (x * x * x))))


def _swish(node: Node, x: Any, beta: Any = None) -> Any:
    x = widened(x)
    scaled = x if beta is None else namespace(x).astype(namespace(x).reshape(beta, ()), x.dtype) * x
    return x * _sigmoid(scaled)


def _clamp(node: Node, x: Any) -> Any:
    low, high = node.attrs["min"], node.attrs["max"]
    if Type.of(x.dtype).is_integral:  # bounds round inward, then saturate at the type's limits
        lowest, highest = _integer_limits(x.dtype)
        low = lowest if low < lowest else min(math.ceil(low), highest)  # an infinite bound saturates too
        high = highest if high > highest else max(math.floor(high), lowest)
    return namespace(x).clip(x, low, high)


def _integer_limits(dtype: Any) -> tuple[int, int]:

    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _round(node: Node, x: Any) -> Any:
    xp = namespace(x)
    if Type.of(x.dtype).is_integral:
        return x
    x = widened(x)
    if node.attrs["mode"] == "half_to_even":
        return xp.round(x)  # the array API rounds halves to even
    return xp.sign(x) * xp.floor(xp.abs(x) + 0.5)


def _infer_swish(node: Node) -> list[OutputSpec]:
    element_type = node.input_value(0).element_type
    if node.get_input_size() == 2:
        beta = node.input_value(1)
        scalar = beta.partial_shape.dims in ((), (1,), (-1,))
        if beta.element_type != element_type or not scalar:
            raise node.error(
                f"beta must be a scalar of type {element_type.value}, got {beta.element_type.value}{beta.partial_shape}"
            )
    return _same_as_input(node)


def _infer_clamp(node: Node) -> list[OutputSpec]:
    low, high = node.attrs["min"], node.attrs["max"]
    if low > high:
        raise node.error(f"attributes min={low!r} and max={high!r} must be numbers with min <= max")
    return _same_as_input(node)


_NUMERIC = {
    "Relu": (_relu, "max(x, 0)"),
    "Abs": (_math("abs"), "the absolute value"),
    "Negative": (_math("negative"), "-x"),
    "Sign": (_math("sign"), "-1, 0 or 1 as x is negative, zero or positive (NaN stays NaN)"),
}
_REAL = {
    "Sigmoid": (lambda node, x: _sigmoid(widened(x)), "1 / (1 + exp(-x))"),
    "Tanh": (_math("tanh"), "hyperbolic tangent"),
    "Exp": (_math("exp"), "e ** x"),
    "Log": (_math("log"), "natural logarithm"),
    "Sqrt": (_math("sqrt"), "square root"),
    "Erf": (None, "the Gauss error function"),
    "HSwish": (_hswish, "x * min(max(x + 3, 0), 6) / 6"),
    "Floor": (_math("floor"), "round toward -inf"),
    "Ceiling": (_math("ceil"), "round toward +inf"),
    "Sin": (_math("sin"), "sine"),
    "Cos": (_math("cos"), "cosine"),
    "Tan": (_math("tan"), "tangent"),
    "Asin": (_math("asin"), "inverse sine; NaN outside [-1, 1]"),
    "Acos": (_math("acos"), "inverse cosine; NaN outside [-1, 1]"),
    "Atan": (_math("atan"), "inverse tangent"),
    "Sinh": (_math("sinh"), "hyperbolic sine"),
    "Cosh": (_math("cosh"), "hyperbolic cosine"),
    "Asinh": (_math("asinh"), "inverse hyperbolic sine"),
    "Acosh": (_math("acosh"), "inverse hyperbolic cosine; NaN below 1"),
    "Atanh": (_math("atanh"), "inverse hyperbolic tangent; NaN outside [-1, 1], infinite at -1 and 1"),
}
_OPSET3 = frozenset({"Asinh", "Acosh", "Atanh"})

UNARY_OPS: dict[str, OpDef] = {
    **{t: _unary_def(t, NUMERIC_TYPES, fn, doc) for t, (fn, doc) in _NUMERIC.items()},
    **{
        t: _unary_def(t, REAL_TYPES, fn, doc, version="opset3" if t in _OPSET3 else "opset1")
        for t, (fn, doc) in _REAL.items()
    },
}
"""The one-input activations without attributes, by type name."""

GELU = _unary_def(
    "Gelu", REAL_TYPES, None, "Gaussian error linear unit: x * Phi(x), exactly (ERF) or by tanh (TANH)",
    Attr("approximation_mode", STRING, "ERF", ("ERF", "TANH"), doc="exact (ERF) or the tanh approximation"),
    version="opset7",
)  # fmt: skip
ROUND = _unary_def(
    "Round", NUMERIC_TYPES, _round, "the nearest integer; halves to even or away from zero (integers unchanged)",
    Attr("mode", LOWER_STRING, "half_to_even", ("half_to_even", "half_away_from_zero"), doc="how halves round"),
    version="opset5",
)  # fmt: skip
SWISH = define(
    OpDef(
        "Swish",
        "activation",
        _infer_swish,
        inputs=(Input(types=REAL_TYPES), Input("beta", REAL_TYPES, optional=True, doc="a scalar, 1.0 by default")),
        version="opset4",
        evaluate=_swish,
        doc="x * sigmoid(beta * x)",
    )
)
CLAMP = define(
    OpDef(
        "Clamp",
        "activation",
        _infer_clamp,
        inputs=(Input(types=NUMERIC_TYPES),),
        attrs=(Attr("min", FLOAT, doc="the lower bound"), Attr("max", FLOAT, doc="the upper bound")),
        evaluate=_clamp,
        doc="Clips values to [min, max]; for integers the bounds round inward.",
    )
)


def _unary(type_name: str, data: Any, name: str | None, **attrs: Any) -> Node:
    return Node(UNARY_OPS[type_name], [as_output(data)], attrs, name)


def relu(data: Any, name: str | None = None) -> Node:
    """``max(x, 0)`` (``Relu``)."""
    return _unary("Relu", data, name)


def sigmoid(data: Any, name: str | None = None) -> Node:
    """``1 / (1 + exp(-x))`` (``Sigmoid``)."""
    return _unary("Sigmoid", data, name)


def tanh(data: Any, name: str | None = None) -> Node:
    """Hyperbolic tangent (``Tanh``)."""
    return _unary("Tanh", data, name)


def exp(data: Any, name: str | None = None) -> Node:
    """``e ** x`` (``Exp``)."""
    return _unary("Exp", data, name)


def log(data: Any, name: str | None = None) -> Node:
    """Natural logarithm (``Log``)."""
    return _unary("Log", data, name)


def sqrt(data: Any, name: str | None = None) -> Node:
    """Square root (``Sqrt``)."""
    return _unary("Sqrt", data, name)


def abs(data: Any, name: str | None = None) -> Node:  # noqa: A001  (OpenVINO's opset name)
    """Absolute value (``Abs``)."""
    return _unary("Abs", data, name)


def negative(data: Any, name: str | None = None) -> Node:
    """``-x`` (``Negative``)."""
    return _unary("Negative", data, name)


def erf(data: Any, name: str | None = None) -> Node:
    """The Gauss error function (``Erf``)."""
    return _unary("Erf", data, name)


def gelu(data: Any, approximation_mode: str = "ERF", name: str | None = None) -> Node:
    """Gaussian error linear unit (``Gelu``, opset7).

    :param approximation_mode: ``ERF`` (exact) or ``TANH`` (the tanh approximation).
    """
    return Node(GELU, [as_output(data)], {"approximation_mode": approximation_mode.upper()}, name)


def swish(data: Any, beta: Any = None, name: str | None = None) -> Node:
    """``x * sigmoid(beta * x)`` (``Swish``); ``beta`` is an optional scalar input, 1.0 by default."""
    inputs = [as_output(data)]
    if beta is not None:
        inputs.append(as_output(beta, like=inputs[0]))
    return Node(SWISH, inputs, {}, name)


def hswish(data: Any, name: str | None = None) -> Node:
    """``x * min(max(x + 3, 0), 6) / 6`` (``HSwish``)."""
    return _unary("HSwish", data, name)


def clamp(data: Any, min_value: float, max_value: float, name: str | None = None) -> Node:
    """Clips values to ``[min_value, max_value]`` (``Clamp``)."""
    return Node(CLAMP, [as_output(data)], {"min": min_value, "max": max_value}, name)


def floor(data: Any, name: str | None = None) -> Node:
    """Round toward -inf (``Floor``)."""
    return _unary("Floor", data, name)


def ceiling(data: Any, name: str | None = None) -> Node:
    """Round toward +inf (``Ceiling``, OpenVINO's name for Ceil)."""
    return _unary("Ceiling", data, name)


def sin(data: Any, name: str | None = None) -> Node:
    """Sine (``Sin``)."""
    return _unary("Sin", data, name)


def cos(data: Any, name: str | None = None) -> Node:
    """Cosine (``Cos``)."""
    return _unary("Cos", data, name)


def tan(data: Any, name: str | None = None) -> Node:
    """Tangent (``Tan``)."""
    return _unary("Tan", data, name)


def asin(data: Any, name: str | None = None) -> Node:
    """Inverse sine; NaN outside [-1, 1] (``Asin``)."""
    return _unary("Asin", data, name)


def acos(data: Any, name: str | None = None) -> Node:
    """Inverse cosine; NaN outside [-1, 1] (``Acos``)."""
    return _unary("Acos", data, name)


def atan(data: Any, name: str | None = None) -> Node:
    """Inverse tangent (``Atan``)."""
    return _unary("Atan", data, name)


def sinh(data: Any, name: str | None = None) -> Node:
    """Hyperbolic sine (``Sinh``)."""
    return _unary("Sinh", data, name)


def cosh(data: Any, name: str | None = None) -> Node:
    """Hyperbolic cosine (``Cosh``)."""
    return _unary("Cosh", data, name)


def asinh(data: Any, name: str | None = None) -> Node:
    """Inverse hyperbolic sine (``Asinh``)."""
    return _unary("Asinh", data, name)


def acosh(data: Any, name: str | None = None) -> Node:
    """Inverse hyperbolic cosine; NaN below 1 (``Acosh``)."""
    return _unary("Acosh", data, name)


def atanh(data: Any, name: str | None = None) -> Node:
    """Inverse hyperbolic tangent; NaN outside [-1, 1] (``Atanh``)."""
    return _unary("Atanh", data, name)


def sign(data: Any, name: str | None = None) -> Node:
    """-1, 0 or 1 as ``x`` is negative, zero or positive (``Sign``)."""
    return _unary("Sign", data, name)


def round(data: Any, mode: str = "half_to_even", name: str | None = None) -> Node:  # noqa: A001  (OpenVINO's name)
    """Round to the nearest integer (``Round``, opset5); integers pass unchanged.

    :param mode: ``half_to_even`` (banker's rounding, as numpy) or ``half_away_from_zero``.
    """
    return Node(ROUND, [as_output(data)], {"mode": mode}, name)


# -- HardSigmoid (opset1) and IsNaN (opset10), as OpenVINO writes them into IR files; one array-API kernel
# each for every device.


def hard_sigmoid(data: Any, alpha: Any, beta: Any, name: str | None = None) -> Node:
    """``max(0, min(1, alpha * x + beta))`` (``HardSigmoid``, opset1); ``alpha`` and ``beta`` are scalars."""
    return Node(HARD_SIGMOID, [as_output(data), as_output(alpha), as_output(beta)], {}, name)


def is_nan(data: Any, name: str | None = None) -> Node:
    """Whether each element is NaN (``IsNaN``, opset10): a boolean tensor of ``data``'s shape."""
    return Node(IS_NAN, [as_output(data)], {}, name)


def _infer_hard_sigmoid(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1, 2)
    for index in (1, 2):
        if node.input_value(index).partial_shape.rank > 1 or any(d > 1 for d in node.input_value(index).partial_shape):
            raise node.error(f"input {index} must be a scalar")
    return [(element_type, node.input_value(0).partial_shape)]


def _hard_sigmoid(node: Node, x: Any, alpha: Any, beta: Any) -> Any:
    xp = namespace(x)
    a, b = xp.reshape(alpha, ()), xp.reshape(beta, ())
    return xp.astype(xp.clip(a * x + b, 0.0, 1.0), x.dtype)


def _infer_is_nan(node: Node) -> list[OutputSpec]:
    return [(Type.boolean, node.input_value(0).partial_shape)]


def _is_nan(node: Node, x: Any) -> Any:
    return namespace(x).isnan(x)


HARD_SIGMOID = define(
    OpDef(
        "HardSigmoid",
        "activation",
        _infer_hard_sigmoid,
        inputs=(Input("data", REAL_TYPES), Input("alpha", REAL_TYPES), Input("beta", REAL_TYPES)),
        version="opset1",
        evaluate=_hard_sigmoid,
        doc="max(0, min(1, alpha * x + beta)).",
    )
)
IS_NAN = define(
    OpDef(
        "IsNaN",
        "activation",
        _infer_is_nan,
        inputs=(Input("data", REAL_TYPES),),
        version="opset10",
        evaluate=_is_nan,
        doc="Whether each element is NaN.",
    )
)
