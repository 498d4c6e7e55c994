"""Freezing inputs: a model input replaced by a constant value, and what that value decides folded away.

OpenVINO's ``convert_model(..., input={"sr": np.array(16000)})`` freezes an input: the Parameter becomes
a Constant, and the model is simplified around it. Here :class:`FreezeInputs` does that on a
:class:`~hetero_sdk.Model`: it replaces the Parameters, then folds constants
(:class:`~hetero_sdk.transformations.ConstantFolding`) and replaces each ``If`` whose condition became
known by the body it takes (:class:`IfFolding`), until nothing changes. A model whose ``If`` chooses
by a sample rate, say, then holds only the branch for the frozen rate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.graph.node import Node
from hetero_sdk.ops.basic import constant, convert
from hetero_sdk.shape import PartialShape
from hetero_sdk.transformations.constant_folding import ConstantFolding
from hetero_sdk.transformations.fused_names import merge_fused_names
from hetero_sdk.transformations.graph_rewrite import ConsumerMap, copy_runtime_info, replace_output

if TYPE_CHECKING:
    from hetero_sdk.graph.model import Model
    from hetero_sdk.graph.node import Output

__all__ = ["FreezeInputs", "IfFolding", "frozen_value", "simplify_frozen"]

_MAX_ROUNDS = 16
"""Folding rounds at most: each inlined If can make another condition known (nested Ifs)."""


def frozen_value(value: Any, element_type: Type, shape: PartialShape, where: str) -> np.ndarray:
    """``value`` as the array an input of ``element_type`` and ``shape`` is frozen to.

    The value is cast to the input's element type when that loses nothing (``np.array(16000)`` for an
    ``i64`` input, or an ``i32`` array); its shape must fit the input's.

    :param where: the input, as messages name it (``input 'sr'``).
    :raises ModelValidationError: for a value that is not an array of numbers or booleans (text for
        a ``string`` input), a cast that would change it, or a shape that does not fit.
    """
    array = np.asarray(value)
    if array.dtype == object:
        raise ModelValidationError(f"{where}: cannot freeze it to an object array; pass a numpy array of numbers")
    if not shape.compatible(array.shape):
        raise ModelValidationError(
            f"{where} has shape {shape}; the value given to freeze it has shape {list(array.shape)}"
        )
    target = element_type.numpy
    if array.dtype == target:
        return array
    if element_type.is_string or array.dtype.kind in "TUS":
        if element_type.is_string and array.dtype.kind in "TUS":
            return array.astype(target)
    elif array.dtype.kind == "f" and element_type.is_real:  # rounding to the input's precision is expected
        return array.astype(target)
    else:
        cast = array.astype(target)
        if np.array_equal(cast.astype(array.dtype), array):
            return cast
    raise ModelValidationError(
        f"{where} is {element_type.value}; the value given to freeze it is {array.dtype} {array.tolist()!r:.60} "
        f"and does not convert to it without loss; pass np.asarray(value, np.{target.name})"
    )


class IfFolding:
    """Replaces every ``If`` whose condition is a Constant by the body it takes.

    The body is cloned into the model: its Parameters become the If's inputs, its Results the If's
    outputs (which keep their tensor names). The inlined nodes are named ``<If name>/<node name>``
    and take the If's rt_info (an affinity set on the If holds for its body).
    """

    name = "IfFolding"

    def run(self, model: Model) -> bool:
        """Inlines the taken body of each If with a known condition; returns True when one was inlined."""
        users = ConsumerMap(model)
        changed = False
        for node in model.get_ops():
            if node.type_name != "If" or node.input_value(0).node.type_name != "Constant":
                continue
            if any(users.count(port) for port in node.outputs()):
                self._inline(model, node, users)
                changed = True
        return changed

    def _inline(self, model: Model, node: Node, users: ConsumerMap) -> None:
        taken = bool(np.asarray(node.input_value(0).node.attrs["value"]).reshape(-1)[0])
        body = node.attrs["then_body" if taken else "else_body"].clone()
        outer = node.input_values()[1:]
        bound: dict[int, Output] = {id(p): value for p, value in zip(body.get_parameters(), outer)}
        copies: dict[int, Node] = {}

        def outside(value: Output) -> Output:
            """The port of the model that stands for the body's ``value``."""
            return bound[id(value.node)] if id(value.node) in bound else copies[id(value.node)].output(value.index)

        for inner in body.get_ops():
            if inner.type_name in ("Parameter", "Result"):
                continue
            inputs = [outside(source) for source in inner.input_values()]
            twin = Node(inner.op, inputs, dict(inner.attrs), name=f"{node.friendly_name}/{inner.friendly_name}")
            twin.get_rt_info().update(inner.get_rt_info())
            copy_runtime_info([node], twin)
            merge_fused_names(twin, [node])
            copies[id(inner)] = twin
        for port, result in zip(node.outputs(), body.get_results()):
            value = outside(result.input_value(0))
            if users.feeds_result(port) and (value.node.type_name == "Parameter" or users.feeds_result(value)):
                # one tensor cannot carry two interface names: keep a copy for this output
                value = _identity(value, f"{node.friendly_name}:{port.index}")
            names = port.names
            replace_output(model, port, value, users)
            if names:
                value.set_names((value.explicit_names or set()) | names)
        users.detach(node)
        for twin in copies.values():
            users.attach(twin)


def _identity(value: Output, name: str) -> Output:
    """A copy of ``value`` (a Convert to its own type), for an output that needs its own tensor."""
    return convert(value, value.element_type, name=name).output(0)


def simplify_frozen(model: Model) -> None:
    """Folds what frozen inputs decide: constants and Ifs with known conditions, until nothing changes;
    then re-infers every shape."""
    folding, ifs = ConstantFolding(), IfFolding()
    for _ in range(_MAX_ROUNDS):
        folded = folding.run(model)
        inlined = ifs.run(model)
        if not (folded or inlined):
            break
    model.validate_nodes_and_infer_types()


class FreezeInputs:
    """Freezes model inputs to values: each named Parameter becomes a Constant holding its value and
    leaves the model's inputs, then :func:`simplify_frozen` folds what the values decide.

    :param values: the value of each input to freeze, by tensor name (numpy arrays or scalars; cast
        to the input's element type where that loses nothing).
    """

    name = "FreezeInputs"

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = dict(values)

    def run(self, model: Model) -> bool:
        """Freezes the inputs and simplifies ``model``; returns True when there was one to freeze.

        :raises PortNotFoundError: for a name that is not one of the model's inputs (listing them).
        :raises ModelValidationError: for a value that does not fit its input (see :func:`frozen_value`).
        """
        if not self.values:
            return False
        users = ConsumerMap(model)
        for name, value in self.values.items():
            port = model.input(name)
            parameter = port.node
            array = frozen_value(value, port.element_type, port.partial_shape, f"input '{name}'")
            frozen = constant(array, dtype=port.element_type, name=parameter.friendly_name)
            names = port.names
            replace_output(model, port, frozen.output(0), users)
            model.remove_parameter(parameter)
            frozen.output(0).set_names(names)
        simplify_frozen(model)
        return True
