"""Op cases derived from the op definitions: element types from the declared input types, attribute
values from the declared choices, shapes that broadcast together, plus a small table of what a
definition cannot say (the values an op is defined on, how exactly devices must agree).

An op's cases are derived when its operands only need to broadcast together: an op of the
elementwise or activation family whose inputs are all required, none deciding output shapes, and
whose attributes are booleans, enumerations or have defaults. Every other op has a recipe
(:data:`~hetero_sdk.conformance.case_builder.RECIPES`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hetero_sdk.conformance.case_builder import BOOL, F16, F32, I32, Builder, OpCase
from hetero_sdk.element_type import Type
from hetero_sdk.graph import Node
from hetero_sdk.graph.op_def import BOOL as BOOL_ATTR
from hetero_sdk.graph.op_def import REQUIRED, OpDef

__all__ = ["SPECIAL_VALUES", "Values", "derivable", "derived_case", "derived_key_cases"]

_FAMILIES = ("elementwise", "activation")
_SCALAR_OPERANDS = frozenset({"HardSigmoid"})
"""Ops of those families whose later operands are scalars (alpha, beta), not tensors that broadcast."""
_DTYPES = {Type.f32: F32, Type.f16: F16, Type.i32: I32}
"""The element types cases are drawn in, when the op accepts them."""


@dataclass(frozen=True)
class Values:
    """What a definition cannot say about an op's cases.

    :ivar low: the smallest real value drawn (per input when a sequence).
    :ivar high: the largest real value drawn (per input when a sequence).
    :ivar integer_range: ``(low, high)`` for integer inputs.
    :ivar avoid: real values the last input keeps away from (a divisor's zero), by ``gap``.
    :ivar integer_avoid: ``(value, replacement)`` for the last input when integral.
    :ivar kind: how exactly devices must agree (see :func:`~hetero_sdk.conformance.compare.tolerance`).
    :ivar dtypes: the element types to draw, when narrower than the declared ones.
    :ivar whole: draw whole numbers even for real types (comparisons need equal pairs).
    """

    low: float | Sequence[float] = -3.0
    high: float | Sequence[float] = 3.0
    integer_range: tuple[int, int] = (-20, 20)
    avoid: tuple[float, ...] = ()
    gap: float = 0.25
    integer_avoid: tuple[int, int] | None = None
    kind: str = "simple"
    dtypes: tuple[type, ...] | None = None
    whole: bool = False


_ARITHMETIC = Values()
_EXACT_WHOLE = Values(low=-2, high=2, integer_range=(-2, 2), kind="exact", whole=True)

SPECIAL_VALUES: dict[str, Values] = {
    "Divide": Values(avoid=(0.0,), integer_avoid=(0, 1)),
    "Power": Values(low=(0.1, -2.0), high=(3.0, 2.0), kind="transcendental", dtypes=(F32, F16)),
    "Mod": Values(low=-6, high=6, avoid=(0.0,), gap=0.5, integer_avoid=(0, 3), dtypes=(F32, I32)),
    "FloorMod": Values(low=-6, high=6, avoid=(0.0,), gap=0.5, integer_avoid=(0, 3), dtypes=(F32, I32)),
    **dict.fromkeys(("Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"), _EXACT_WHOLE),
    **dict.fromkeys(("LogicalAnd", "LogicalOr", "LogicalNot", "Select"), Values(kind="exact")),
    "Sigmoid": Values(low=-6, high=6, kind="transcendental"),
    "Tanh": Values(low=-4, high=4, kind="transcendental"),
    "Exp": Values(low=-5, high=5, kind="transcendental"),
    "Log": Values(low=0.05, high=20, kind="transcendental"),
    "Sqrt": Values(low=0, high=20),
    "Erf": Values(kind="transcendental"),
    "Gelu": Values(low=-4, high=4, kind="transcendental"),
    "HSwish": Values(low=-5, high=5, kind="transcendental"),
    "Floor": Values(low=-5, high=5, kind="exact"),
    "Ceiling": Values(low=-5, high=5, kind="exact"),
    "Sin": Values(low=-6, high=6, kind="transcendental"),
    "Cos": Values(low=-6, high=6, kind="transcendental"),
    "Tan": Values(low=-1.4, high=1.4, kind="transcendental"),  # away from the poles at +-pi/2
    "Asin": Values(low=-1, high=1, kind="transcendental"),  # NaN outside [-1, 1]
    "Acos": Values(low=-1, high=1, kind="transcendental"),
    "Atan": Values(low=-6, high=6, kind="transcendental"),
    "Sinh": Values(low=-5, high=5, kind="transcendental"),
    "Cosh": Values(low=-5, high=5, kind="transcendental"),
    "Asinh": Values(low=-6, high=6, kind="transcendental"),
    "Acosh": Values(low=1, high=20, kind="transcendental"),  # NaN below 1
    "Atanh": Values(low=-0.95, high=0.95, kind="transcendental"),  # infinite at -1 and 1
    "Sign": Values(kind="exact"),
    "Round": Values(low=-5, high=5, kind="exact"),
    **dict.fromkeys(("BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"), Values(kind="exact")),
    # counts within the width of i32 (past it the kernels define the result: 0, or -1 shifting negatives right)
    **dict.fromkeys(("BitwiseLeftShift", "BitwiseRightShift"), Values(integer_range=(0, 31), kind="exact")),
}
"""Per op type, what its cases need beyond its definition; ops not listed draw :class:`Values`()."""


def derivable(op: OpDef) -> bool:
    """True when ``op``'s cases can be derived from its definition (see the module docstring)."""
    return (
        op.family in _FAMILIES
        and op.type_name not in _SCALAR_OPERANDS
        and bool(op.inputs)
        and all(not (i.optional or i.variadic or i.decides_shape) for i in op.inputs)
        and all(not a.required or a.choices or a.kind is BOOL_ATTR for a in op.attrs)
    )


def derived_case(b: Builder, op: OpDef) -> OpCase:
    """One drawn case of ``op``: a model of the op on Parameters and Constants, and its inputs."""
    special = SPECIAL_VALUES.get(op.type_name, _ARITHMETIC)
    dtype = b.pick(_dtypes(op, special))
    attrs = {a.name: b.pick(a.choices) if a.choices else b.flag() for a in op.attrs if a.choices or a.kind is BOOL_ATTR}
    shapes = _broadcasting_shapes(b, len(op.inputs), attrs.get("auto_broadcast", "numpy") == "none")
    return _built(b, op, special, dtype, attrs, shapes)


def derived_key_cases(op: OpDef) -> list[OpCase]:
    """One fixed case of ``op`` per element type its cases are drawn in, with the default attributes:
    ``[2, 3]`` and ``[3]`` operands of mixed signs. The ``ci`` profile draws the same few examples on
    every run, which favour the first type; these make every profile run each type's kernel (an
    integer Divide that truncates instead of flooring passed the drawn cases)."""
    special = SPECIAL_VALUES.get(op.type_name, _ARITHMETIC)
    cases = []
    for index, dtype in enumerate(_dtypes(op, special)):
        b = Builder.fixed(1000 + index)
        attrs = {
            a.name: a.default for a in op.attrs if (a.choices or a.kind is BOOL_ATTR) and a.default is not REQUIRED
        }
        attrs.update({a.name: a.choices[0] if a.choices else False for a in op.attrs if a.default is REQUIRED})
        shapes = [[2, 3], *([[3]] * (len(op.inputs) - 1))]
        if attrs.get("auto_broadcast", "numpy") == "none":
            shapes = [[2, 3]] * len(op.inputs)
        cases.append(_built(b, op, special, dtype, attrs, shapes, constants=False))
    return cases


def _built(
    b: Builder,
    op: OpDef,
    special: Values,
    dtype: type,
    attrs: dict[str, object],
    shapes: list[list[int]],
    constants: bool | None = None,
) -> OpCase:
    operands: list[Node] = []
    for index, (spec, shape) in enumerate(zip(op.inputs, shapes)):
        boolean = spec.types == frozenset({Type.boolean})
        values = b.values(shape, BOOL) if boolean else _values(b, shape, dtype, special, index, len(op.inputs))
        name = spec.name or ("x" if len(op.inputs) == 1 else "abcdefgh"[index])
        operands.append(b.input(values, name) if index == 0 else b.operand(values, name, constants))
    node = Node(op, [o.output(0) for o in operands], attrs, name="op")
    terms = len(op.inputs) if special.kind == "simple" else 1
    return b.case(op.type_name, node, special.kind, terms, **attrs)


def _dtypes(op: OpDef, special: Values) -> tuple[type, ...]:
    declared = [i.types for i in op.inputs if i.types != frozenset({Type.boolean})]
    if not declared:
        return (BOOL,)
    allowed = [dtype for t, dtype in _DTYPES.items() if all(types is None or t in types for types in declared)]
    if special.dtypes is not None:
        allowed = [d for d in allowed if d in special.dtypes]
    return tuple(allowed)


def _broadcasting_shapes(b: Builder, count: int, equal: bool) -> list[list[int]]:
    """``count`` shapes that broadcast by numpy rules (the full shape, and suffixes with some 1s),
    or ``count`` equal shapes."""
    full = b.shape(0, 4)
    if equal:
        return [list(full) for _ in range(count)]
    shapes = [full]
    for _ in range(count - 1):
        keep = b.integer(0, len(full))
        shapes.append([1 if b.integer(0, 3) == 0 else d for d in full[len(full) - keep :]])
    order = b.integer(0, count - 1)
    shapes[0], shapes[order] = shapes[order], shapes[0]
    return shapes


def _values(b: Builder, shape: list[int], dtype: type, special: Values, index: int, count: int) -> np.ndarray:
    low = special.low[index] if isinstance(special.low, Sequence) else special.low
    high = special.high[index] if isinstance(special.high, Sequence) else special.high
    divisor = index == count - 1 and count > 1
    if np.dtype(dtype).kind in "iu":
        values = b.values(shape, dtype, *special.integer_range)
        if divisor and special.integer_avoid is not None:
            bad, replacement = special.integer_avoid
            values = np.where(values == bad, replacement, values).astype(dtype)
        return values
    if special.whole:
        return b.values(shape, I32, low, high).astype(dtype)
    values = b.values(shape, dtype, low, high)
    return b.away_from(values, special.avoid, special.gap) if divisor and special.avoid else values
