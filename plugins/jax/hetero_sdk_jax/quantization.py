"""What XLA does to quantized models before lowering them: the int8 round trips folded into float ops.

The ONNX frontend translates QuantizeLinear, DequantizeLinear and the QLinear ops into their
definitions (``hetero_sdk/frontend/onnx/rules_quantization.py``; contrib's QLinear* the same way), so
between two float ops of a quantized model an activation goes

``Divide(x, s) -> Round(half to even) -> Add(zp) -> Clamp(lo, hi) -> Convert(u8) -> Convert(f32)
-> Subtract(zp) -> Multiply(s)``.

On XLA:CPU the two Converts (saturating, NaN to 0, poorly vectorised) and the zero-point Add and
Subtract cost more than the convolutions they sit between (PP-OCR cls in the QDQ format, one thread:
11.8 ms against the float model's 1.5 ms), and XLA:CPU's int8 convolutions are no way out: measured
30x-120x slower than f32 ones (``lax.conv_general_dilated`` with ``preferred_element_type=int32``,
MobileNet-sized layers), while its int8 dots are fast (the contrib MatMulIntegerToFloat lowering).
:class:`QuantizedRoundTripFolding` rewrites the round trip into the float ops that give the same
values: ``Clamp(Round(x / s), lo - zp, hi - zp)`` then ``* s``, with a NaN (which the Converts
would make level 0) mapped to level 0 as they do. Every value is an integer of at most 16 bits held
in f32, so the rewrite is exact: the folded model gives the values of the unfolded one (a zero level
may come out as -0.0 where the Converts gave +0.0).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from hetero_sdk import Model, Node, Output, Type, opset
from hetero_sdk.plugin import ConsumerMap, MatcherPass, constant_value, replace_node

__all__ = ["QuantizedRoundTripFolding", "holds_integers"]

_LEVELS = frozenset({Type.i8, Type.u8, Type.i16, Type.u16})
"""The integer types whose round trip through f32 is exact (every level is an f32 integer)."""


def _scalar(value: Output) -> float | None:
    """The value of a constant holding one number (any shape of one element), else None."""
    known = constant_value(value)
    if known is None or known.size != 1:
        return None
    return float(np.asarray(known, np.float64).reshape(-1)[0])


def holds_integers(value: Output) -> bool:
    """True when ``value`` holds integers only: a Round, or an Add of a Round and an integral constant."""
    node = value.node
    if node.type_name == "Round":
        return True
    if node.type_name != "Add":
        return False
    for index in (0, 1):
        offset = constant_value(node.input_value(1 - index))
        if node.input_value(index).node.type_name == "Round" and offset is not None:
            return bool(np.all(np.asarray(offset, np.float64) == np.round(np.asarray(offset, np.float64))))
    return False


def _zero_point_add(value: Output) -> tuple[Output, float] | None:
    """``(rounded, zp)`` when ``value`` is ``Add(rounded, zp)`` with ``zp`` one constant number."""
    node = value.node
    if node.type_name != "Add":
        return None
    for index in (0, 1):
        zero = _scalar(node.input_value(1 - index))
        if zero is not None and node.input_value(index).node.type_name == "Round":
            return node.input_value(index), zero
    return None


_MOVES = frozenset({"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Split", "VariadicSplit", "MaxPool", "Interpolate"})
"""Ops that move levels without computing new ones (MaxPool picks the largest, and the round trip's
maps are increasing; Interpolate in its nearest mode picks one): QOperator models split, reshape,
max-pool and upsample the uint8 levels themselves, and a round trip through one of them folds as if
the op came after it (the same op on the f32 value; :func:`_moves_only` says which of them qualify)."""


class QuantizedRoundTripFolding(MatcherPass):
    """Replaces ``Convert(f32)`` of ``Convert(int8)`` of ``Clamp(integers, lo, hi)`` (bounds inside the
    integer type) by the clamped value itself, NaN mapped to 0 as the Converts map it; and where the
    f32 value then loses its zero point again (``Subtract(that, zp)`` after ``Add(Round(...), zp)``,
    ``zp`` one number), the Add, Clamp and Subtract by one Clamp of the rounded value to
    ``[lo - zp, hi - zp]`` (NaN to ``-zp``). Exact (see the module's docstring); the integer Convert
    stays where something else reads it."""

    name = "QuantizedRoundTripFolding"
    anchors = ("Convert",)

    def apply(self, model: Model, node: Node, users: ConsumerMap) -> bool:
        if node.attrs["destination_type"] != Type.f32:
            return False
        levels = node.input_value(0)
        narrow = levels.node
        moved: list[Output] = []  # the levels as movement ops give them, last first (QOperator models)
        while narrow.type_name in _MOVES and levels.element_type in _LEVELS and _moves_only(narrow):
            moved.append(levels)
            levels = narrow.input_value(0)
            narrow = levels.node
        if narrow.type_name != "Convert" or levels.element_type not in _LEVELS:
            return False
        clamped = narrow.input_value(0)
        clamp = clamped.node
        if clamp.type_name != "Clamp" or clamped.element_type != Type.f32 or not holds_integers(clamp.input_value(0)):
            return False
        low, high = clamp.attrs["min"], clamp.attrs["max"]
        info = ml_dtypes.iinfo(levels.element_type.numpy)
        if not (info.min <= low <= high <= info.max and low == int(low) and high == int(high)):
            return False
        subtracts = [n for n in users.nodes(node.output(0)) if n.type_name == "Subtract"]
        shifted = _zero_point_add(clamp.input_value(0))
        if shifted is not None and len(subtracts) == users.count(node.output(0)):
            rounded, zero = shifted
            if all(n.input_value(0) == node.output(0) and _scalar(n.input_value(1)) == zero for n in subtracts):
                value = _moved(_nan_as(opset.clamp(rounded, low - zero, high - zero).output(0), -zero), moved)
                for subtract in subtracts:
                    replace_node(model, subtract, [value], consumers=users)
                return True
        replace_node(model, node, [_moved(_nan_as(clamped, 0.0), moved)], consumers=users)
        return True


def _moves_only(node: Node) -> bool:
    """Whether ``node`` (of :data:`_MOVES`) gives the same values on levels and on their f32 copy: a
    MaxPool whose every window holds a value (pads below the kernel; a window of padding alone gives
    the type's lowest value, which differs between u8 and f32), an unpadded nearest Interpolate."""
    if node.type_name == "Interpolate":  # nearest picks an input value; a pad adds zeros, not level 0
        attrs = node.attrs
        return attrs["mode"] == "nearest" and not any(attrs["pads_begin"]) and not any(attrs["pads_end"])
    if node.type_name != "MaxPool":
        return True
    attrs = node.attrs
    kernel = attrs["kernel_shape"]
    return attrs.get("auto_pad", "explicit") != "explicit" or all(
        b < k and e < k for b, e, k in zip(attrs["pads_begin"], attrs["pads_end"], kernel)
    )


def _moved(value: Output, moved: list[Output]) -> Output:
    """``value`` moved as the ops of ``moved`` (last first) moved the levels: the same ops on the f32 value."""
    for levels in reversed(moved):
        op = levels.node
        value = Node(op.op, [value, *op.input_values()[1:]], dict(op.attrs)).output(levels.index)
    return value


def _nan_as(value: Output, level: float) -> Output:
    """``value`` with NaN replaced by ``level`` (as Convert to an integer type makes NaN 0)."""
    fill = opset.constant(np.float32(level + 0.0)).output(0)  # + 0.0: a level of -0.0 is 0.0
    return opset.select(opset.is_nan(value), fill, value).output(0)
