"""Basic ops: Parameter, Constant, Result, Convert."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.ops.checks import expect_inputs
from hetero_sdk.ops.registry import OutputSpec, as_output, register_op
from hetero_sdk.shape import PartialShape

__all__ = ["constant", "convert", "parameter", "result"]


def parameter(shape: Sequence[int] | PartialShape, dtype: Any = Type.f32, name: str | None = None) -> Node:
    """A model input.

    :param shape: dimensions, ``-1`` for a dynamic one.
    :param dtype: element type (a ``Type`` or numpy dtype).
    :param name: friendly name; also the input's tensor name.
    """
    return Node("Parameter", [], {"element_type": Type.of(dtype), "shape": PartialShape.of(shape)}, name)


def constant(value: Any, dtype: Any = None, name: str | None = None) -> Node:
    """A constant tensor. The value is copied and made read-only.

    :param value: an array or anything ``np.asarray`` accepts.
    :param dtype: element type to convert the value to (default: the value's own).
    """
    array = np.array(value, dtype=Type.of(dtype).numpy if dtype is not None else None)
    if array.dtype == np.float64 and dtype is None and not isinstance(value, np.ndarray):
        array = array.astype(np.float32)  # Python floats default to f32, as in OpenVINO's opset
    array.setflags(write=False)
    return Node("Constant", [], {"value": array}, name)


def result(value: Node | Any, name: str | None = None) -> Node:
    """A model output consuming ``value``."""
    return Node("Result", [as_output(value)], {}, name)


def convert(data: Any, destination_type: Any, name: str | None = None) -> Node:
    """Converts element type (``Convert``): float to integer truncates toward zero.

    :param destination_type: the target element type.
    """
    return Node("Convert", [as_output(data)], {"destination_type": Type.of(destination_type)}, name)


@register_op("Parameter", "basic")
def _parameter(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 0)
    try:
        element_type = Type.of(node.attrs.get("element_type"))
        shape = PartialShape.of(node.attrs.get("shape", ()))
    except (TypeError, ValueError) as exc:
        raise node.error(str(exc)) from None
    node.attrs["element_type"], node.attrs["shape"] = element_type, shape
    return [(element_type, shape)]


@register_op("Constant", "basic")
def _constant(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 0)
    value = node.attrs.get("value")
    if not isinstance(value, np.ndarray):
        raise node.error(f"attribute 'value' must be a numpy array, got {type(value).__name__}")
    try:
        element_type = Type.of(value.dtype)
    except TypeError as exc:
        raise node.error(str(exc)) from None
    return [(element_type, PartialShape(value.shape))]


@register_op("Result", "basic")
def _result(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 1)
    source = node.input_value(0)
    return [(source.element_type, source.partial_shape)]


@register_op("Convert", "basic")
def _convert(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 1)
    try:
        target = Type.of(node.attrs.get("destination_type"))
    except TypeError as exc:
        raise node.error(f"attribute destination_type: {exc}") from None
    node.attrs["destination_type"] = target
    return [(target, node.input_value(0).partial_shape)]
