"""Elementwise ops with numpy broadcasting: arithmetic, comparison, logic and Select.

Every binary op takes ``auto_broadcast`` (``numpy`` or ``none``). Where the math is the same on every
array library the op carries its array-API kernel; Power and Mod, whose integer semantics numpy and XLA
reach differently, leave their kernels to each device, and numpy's Divide adds a check for integer
division by zero to the shared kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hetero_sdk.array_api import namespace
from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import BOOL, LOWER_STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import INTEGRAL_TYPES, NUMERIC_TYPES, broadcast, expect_same_types

__all__ = [
    "AUTO_BROADCAST", "BINARY_OPS", "BITWISE_NOT", "INTEGER_OR_BOOLEAN", "LOGICAL_NOT", "SELECT", "add",
    "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "divide", "divide_values", "equal", "floor_mod", "greater", "greater_equal", "less", "less_equal",
    "logical_and", "logical_not", "logical_or", "maximum", "minimum", "mod", "multiply", "not_equal", "power",
    "select", "squared_difference", "subtract",
]  # fmt: skip

BOOLEAN = frozenset({Type.boolean})
INTEGER_OR_BOOLEAN = INTEGRAL_TYPES | {Type.boolean}
"""The element types of the bitwise ops (booleans: logical and, or, xor, not)."""

AUTO_BROADCAST = Attr(
    "auto_broadcast", LOWER_STRING, "numpy", ("numpy", "none"), "numpy broadcasting, or 'none' for equal shapes"
)
"""The broadcasting attribute every elementwise op shares."""


def _infer_binary(result_type: Type | None) -> Callable[[Node], list[OutputSpec]]:
    def infer(node: Node) -> list[OutputSpec]:
        element_type = expect_same_types(node, 0, 1)
        a, b = node.input_value(0).partial_shape, node.input_value(1).partial_shape
        return [(result_type or element_type, broadcast(node, a, b, node.attrs["auto_broadcast"]))]

    return infer


def _array_api(function: str) -> Callable[..., Any]:
    """The kernel calling the array API function ``function`` on the op's inputs."""

    def evaluate(node: Node, *inputs: Any) -> Any:
        return getattr(namespace(*inputs), function)(*inputs)

    evaluate.__qualname__ = f"evaluate_{function}"
    return evaluate


