"""The model: a validated DAG of nodes with parameters and results, like ``ov.Model``."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from hetero_sdk.errors import HeteroSDKError, ModelValidationError, did_you_mean
from hetero_sdk.graph.node import Node, Output
from hetero_sdk.rt_info import DIM_NAMES
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = ["Model"]

_model_counter = itertools.count()


class Model:
    """A model graph: its parameters, its results, and every node between them.

    :param results: Result nodes, or outputs (each wrapped in a new Result node).
    :param parameters: the Parameter nodes, in input order.
    :param name: the model's name (generated when omitted).
    :raises ModelValidationError: for a cycle, a Parameter consumed but not listed, a listed node that
        is not a Parameter, or duplicate friendly names.
    """

    def __init__(
        self,
        results: Sequence[Node | Output] | Node | Output,
        parameters: Sequence[Node],
        name: str | None = None,
    ) -> None:
        if isinstance(results, (Node, Output)):
            results = [results]
        self._results: list[Node] = [
            r if isinstance(r, Node) and r.type_name == "Result" else _result(r) for r in results
        ]
        self._parameters: list[Node] = list(parameters)
        self._name = name if name is not None else f"Model{next(_model_counter)}"
        self._rt_info: dict[str, Any] = {}
        self.validate()

    # -- identity ----------------------------------------------------------------------------------

    @property
    def friendly_name(self) -> str:
        """The model's name."""
        return self._name

    @friendly_name.setter
    def friendly_name(self, name: str) -> None:
        self._name = name

    def get_friendly_name(self) -> str:
        """The model's name."""
        return self._name

    def get_name(self) -> str:
        """The model's name."""
        return self._name

    def get_rt_info(self) -> dict[str, Any]:
        """The model's mutable runtime-info dict."""
        return self._rt_info

    # -- structure ---------------------------------------------------------------------------------

    def get_parameters(self) -> list[Node]:
        """The Parameter nodes, in input order."""
        return list(self._parameters)

    def get_results(self) -> list[Node]:
        """The Result nodes, in output order."""
        return list(self._results)

    @property
    def inputs(self) -> list[Output]:
        """The model's input ports (one per Parameter)."""
        return [p.output(0) for p in self._parameters]

    @property
    def outputs(self) -> list[Output]:
        """The model's output ports (one per Result; named after the tensor each Result consumes)."""
        return [r.output(0) for r in self._results]

    def input(self, key: int | str = 0) -> Output:
        """An input port by index or tensor name."""
        return _port(self.inputs, key, "input", self._name)

    def output(self, key: int | str = 0) -> Output:
        """An output port by index or tensor name."""
        return _port(self.outputs, key, "output", self._name)

    def get_ops(self) -> list[Node]:
        """Every node, in topological order (Parameters first, in input order)."""
        return _topological_order(self._parameters, self._results)

    def get_ordered_ops(self) -> list[Node]:
        """Every node, in topological order (the same order as :meth:`get_ops`)."""
        return self.get_ops()

    def consumers(self) -> dict[Output, list[tuple[Node, int]]]:
        """For each output port, the ``(node, input index)`` pairs that consume it."""
        users: dict[Output, list[tuple[Node, int]]] = {}
        for node in self.get_ops():
            for i, source in enumerate(node.input_values()):
                users.setdefault(source, []).append((node, i))
        return users

    def is_dynamic(self) -> bool:
        """True when some tensor of the model has a dynamic dimension."""
        return any(o.partial_shape.is_dynamic for n in self.get_ops() for o in n.outputs())

    # -- shapes ------------------------------------------------------------------------------------

    def reshape(
        self,
        shapes: PartialShape | Sequence[int] | Mapping[str | int | Output, PartialShape | Sequence[int]],
    ) -> None:
        """Gives inputs new shapes and re-infers every shape of the model, as ``ov.Model.reshape``.

        :param shapes: one shape for a one-input model, or a dict keyed by input tensor name, input
            index or input port; a shape is a list of ints (``-1`` for a dynamic dimension) or a
            :class:`PartialShape`. Inputs left out keep their shapes.
        :raises ModelValidationError: when a key names no input, or the model cannot take the new
            shapes (naming the node that rejects them); the model is then left as it was.
        """
        if not isinstance(shapes, Mapping):
            if len(self._parameters) != 1:
                raise ModelValidationError(
                    f"model '{self._name}' has {len(self._parameters)} inputs; pass a dict of input name to shape"
                )
            shapes = {0: shapes}
        targets = {id(self._input_parameter(key)): PartialShape.of(shape) for key, shape in shapes.items()}
        before = {id(p): p.attrs["shape"] for p in self._parameters}
        for parameter in self._parameters:
            if id(parameter) in targets:
                parameter.attrs["shape"] = targets[id(parameter)]
        try:
            self.validate_nodes_and_infer_types()
        except HeteroSDKError as exc:
            for parameter in self._parameters:
                parameter.attrs["shape"] = before[id(parameter)]
            self.validate_nodes_and_infer_types()
            wanted = {p.friendly_name: str(targets[id(p)]) for p in self._parameters if id(p) in targets}
            raise ModelValidationError(f"model '{self._name}' cannot take the shapes {wanted}: {exc}") from exc
        for parameter in self._parameters:
            names = parameter.get_rt_info().get(DIM_NAMES)
            if id(parameter) in targets and names is not None:
                dims = targets[id(parameter)].dims
                kept = [n if i < len(dims) and dims[i] == DYNAMIC else None for i, n in enumerate(names)]
                parameter.get_rt_info()[DIM_NAMES] = kept + [None] * (len(dims) - len(kept))

    def _input_parameter(self, key: str | int | Output) -> Node:
        """The Parameter behind an input given by tensor name, index or port."""
        if isinstance(key, Output):
            for parameter in self._parameters:
                if parameter.output(0) == key:
                    return parameter
            key = key.any_name
        if isinstance(key, int):
            if not -len(self._parameters) <= key < len(self._parameters):
                raise ModelValidationError(
                    f"model '{self._name}' has {len(self._parameters)} input(s); index {key} does not exist"
                )
            return self._parameters[key]
        for parameter in self._parameters:
            if key in parameter.output(0).names:
                return parameter
        names = sorted(n for p in self._parameters for n in p.output(0).names)
        raise ModelValidationError(
            f"model '{self._name}' has no input named '{key}'; {did_you_mean(str(key), names, listing='inputs')}"
        )

    # -- validation and copies ---------------------------------------------------------------------

    def validate(self) -> None:
        """Re-checks the structure (cycles, dangling Parameters, duplicate names).

        :raises ModelValidationError: naming the offending node.
        """
        for p in self._parameters:
            if not isinstance(p, Node) or p.type_name != "Parameter":
                raise ModelValidationError(
                    f"model '{self._name}': {p!r} is listed as a parameter but is not a Parameter node"
                )
        ops = self.get_ops()
        listed = {id(p) for p in self._parameters}
        seen: dict[str, Node] = {}
        for node in ops:
            if node.type_name == "Parameter" and id(node) not in listed:
                raise ModelValidationError(
                    f"model '{self._name}': Parameter '{node.friendly_name}' is consumed but not among the "
                    "model's parameters; pass it in Model(results, parameters)"
                )
            other = seen.setdefault(node.friendly_name, node)
            if other is not node:
                raise ModelValidationError(
                    f"model '{self._name}': two nodes are named '{node.friendly_name}' "
                    f"({other.type_name} and {node.type_name}); friendly names must be unique"
                )

    def validate_nodes_and_infer_types(self) -> None:
        """Re-runs shape and type inference over every node in order, then :meth:`validate`."""
        for node in self.get_ops():
            node.validate_and_infer_types()
        self.validate()

    def clone(self) -> Model:
        """A deep copy: new nodes with the same names, attributes, rt_info and tensor names.

        Array attributes (Constant values) are shared: they are read-only.
        """
        mapping: dict[int, Node] = {}
        for node in self.get_ops():
            inputs = [mapping[id(s.node)].output(s.index) for s in node.input_values()]
            attrs = {k: _copied(v) for k, v in node.attrs.items()}
            twin = Node(node.op, inputs, attrs, name=node.friendly_name)
            twin._rt_info = copy.deepcopy(node._rt_info)
            for mine, theirs in zip(twin.outputs(), node.outputs()):
                if theirs.explicit_names is not None:
                    mine.set_names(theirs.explicit_names)
            mapping[id(node)] = twin
        clone = Model([mapping[id(r)] for r in self._results], [mapping[id(p)] for p in self._parameters], self._name)
        clone._rt_info = copy.deepcopy(self._rt_info)
        return clone

    def __repr__(self) -> str:
        ins = ", ".join(f"{o.any_name}: {o.element_type.value}{o.partial_shape}" for o in self.inputs)
        outs = ", ".join(f"{o.any_name}: {o.element_type.value}{o.partial_shape}" for o in self.outputs)
        return f"<Model: '{self._name}' ({ins}) -> ({outs})>"


