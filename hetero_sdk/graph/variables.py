"""A model's variables: what its ReadValue and Assign nodes name, and the checks that pair them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hetero_sdk.element_type import Type
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.graph.node import Node
from hetero_sdk.shape import PartialShape

__all__ = ["Variable", "check_variables", "variables_of"]


@dataclass(frozen=True)
class Variable:
    """One variable of a stateful model, as OpenVINO's ``ov.op.util.VariableInfo``.

    :ivar variable_id: its name, shared by its ReadValue and Assign.
    :ivar data_shape: its shape (``-1``: a dimension that varies, such as a KV cache's length).
    :ivar data_type: its element type.
    """

    variable_id: str
    data_shape: PartialShape
    data_type: Type

    def __repr__(self) -> str:
        return f"<Variable: '{self.variable_id}' {self.data_type.value}{self.data_shape}>"


def variables_of(ops: Sequence[Node]) -> list[Variable]:
    """The variables the ReadValue nodes among ``ops`` read, in the order of ``ops``."""
    return [
        Variable(n.attrs["variable_id"], n.attrs["variable_shape"], n.attrs["variable_type"])
        for n in ops
        if n.type_name == "ReadValue"
    ]


def check_variables(model: str, ops: Sequence[Node], sinks: Sequence[Node]) -> None:
    """Checks that each variable has one ReadValue and one Assign, the Assign listed among the sinks
    and writing a value of the variable's shape and element type.

    :param model: the model's name, for messages.
    :raises ModelValidationError: naming the node or the variable and what to do.
    """
    readers: dict[str, Node] = {}
    writers: dict[str, Node] = {}
    listed = {id(s) for s in sinks}
    for node in ops:
        if node.type_name not in ("ReadValue", "Assign"):
            continue
        found = readers if node.type_name == "ReadValue" else writers
        variable = node.attrs["variable_id"]
        other = found.setdefault(variable, node)
        if other is not node:
            raise ModelValidationError(
                f"model '{model}': variable '{variable}' has two {node.type_name} nodes ('{other.friendly_name}' "
                f"and '{node.friendly_name}'); a variable is read by one ReadValue and written by one Assign"
            )
        if node.type_name == "Assign" and id(node) not in listed:
            raise ModelValidationError(
                f"model '{model}': Assign '{node.friendly_name}' is not among the model's sinks; pass it in "
                "Model(results, parameters, sinks=[...]) or model.add_sinks([...])"
            )
    for variable, writer in writers.items():
        reader = readers.get(variable)
        if reader is None:
            raise ModelValidationError(
                f"model '{model}': Assign '{writer.friendly_name}' writes variable '{variable}', which no ReadValue "
                f"reads; variables read: {', '.join(sorted(readers)) or 'none'}"
            )
        value, shape, element_type = (
            writer.input_value(0),
            reader.attrs["variable_shape"],
            reader.attrs["variable_type"],
        )
        if value.element_type != element_type or shape.merge(value.partial_shape) is None:
            raise ModelValidationError(
                f"model '{model}': Assign '{writer.friendly_name}' writes {value.element_type.value}"
                f"{value.partial_shape} into variable '{variable}', which is {element_type.value}{shape} "
                f"(ReadValue '{reader.friendly_name}'); give it a value of the variable's shape and type"
            )
    unwritten = sorted(set(readers) - set(writers))
    if unwritten:
        raise ModelValidationError(
            f"model '{model}': variable(s) {', '.join(repr(v) for v in unwritten)} are read by ReadValue "
            f"'{readers[unwritten[0]].friendly_name}' but written by no Assign; add an Assign sink for each"
        )