def divide_values(node: Node, a: Any, b: Any) -> Any:
    """Divide's kernel: true division for reals; for integers floor division (``python_division``) or
    division toward zero, exactly (``a / b`` in float64 is not)."""
    xp = namespace(a, b)
    if not Type.of(a.dtype).is_integral:
        return xp.divide(a, b)
    quotient = xp.floor_divide(a, b)
    if node.attrs["python_division"]:
        return quotient
    inexact = (xp.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return xp.where(inexact, quotient + 1, quotient)


def _squared_difference(node: Node, a: Any, b: Any) -> Any:
    difference = a - b
    return difference * difference


def _shift(function: str) -> Callable[..., Any]:
    """A shift kernel: shift counts at or past the type's width give 0 (and -1 for negative values
    shifted right), the same on every array library."""

    def evaluate(node: Node, a: Any, b: Any) -> Any:
        xp = namespace(a, b)
        bits = a.dtype.itemsize * 8
        past = (b >= bits) | (b < 0)
        shifted = getattr(xp, function)(a, xp.where(past, xp.zeros_like(b), b))
        fill = xp.where(a < 0, -1, 0) if function == "bitwise_right_shift" else 0
        return xp.where(past, xp.astype(xp.asarray(fill), a.dtype), shifted)

    evaluate.__qualname__ = f"evaluate_{function}"
    return evaluate


def _binary_def(
    type_name: str,
    operand_types: frozenset[Type] | None,
    result_type: Type | None,
    evaluate: Callable[..., Any] | None,
    doc: str,
    *extra_attrs: Attr,
    version: str = "opset1",
) -> OpDef:
    return define(
        OpDef(
            type_name,
            "elementwise",
            _infer_binary(result_type),
            inputs=(Input(types=operand_types), Input(types=operand_types)),
            attrs=(AUTO_BROADCAST, *extra_attrs),
            version=version,
            evaluate=evaluate,
            doc=doc,
        )
    )


_ARITHMETIC = {
    "Add": ("add", "a + b"),
    "Subtract": ("subtract", "a - b"),
    "Multiply": ("multiply", "a * b"),
    "Maximum": ("maximum", "the larger of a and b"),
    "Minimum": ("minimum", "the smaller of a and b"),
}
_COMPARISON = {
    "Equal": ("equal", "a == b"),
    "NotEqual": ("not_equal", "a != b"),
    "Less": ("less", "a < b"),
    "LessEqual": ("less_equal", "a <= b"),
    "Greater": ("greater", "a > b"),
    "GreaterEqual": ("greater_equal", "a >= b"),
}
_LOGICAL = {"LogicalAnd": ("logical_and", "a and b"), "LogicalOr": ("logical_or", "a or b")}
_BITWISE = {
    "BitwiseAnd": ("bitwise_and", "a & b, bit by bit"),
    "BitwiseOr": ("bitwise_or", "a | b, bit by bit"),
    "BitwiseXor": ("bitwise_xor", "a ^ b, bit by bit"),
}
_SHIFTS = {
    "BitwiseLeftShift": ("bitwise_left_shift", "a << b; 0 where b is negative or at least a's width in bits"),
    "BitwiseRightShift": (
        "bitwise_right_shift",
        "a >> b (arithmetic for signed a); where b is negative or at least a's width, 0 (or -1 for negative a)",
    ),
}

BINARY_OPS: dict[str, OpDef] = {
    **{t: _binary_def(t, NUMERIC_TYPES, None, _array_api(f), doc) for t, (f, doc) in _ARITHMETIC.items()},
    **{
        t: _binary_def(t, None, Type.boolean, _array_api(f), f"{doc}, as boolean")
        for t, (f, doc) in _COMPARISON.items()
    },
    **{t: _binary_def(t, BOOLEAN, Type.boolean, _array_api(f), doc) for t, (f, doc) in _LOGICAL.items()},
    **{
        t: _binary_def(t, INTEGER_OR_BOOLEAN, None, _array_api(f), doc, version="opset13")
        for t, (f, doc) in _BITWISE.items()
    },
    **{t: _binary_def(t, INTEGRAL_TYPES, None, _shift(f), doc, version="opset15") for t, (f, doc) in _SHIFTS.items()},
    "SquaredDifference": _binary_def("SquaredDifference", NUMERIC_TYPES, None, _squared_difference, "(a - b) ** 2"),
    "Divide": _binary_def(
        "Divide",
        NUMERIC_TYPES,
        None,
        divide_values,
        "a / b; integers round toward -inf with python_division, else toward zero",
        Attr("python_division", BOOL, True, doc="integer division rounds toward -inf (True) or zero"),
    ),
    "Power": _binary_def("Power", NUMERIC_TYPES, None, None, "a ** b"),
    "Mod": _binary_def("Mod", NUMERIC_TYPES, None, None, "the truncated remainder, with the sign of a"),
    "FloorMod": _binary_def("FloorMod", NUMERIC_TYPES, None, _array_api("remainder"), "a - floor(a / b) * b"),
}
"""The binary elementwise ops by type name."""


def _infer_logical_not(node: Node) -> list[OutputSpec]:
    return [(Type.boolean, node.input_value(0).partial_shape)]


def _infer_same_as_input(node: Node) -> list[OutputSpec]:
    source = node.input_value(0)
    return [(source.element_type, source.partial_shape)]


def _infer_select(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 1, 2)
    mode = node.attrs["auto_broadcast"]
    shapes = [node.input_value(i).partial_shape for i in range(3)]
    return [(element_type, broadcast(node, broadcast(node, shapes[1], shapes[2], mode), shapes[0], mode))]


LOGICAL_NOT = define(
    OpDef(
        "LogicalNot",
        "elementwise",
        _infer_logical_not,
        inputs=(Input(types=BOOLEAN),),
        evaluate=_array_api("logical_not"),
        doc="not a",
    )
)
BITWISE_NOT = define(
    OpDef(
        "BitwiseNot",
        "elementwise",
        _infer_same_as_input,
        inputs=(Input(types=INTEGER_OR_BOOLEAN),),
        version="opset13",
        evaluate=_array_api("bitwise_invert"),
        doc="~a, bit by bit (not a for booleans)",
    )
)
SELECT = define(
    OpDef(
        "Select",
        "elementwise",
        _infer_select,
        inputs=(Input("condition", BOOLEAN), Input("then"), Input("else")),
        attrs=(AUTO_BROADCAST,),
        evaluate=lambda node, cond, then, otherwise: namespace(then, otherwise).where(cond, then, otherwise),
        doc="then where condition is true, else else; all three broadcast together",
    )
)


def _binary(op: OpDef, a: Any, b: Any, auto_broadcast: str, name: str | None, **attrs: Any) -> Node:
    left = a if not isinstance(a, (int, float)) else None
    right = as_output(b, like=as_output(left) if left is not None else None)
    return Node(op, [as_output(a, like=right), right], {"auto_broadcast": auto_broadcast, **attrs}, name)


def add(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a + b`` (``Add``). :param auto_broadcast: ``numpy`` or ``none``."""
    return _binary(BINARY_OPS["Add"], a, b, auto_broadcast, name)


def subtract(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a - b`` (``Subtract``)."""
    return _binary(BINARY_OPS["Subtract"], a, b, auto_broadcast, name)


def multiply(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a * b`` (``Multiply``)."""
    return _binary(BINARY_OPS["Multiply"], a, b, auto_broadcast, name)


def divide(
    a: Any, b: Any, auto_broadcast: str = "numpy", python_division: bool = True, name: str | None = None
) -> Node:
    """``a / b`` (``Divide``). Integers round toward -inf with ``python_division``, else toward zero."""
    return _binary(BINARY_OPS["Divide"], a, b, auto_broadcast, name, python_division=python_division)


def power(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a ** b`` (``Power``)."""
    return _binary(BINARY_OPS["Power"], a, b, auto_broadcast, name)


def maximum(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """Elementwise maximum (``Maximum``)."""
    return _binary(BINARY_OPS["Maximum"], a, b, auto_broadcast, name)


def minimum(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """Elementwise minimum (``Minimum``)."""
    return _binary(BINARY_OPS["Minimum"], a, b, auto_broadcast, name)


def squared_difference(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``(a - b) ** 2`` (``SquaredDifference``)."""
    return _binary(BINARY_OPS["SquaredDifference"], a, b, auto_broadcast, name)


def mod(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """Truncated remainder, with the sign of the dividend (``Mod``)."""
    return _binary(BINARY_OPS["Mod"], a, b, auto_broadcast, name)


def floor_mod(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """Floored remainder, with the sign of the divisor, as Python's ``%`` (``FloorMod``)."""
    return _binary(BINARY_OPS["FloorMod"], a, b, auto_broadcast, name)


def equal(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a == b`` as boolean (``Equal``)."""
    return _binary(BINARY_OPS["Equal"], a, b, auto_broadcast, name)


def not_equal(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a != b`` as boolean (``NotEqual``)."""
    return _binary(BINARY_OPS["NotEqual"], a, b, auto_broadcast, name)


def less(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a < b`` as boolean (``Less``)."""
    return _binary(BINARY_OPS["Less"], a, b, auto_broadcast, name)


def less_equal(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a <= b`` as boolean (``LessEqual``)."""
    return _binary(BINARY_OPS["LessEqual"], a, b, auto_broadcast, name)


def greater(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a > b`` as boolean (``Greater``)."""
    return _binary(BINARY_OPS["Greater"], a, b, auto_broadcast, name)


def greater_equal(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a >= b`` as boolean (``GreaterEqual``)."""
    return _binary(BINARY_OPS["GreaterEqual"], a, b, auto_broadcast, name)


def logical_and(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """Boolean and (``LogicalAnd``)."""
    return _binary(BINARY_OPS["LogicalAnd"], a, b, auto_broadcast, name)


def logical_or(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """Boolean or (``LogicalOr``)."""
    return _binary(BINARY_OPS["LogicalOr"], a, b, auto_broadcast, name)


def logical_not(a: Any, name: str | None = None) -> Node:
    """Boolean not (``LogicalNot``)."""
    return Node(LOGICAL_NOT, [as_output(a)], {}, name)


def select(cond: Any, then: Any, else_: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``then`` where ``cond`` is true, else ``else_`` (``Select``), all three broadcast together."""
    if isinstance(then, (int, float)) and not isinstance(else_, (int, float)):
        else_out = as_output(else_)
        then_out = as_output(then, like=else_out)
    else:
        then_out = as_output(then)
        else_out = as_output(else_, like=then_out)
    return Node(SELECT, [as_output(cond), then_out, else_out], {"auto_broadcast": auto_broadcast}, name)


def bitwise_and(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a & b`` bit by bit, or logical and for booleans (``BitwiseAnd``, opset13)."""
    return _binary(BINARY_OPS["BitwiseAnd"], a, b, auto_broadcast, name)


def bitwise_or(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a | b`` bit by bit, or logical or for booleans (``BitwiseOr``, opset13)."""
    return _binary(BINARY_OPS["BitwiseOr"], a, b, auto_broadcast, name)


def bitwise_xor(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a ^ b`` bit by bit, or logical xor for booleans (``BitwiseXor``, opset13)."""
    return _binary(BINARY_OPS["BitwiseXor"], a, b, auto_broadcast, name)


def bitwise_left_shift(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a << b`` (``BitwiseLeftShift``, opset15); 0 where ``b`` is negative or past the width."""
    return _binary(BINARY_OPS["BitwiseLeftShift"], a, b, auto_broadcast, name)


def bitwise_right_shift(a: Any, b: Any, auto_broadcast: str = "numpy", name: str | None = None) -> Node:
    """``a >> b``, arithmetic for signed types (``BitwiseRightShift``, opset15)."""
    return _binary(BINARY_OPS["BitwiseRightShift"], a, b, auto_broadcast, name)


def bitwise_not(a: Any, name: str | None = None) -> Node:
    """``~a`` bit by bit, or logical not for booleans (``BitwiseNot``, opset13)."""
    return Node(BITWISE_NOT, [as_output(a)], {}, name)
