"""Basic ops: Parameter, Constant, Result, Convert; and :func:`as_output`, which turns the values a
factory accepts (nodes, ports, arrays, Python numbers) into the ports the graph is built from."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any

import ml_dtypes
import numpy as np

from hetero_sdk.array_api import namespace
from hetero_sdk.element_type import Type
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.graph.node import Node, Output
from hetero_sdk.graph.op_def import ARRAY, ELEMENT_TYPE, PARTIAL_SHAPE, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.shape import PartialShape

__all__ = [
    "BIT_CAST", "CONSTANT", "CONVERT", "PARAMETER", "RESULT", "as_output", "as_outputs", "bit_cast", "constant",
    "convert", "integer_saturation", "parameter", "result",
]  # fmt: skip


def _infer_parameter(node: Node) -> list[OutputSpec]:
    return [(node.attrs["element_type"], node.attrs["shape"])]


def _infer_constant(node: Node) -> list[OutputSpec]:
    value = node.attrs["value"]
    try:
        element_type = Type.of(value.dtype)
    except TypeError as exc:
        raise node.error(str(exc)) from None
    return [(element_type, PartialShape(value.shape))]


def _infer_same_as_input(node: Node) -> list[OutputSpec]:
    source = node.input_value(0)
    return [(source.element_type, source.partial_shape)]


def _infer_convert(node: Node) -> list[OutputSpec]:
    return [(node.attrs["destination_type"], node.input_value(0).partial_shape)]


def _evaluate_convert(node: Node, x: Any) -> Any:
    return _convert_values(x, node.attrs["destination_type"])


def _convert_values(x: Any, target: Type) -> Any:
    xp = namespace(x)
    source_type = Type.of(x.dtype)
    if Type.string in (source_type, target):
        return _convert_strings(x, source_type, target)
    if source_type in _NARROW:  # exact in f32 / i8, where the array API computes
        x = xp.astype(x, np.float32 if source_type.is_real else np.int8)
        source_type = Type.of(x.dtype)
    if not target.is_integral:
        return xp.astype(x, target.numpy)
    info = ml_dtypes.iinfo(target.numpy)
    # 4- and 2-bit integers are computed in the byte type of their signedness, then narrowed (exactly)
    carrier = target.numpy if target.bitwidth >= 8 else np.dtype(np.int8 if target.is_signed else np.uint8)
    if source_type is Type.boolean:
        return xp.astype(xp.astype(x, carrier), target.numpy)
    if source_type.is_integral:
        bounds = integer_saturation(np.dtype(x.dtype), np.dtype(target.numpy))
        if bounds is not None:
            x = xp.clip(x, *bounds)  # saturate instead of wrapping, as OpenVINO's Convert does
        return xp.astype(xp.astype(x, carrier), target.numpy)
    # Truncate toward zero, then saturate; NaN becomes 0. The bounds are compared in floating point
    # (float(2**63 - 1) is 2**63), so only values strictly inside are converted.
    whole = xp.trunc(x)
    inside = (whole > float(info.min)) & (whole < float(info.max))
    converted = xp.astype(xp.where(inside, whole, xp.zeros_like(whole)), carrier)
    converted = xp.where(whole >= float(info.max), xp.asarray(info.max, dtype=carrier), converted)
    converted = xp.where(whole <= float(info.min), xp.asarray(info.min, dtype=carrier), converted)
    return xp.astype(converted, target.numpy)


@functools.lru_cache(maxsize=128)
def integer_saturation(source: np.dtype[Any], target: np.dtype[Any]) -> tuple[int, int] | None:
    """The bounds Convert clips an integer ``source`` to before it becomes the integer ``target`` (any
    width, 4-bit types included), or None when every ``source`` value fits."""
    have, want = ml_dtypes.iinfo(source), ml_dtypes.iinfo(target)
    if want.min <= have.min and have.max <= want.max:
        return None
    return max(int(have.min), int(want.min)), min(int(have.max), int(want.max))


def _convert_strings(x: Any, source: Type, target: Type) -> Any:
    """Numbers to their shortest decimal text (booleans to ``"1"``/``"0"``), text to numbers as Python's
    ``float()`` reads it (``"1e3"``, ``"-INF"``, ``"NaN"``; integers then truncate and saturate as
    Convert does)."""
    array = np.asarray(x)
    if target is Type.string:
        if source is Type.boolean:
            array = array.astype(np.uint8)
        return array.astype(target.numpy)
    if target is Type.boolean:
        return array.astype(np.float64) != 0
    if target.is_real:
        return array.astype(np.float64).astype(target.numpy)
    if target.bitwidth >= 8:
        try:  # whole numbers exactly, beyond what f64 holds
            return array.astype(np.int64 if target.is_signed else np.uint64).clip(*_limits(target)).astype(target.numpy)
        except (ValueError, OverflowError):
            pass
    return _convert_values(array.astype(np.float64), target)


def _limits(target: Type) -> tuple[int, int]:
    info = ml_dtypes.iinfo(target.numpy)
    return int(info.min), int(info.max)


_NARROW = frozenset(t for t in Type if (t.is_real and t.bitwidth <= 8) or (t.is_integral and t.bitwidth < 8))
"""Types Convert reads through f32 (floats) or i8 (integers), which hold all their values."""


PARAMETER = define(
    OpDef(
        "Parameter",
        "basic",
        _infer_parameter,
        attrs=(
            Attr("element_type", ELEMENT_TYPE, doc="the input's element type"),
            Attr("shape", PARTIAL_SHAPE, (), doc="the input's shape; -1 marks a dynamic dimension"),
        ),
        structural=True,
        doc="A model input.",
    )
)
CONSTANT = define(
    OpDef(
        "Constant",
        "basic",
        _infer_constant,
        attrs=(Attr("value", ARRAY, doc="the tensor (read-only)"),),
        evaluate=lambda node: node.attrs["value"],
        structural=True,
        doc="A constant tensor.",
    )
)
RESULT = define(
    OpDef(
        "Result",
        "basic",
        _infer_same_as_input,
        inputs=(Input("value"),),
        evaluate=lambda node, x: x,
        structural=True,
        doc="A model output.",
    )
)
CONVERT = define(
    OpDef(
        "Convert",
        "basic",
        _infer_convert,
        inputs=(Input("data"),),
        attrs=(Attr("destination_type", ELEMENT_TYPE, doc="the element type to convert to"),),
        evaluate=_evaluate_convert,
        doc="Converts the element type: floats to integers truncate toward zero and saturate; integers "
        "saturate at the destination's limits; NaN becomes 0. Floats to floats round to nearest even; "
        "beyond the destination's range they become infinity, or NaN in a type without infinity (the "
        "float8 types, ml_dtypes' conversions); f4e2m1, which has neither, saturates.",
    )
)


def _infer_bit_cast(node: Node) -> list[OutputSpec]:
    source, target = node.input_value(0).element_type, node.attrs["destination_type"]
    if source.numpy.itemsize != target.numpy.itemsize:
        raise node.error(
            f"{source.value} ({source.numpy.itemsize} bytes) cannot be reinterpreted as {target.value} "
            f"({target.numpy.itemsize} bytes); pick a destination type of the same width, or use Convert"
        )
    return [(target, node.input_value(0).partial_shape)]


BIT_CAST = define(
    OpDef(
        "BitCast",
        "basic",
        _infer_bit_cast,
        inputs=(Input("data"),),
        attrs=(Attr("destination_type", ELEMENT_TYPE, doc="a type of the same width as data's"),),
        version="onnx26",
        doc="Reinterprets each element's bits as destination_type, which has the same width.",
    )
)


def bit_cast(data: Any, destination_type: Any, name: str | None = None) -> Node:
    """Reinterprets the bits of each element as ``destination_type`` (``BitCast``, ONNX opset 26; OpenVINO
    has none): ``1.0`` f32 becomes ``1065353216`` i32. Unlike :func:`convert`, values are not converted.

    :param destination_type: an element type of the same width as ``data``'s (bool is one byte).
    """
    return Node(BIT_CAST, [as_output(data)], {"destination_type": Type.of(destination_type)}, name)


def parameter(shape: Sequence[int] | PartialShape, dtype: Any = Type.f32, name: str | None = None) -> Node:
    """A model input.

    :param shape: dimensions, ``-1`` for a dynamic one.
    :param dtype: element type (a ``Type`` or numpy dtype).
    :param name: friendly name; also the input's tensor name.
    :raises ModelValidationError: for a shape that is not a list of integers >= -1, or a ``dtype`` that
        names no element type (an ``ElementTypeError``, also a ``TypeError``), naming the Parameter.
    """
    try:
        attrs = {"element_type": Type.of(dtype), "shape": PartialShape.of(shape)}
    except ModelValidationError as exc:
        raise type(exc)(f"Parameter{'' if name is None else f' {name!r}'}: {exc}") from None
    return Node(PARAMETER, [], attrs, name)


def constant(value: Any, dtype: Any = None, name: str | None = None, *, share: bool = False) -> Node:
    """A constant tensor. The value is copied and made read-only.

    :param value: an array or anything ``np.asarray`` accepts.
    :param dtype: element type to convert the value to (default: the value's own).
    :param share: keep ``value`` itself when it is a read-only numpy array already of that type,
        instead of a copy (a weight memory-mapped from its file stays a view of the file). The caller
        vouches that nothing writes to it.
    """
    wanted = Type.of(dtype).numpy if dtype is not None else None
    if share and isinstance(value, np.ndarray) and not value.flags.writeable and wanted in (None, value.dtype):
        return Node(CONSTANT, [], {"value": value}, name)
    array = np.array(value, dtype=wanted)
    if array.dtype == np.float64 and dtype is None and not isinstance(value, np.ndarray):
        array = array.astype(np.float32)  # Python floats default to f32, as in OpenVINO's opset
    array.setflags(write=False)
    return Node(CONSTANT, [], {"value": array}, name)


def result(value: Node | Any, name: str | None = None) -> Node:
    """A model output consuming ``value``."""
    return Node(RESULT, [as_output(value)], {}, name)


def convert(data: Any, destination_type: Any, name: str | None = None) -> Node:
    """Converts element type (``Convert``): float to integer truncates toward zero.

    :param destination_type: the target element type.
    """
    return Node(CONVERT, [as_output(data)], {"destination_type": Type.of(destination_type)}, name)


def as_output(value: Any, like: Output | None = None) -> Output:
    """Turns a Node, an Output, or a constant value (array or scalar) into an Output.

    A Python scalar becomes a constant of ``like``'s element type when given, else f32 / i64 / boolean.
    """
    if isinstance(value, Output):
        return value
    if isinstance(value, Node):
        if value.get_output_size() != 1:
            raise TypeError(
                f"{value.type_name} '{value.friendly_name}' has {value.get_output_size()} outputs; "
                "pass one of node.outputs() instead of the node"
            )
        return value.output(0)
    if isinstance(value, (bool, int, float)) and not isinstance(value, np.generic):
        if like is not None:
            dtype = like.element_type.numpy
        elif isinstance(value, bool):
            dtype = np.dtype(np.bool_)
        elif isinstance(value, int):
            dtype = np.dtype(np.int64)
        else:
            dtype = np.dtype(np.float32)
        return constant(np.asarray(value, dtype=dtype)).output(0)
    return constant(np.asarray(value)).output(0)


def as_outputs(values: Iterable[Any]) -> list[Output]:
    """:func:`as_output` over a sequence."""
    return [as_output(v) for v in values]