def _port(ports: list[Output], key: int | str, kind: str, model: str) -> Output:
    if isinstance(key, int):
        if not -len(ports) <= key < len(ports):
            raise IndexError(f"model '{model}' has {len(ports)} {kind}(s); index {key} does not exist")
        return ports[key]
    for port in ports:
        if key in port.names:
            return port
    names = sorted(n for p in ports for n in p.names)
    raise KeyError(f"model '{model}' has no {kind} named '{key}'; {kind}s: {', '.join(names)}")


def _topological_order(parameters: Iterable[Node], results: Iterable[Node]) -> list[Node]:
    order: list[Node] = []
    state: dict[int, int] = {}  # 1: on the DFS stack, 2: done
    for p in parameters:
        if id(p) not in state:
            state[id(p)] = 2
            order.append(p)
    for root in results:
        if id(root) in state:
            continue
        stack: list[tuple[Node, int]] = [(root, 0)]
        state[id(root)] = 1
        while stack:
            node, next_input = stack[-1]
            if next_input < node.get_input_size():
                stack[-1] = (node, next_input + 1)
                source = node.input_value(next_input).node
                mark = state.get(id(source))
                if mark is None:
                    state[id(source)] = 1
                    stack.append((source, 0))
                elif mark == 1:
                    cycle = [n.friendly_name for n, _ in stack[[n for n, _ in stack].index(source) :]]
                    raise ModelValidationError(
                        f"the graph has a cycle through {' -> '.join([*cycle, source.friendly_name])}; "
                        "a model must be a DAG"
                    )
            else:
                stack.pop()
                state[id(node)] = 2
                order.append(node)
    return order


def _copied(value: Any) -> Any:
    """An attribute value for a clone: arrays shared (read-only), sub-graphs cloned, the rest deep-copied."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, Model):
        return value.clone()
    return copy.deepcopy(value)


def _result(value: Node | Output) -> Node:
    """A Result consuming ``value`` (a port, or a node with one output)."""
    if isinstance(value, Node):
        if value.get_output_size() != 1:
            raise TypeError(
                f"{value.type_name} '{value.friendly_name}' has {value.get_output_size()} outputs; "
                "pass one of node.outputs() instead of the node"
            )
        value = value.output(0)
    return Node("Result", [value])
