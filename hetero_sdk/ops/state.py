"""State ops: ReadValue and Assign (OpenVINO opset 6), the two ends of a model's variables.

A variable is a tensor a model keeps between inferences. ``ReadValue`` reads it (or, on the first
inference and after a reset, computes its initial value from its optional input); ``Assign`` gives it
the value the next inference reads. The two are paired by ``variable_id``, and a model lists its
Assigns as *sinks* (:meth:`Model.get_sinks <hetero_sdk.Model.get_sinks>`), since nothing consumes them.

Like Parameter and Result they are graph structure: devices never compute them. The SDK runs a stateful
model by giving each ReadValue's place to a Parameter and each Assign's to a Result, and keeps the
values in the infer request (:mod:`hetero_sdk.runtime.stateful`).
"""

from __future__ import annotations

from typing import Any

from hetero_sdk.element_type import Type
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import ELEMENT_TYPE, PARTIAL_SHAPE, STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.shape import PartialShape

__all__ = ["ASSIGN", "READ_VALUE", "assign", "read_value"]


def _infer_read_value(node: Node) -> list[OutputSpec]:
    shape: PartialShape = node.attrs["variable_shape"]
    element_type: Type = node.attrs["variable_type"]
    if not node.attrs["variable_id"]:
        raise node.error("attribute variable_id is empty; name the variable")
    if node.get_input_size():
        init = node.input_value(0)
        if init.element_type != element_type:
            raise node.error(
                f"the initial value has element type {init.element_type.value}; the variable "
                f"'{node.attrs['variable_id']}' is {element_type.value}"
            )
        if shape.merge(init.partial_shape) is None:
            raise node.error(
                f"the initial value has shape {init.partial_shape}; the variable "
                f"'{node.attrs['variable_id']}' has shape {shape}"
            )
    return [(element_type, shape)]


def _infer_assign(node: Node) -> list[OutputSpec]:
    if not node.attrs["variable_id"]:
        raise node.error("attribute variable_id is empty; name the variable")
    value = node.input_value(0)
    return [(value.element_type, value.partial_shape)]


_VARIABLE_ID = Attr("variable_id", STRING, doc="the variable's name, shared by its ReadValue and Assign")

READ_VALUE = define(
    OpDef(
        "ReadValue",
        "state",
        _infer_read_value,
        inputs=(Input("init", optional=True, doc="the initial value, used while the variable has none"),),
        attrs=(
            _VARIABLE_ID,
            Attr("variable_shape", PARTIAL_SHAPE, doc="the variable's shape; -1 marks a dynamic dimension"),
            Attr("variable_type", ELEMENT_TYPE, doc="the variable's element type"),
        ),
        version="opset6",
        structural=True,
        doc="Reads a variable: its value from the previous inference, or its initial value (the init "
        "input, else zeros) on the first inference and after a reset.",
    )
)
ASSIGN = define(
    OpDef(
        "Assign",
        "state",
        _infer_assign,
        inputs=(Input("value", doc="the variable's value for the next inference"),),
        attrs=(_VARIABLE_ID,),
        version="opset6",
        structural=True,
        doc="Gives a variable the value the next inference reads; a sink of the model, its output "
        "passes the value through.",
    )
)


def read_value(
    init: Any = None,
    variable_id: str = "",
    variable_shape: PartialShape | list[int] | tuple[int, ...] | None = None,
    variable_type: Any = None,
    name: str | None = None,
) -> Node:
    """Reads the variable ``variable_id`` (``ReadValue``, opset 6).

    :param init: the initial value (a node, port or array), or None: the variable then starts as
        zeros, and its shape must be static.
    :param variable_id: the variable's name; the :func:`assign` that writes it uses the same.
    :param variable_shape: the variable's shape (``-1``: dynamic); by default ``init``'s.
    :param variable_type: the variable's element type; by default ``init``'s.
    :raises ModelValidationError: naming the node, when ``init`` does not fit the variable's shape or
        type, or when neither ``init`` nor the shape and type are given.
    """
    inputs = [] if init is None else [as_output(init)]
    if variable_shape is None or variable_type is None:
        if not inputs:
            raise ModelValidationError(
                f"ReadValue{'' if name is None else f' {name!r}'} of variable {variable_id!r}: without an "
                "initial value, give variable_shape and variable_type"
            )
        variable_shape = inputs[0].partial_shape if variable_shape is None else variable_shape
        variable_type = inputs[0].element_type if variable_type is None else variable_type
    attrs = {"variable_id": variable_id, "variable_shape": variable_shape, "variable_type": Type.of(variable_type)}
    return Node(READ_VALUE, inputs, attrs, name)


def assign(value: Any, variable_id: str, name: str | None = None) -> Node:
    """Writes ``value`` into the variable ``variable_id`` (``Assign``, opset 6) for the next inference.

    List the node among the model's sinks: ``Model(results, parameters, sinks=[node])``.
    """
    return Node(ASSIGN, [as_output(value)], {"variable_id": variable_id}, name)
