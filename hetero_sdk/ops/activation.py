"""Unary elementwise math and activations: Relu, Sigmoid, Exp, Gelu, Clamp, Floor, Sin..."""

from __future__ import annotations

from typing import Any

from hetero_sdk.graph.node import Node
from hetero_sdk.ops.checks import NUMERIC_TYPES, REAL_TYPES, expect_attr, expect_inputs, expect_type
from hetero_sdk.ops.registry import OutputSpec, as_output, register_op

__all__ = [
    "abs", "ceiling", "clamp", "cos", "erf", "exp", "floor", "gelu", "hswish", "log", "negative", "relu",
    "sigmoid", "sin", "sqrt", "swish", "tanh",
]  # fmt: skip

# Ops that accept integers too; the rest need real (floating-point) inputs.
NUMERIC_UNARY = ("Relu", "Abs", "Negative")
REAL_UNARY = ("Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Erf", "HSwish", "Floor", "Ceiling", "Sin", "Cos")


def _unary(type_name: str, data: Any, name: str | None, **attrs: Any) -> Node:
    return Node(type_name, [as_output(data)], attrs, name)


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
    return _unary("Gelu", data, name, approximation_mode=approximation_mode.upper())


def swish(data: Any, beta: Any = None, name: str | None = None) -> Node:
    """``x * sigmoid(beta * x)`` (``Swish``); ``beta`` is an optional scalar input, 1.0 by default."""
    inputs = [as_output(data)]
    if beta is not None:
        inputs.append(as_output(beta, like=inputs[0]))
    return Node("Swish", inputs, {}, name)


def hswish(data: Any, name: str | None = None) -> Node:
    """``x * min(max(x + 3, 0), 6) / 6`` (``HSwish``)."""
    return _unary("HSwish", data, name)


def clamp(data: Any, min_value: float, max_value: float, name: str | None = None) -> Node:
    """Clips values to ``[min_value, max_value]`` (``Clamp``)."""
    return _unary("Clamp", data, name, min=float(min_value), max=float(max_value))


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


def _same_as_input(node: Node, allowed: frozenset[Any]) -> list[OutputSpec]:
    expect_inputs(node, 1)
    element_type = expect_type(node, 0, allowed)
    return [(element_type, node.input_value(0).partial_shape)]


for _type_name in NUMERIC_UNARY:
    register_op(_type_name, "activation")(lambda node: _same_as_input(node, NUMERIC_TYPES))
for _type_name in REAL_UNARY:
    register_op(_type_name, "activation")(lambda node: _same_as_input(node, REAL_TYPES))


@register_op("Gelu", "activation", "opset7")
def _gelu(node: Node) -> list[OutputSpec]:
    node.attrs.setdefault("approximation_mode", "ERF")
    expect_attr(node, "approximation_mode", ("ERF", "TANH"))
    return _same_as_input(node, REAL_TYPES)


@register_op("Swish", "activation", "opset4")
def _swish(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 1, 2)
    element_type = expect_type(node, 0, REAL_TYPES)
    if node.get_input_size() == 2:
        beta = node.input_value(1)
        scalar = beta.partial_shape.dims in ((), (1,), (-1,))
        if beta.element_type != element_type or not scalar:
            raise node.error(
                f"beta must be a scalar of type {element_type.value}, got {beta.element_type.value}{beta.partial_shape}"
            )
    return [(element_type, node.input_value(0).partial_shape)]


@register_op("Clamp", "activation")
def _clamp(node: Node) -> list[OutputSpec]:
    low, high = node.attrs.get("min"), node.attrs.get("max")
    if not isinstance(low, (int, float)) or not isinstance(high, (int, float)) or low > high:
        raise node.error(f"attributes min={low!r} and max={high!r} must be numbers with min <= max")
    return _same_as_input(node, NUMERIC_TYPES)
