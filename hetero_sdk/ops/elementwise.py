"""Elementwise ops with numpy broadcasting: arithmetic, comparison, logic and Select."""

from __future__ import annotations

from typing import Any

from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.ops.checks import NUMERIC_TYPES, broadcast, expect_inputs, expect_same_types, expect_type
from hetero_sdk.ops.registry import OutputSpec, as_output, register_op

__all__ = [
    "add", "divide", "equal", "greater", "greater_equal", "less", "less_equal", "logical_and",
    "logical_not", "logical_or", "maximum", "minimum", "mod", "multiply", "not_equal", "power",
    "select", "squared_difference", "subtract",
]  # fmt: skip

ARITHMETIC = ("Add", "Subtract", "Multiply", "Divide", "Power", "Maximum", "Minimum", "SquaredDifference", "Mod")
COMPARISON = ("Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual")
LOGICAL = ("LogicalAnd", "LogicalOr")


def _binary(type_name: str, a: Any, b: Any, auto_broadcast: str, name: str | None, **attrs: Any) -> Node:
    left = a if not isinstance(a, (int, float)) else None
    right = as_output(b, like=as_output(left) if left is not None else None)
    return Node(type_name, [as_output(a, like=right), right], {"auto_broadcast": auto_broadcast, **attrs}, name)


def add(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a + b`` (``Add``). :param auto_broadcast: ``numpy`` or ``none``."""
    return _binary("Add", a, b, auto_broadcast, name)


def subtract(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a - b`` (``Subtract``)."""
    return _binary("Subtract", a, b, auto_broadcast, name)


def multiply(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a * b`` (``Multiply``)."""
    return _binary("Multiply", a, b, auto_broadcast, name)


def divide(
    a: Any, b: Any, auto_broadcast: str = "numpy", python_division: bool = True, name: str | None = None
) -> Node:
    """``a / b`` (``Divide``). Integers round toward -inf with ``python_division``, else toward zero."""
    return _binary("Divide", a, b, auto_broadcast, name, python_division=python_division)


def power(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a ** b`` (``Power``)."""
    return _binary("Power", a, b, auto_broadcast, name)


def maximum(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """Elementwise maximum (``Maximum``)."""
    return _binary("Maximum", a, b, auto_broadcast, name)


def minimum(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """Elementwise minimum (``Minimum``)."""
    return _binary("Minimum", a, b, auto_broadcast, name)


def squared_difference(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``(a - b) ** 2`` (``SquaredDifference``)."""
    return _binary("SquaredDifference", a, b, auto_broadcast, name)


def mod(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """Truncated remainder, with the sign of the dividend (``Mod``)."""
    return _binary("Mod", a, b, auto_broadcast, name)


def equal(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a == b`` as boolean (``Equal``)."""
    return _binary("Equal", a, b, auto_broadcast, name)


def not_equal(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a != b`` as boolean (``NotEqual``)."""
    return _binary("NotEqual", a, b, auto_broadcast, name)


def less(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a < b`` as boolean (``Less``)."""
    return _binary("Less", a, b, auto_broadcast, name)


def less_equal(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a <= b`` as boolean (``LessEqual``)."""
    return _binary("LessEqual", a, b, auto_broadcast, name)


def greater(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a > b`` as boolean (``Greater``)."""
    return _binary("Greater", a, b, auto_broadcast, name)


def greater_equal(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a >= b`` as boolean (``GreaterEqual``)."""
    return _binary("GreaterEqual", a, b, auto_broadcast, name)


def logical_and(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """Boolean and (``LogicalAnd``)."""
    return _binary("LogicalAnd", a, b, auto_broadcast, name)


def logical_or(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """Boolean or (``LogicalOr``)."""
    return _binary("LogicalOr", a, b, auto_broadcast, name)


def logical_not(a: Any, name: str | None = None) -> Node:
    """Boolean not (``LogicalNot``)."""
    return Node("LogicalNot", [as_output(a)], {}, name)


def select(cond: Any, then: Any, else_: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``then`` where ``cond`` is true, else ``else_`` (``Select``), all three broadcast together."""
    if isinstance(then, (int, float)) and not isinstance(else_, (int, float)):
        else_out = as_output(else_)
        then_out = as_output(then, like=else_out)
    else:
        then_out = as_output(then)
        else_out = as_output(else_, like=then_out)
    return Node("Select", [as_output(cond), then_out, else_out], {"auto_broadcast": auto_broadcast}, name)


def _infer_binary(node: Node, result_type: Type | None, allowed: frozenset[Type] | None) -> list[OutputSpec]:
    expect_inputs(node, 2)
    element_type = expect_same_types(node, 0, 1)
    if allowed is not None:
        expect_type(node, 0, allowed)
    a, b = node.input_value(0).partial_shape, node.input_value(1).partial_shape
    shape = broadcast(node, a, b, node.attrs.setdefault("auto_broadcast", "numpy"))
    return [(result_type or element_type, shape)]


for _type_name in ARITHMETIC:
    register_op(_type_name, "elementwise")(lambda node: _infer_binary(node, None, NUMERIC_TYPES))
for _type_name in COMPARISON:
    register_op(_type_name, "elementwise")(lambda node: _infer_binary(node, Type.boolean, None))
for _type_name in LOGICAL:
    register_op(_type_name, "elementwise")(lambda node: _infer_binary(node, Type.boolean, frozenset({Type.boolean})))


@register_op("LogicalNot", "elementwise")
def _logical_not(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 1)
    expect_type(node, 0, {Type.boolean})
    return [(Type.boolean, node.input_value(0).partial_shape)]


@register_op("Select", "elementwise")
def _select(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 3)
    expect_type(node, 0, {Type.boolean}, "condition")
    element_type = expect_same_types(node, 1, 2)
    mode = node.attrs.setdefault("auto_broadcast", "numpy")
    shapes = [node.input_value(i).partial_shape for i in range(3)]
    shape = broadcast(node, broadcast(node, shapes[1], shapes[2], mode), shapes[0], mode)
    return [(element_type, shape)]
