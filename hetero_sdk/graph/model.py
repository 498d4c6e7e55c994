"""The model: a validated DAG of nodes with parameters and results, like ``ov.Model``."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from hetero_sdk.errors import ModelValidationError, PortNotFoundError, did_you_mean
from hetero_sdk.graph.node import Node, Output
from hetero_sdk.graph.reshape import InputKey, ShapeLike, reshape_model
from hetero_sdk.graph.variables import Variable, check_variables, variables_of

__all__ = ["Model"]

_model_counter = itertools.count()


class Model:
    """A model graph: its parameters, its results, and every node between them.

    :param results: Result nodes, or outputs (each wrapped in a new Result node).
    :param parameters: the Parameter nodes, in input order.
    :param name: the model's name (generated when omitted).
    :param sinks: the nodes that have effects but no consumers: the Assign nodes of a stateful model
        (see :mod:`hetero_sdk.ops.state`), as ``ov.Model``'s sinks.
    :raises ModelValidationError: for a cycle, a Parameter consumed but not listed, a listed node that
        is not a Parameter, two nodes given the same friendly name (a generated name that another
        node's takes is generated anew instead), or variables whose ReadValue and Assign do not pair up.
    """

    def __init__(
        self,
        results: Sequence[Node | Output] | Node | Output,
        parameters: Sequence[Node],
        name: str | None = None,
        sinks: Sequence[Node | Output] | None = None,
    ) -> None:
        if isinstance(results, (Node, Output)):
            results = [results]
        self._results: list[Node] = [_result_of(r) for r in results]
        self._parameters: list[Node] = list(parameters)
        self._sinks: list[Node] = [_sink(s) for s in sinks or ()]
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

    def add_parameters(self, parameters: Sequence[Node]) -> None:
        """Appends Parameters to the model's inputs.

        :raises ModelValidationError: when one is not a Parameter or is listed already.
        """
        self._edit(lambda: self._parameters.extend(parameters))

    def remove_parameter(self, parameter: Node) -> None:
        """Removes a Parameter (no longer consumed) from the model's inputs.

        :raises ModelValidationError: when it is not an input of the model, or is still consumed.
        """
        self._edit(lambda: self._parameters.remove(_listed_node(self._parameters, parameter, "parameter", self._name)))

    def add_results(self, results: Sequence[Node | Output]) -> None:
        """Appends outputs (Result nodes, or ports each wrapped in a new Result)."""
        self._edit(lambda: self._results.extend(_result_of(r) for r in results))

    def remove_result(self, result: Node) -> None:
        """Removes a Result from the model's outputs.

        :raises ModelValidationError: when it is not one of the model's Results (listing them).
        """
        self._edit(lambda: self._results.remove(_listed_node(self._results, result, "result", self._name)))

    def _edit(self, change: Callable[[], None]) -> None:
        """Applies ``change`` to the lists of parameters, results and sinks, then validates; all or nothing."""
        saved = list(self._parameters), list(self._results), list(self._sinks)
        try:
            change()
            self.validate()
        except (ModelValidationError, ValueError):
            self._parameters, self._results, self._sinks = saved
            raise

    def get_sinks(self) -> list[Node]:
        """The sinks (the Assign nodes), in the order they were given."""
        return list(self._sinks)

    @property
    def sinks(self) -> list[Node]:
        """The sinks (the Assign nodes)."""
        return list(self._sinks)

    def add_sinks(self, sinks: Sequence[Node | Output]) -> None:
        """Adds sinks (Assign nodes); the nodes they reach join the model.

        :raises ModelValidationError: when a node is not an Assign, or the model is no longer valid;
            the sinks are then not added.
        """
        self._edit(lambda: self._sinks.extend(_sink(s) for s in sinks if not any(_sink(s) is k for k in self._sinks)))

    def remove_sink(self, sink: Node | Output) -> None:
        """Removes a sink; what only it reached leaves the model.

        :raises ModelValidationError: when ``sink`` is not one of the model's sinks (listing them).
        """
        self._sinks.remove(_listed_node(self._sinks, _sink(sink), "sink", self._name))

    def get_variables(self) -> list[Variable]:
        """The variables (one per ReadValue/Assign pair), in topological order of their ReadValue."""
        return variables_of(self.get_ops())

    def is_stateful(self) -> bool:
        """True when the model keeps state between inferences: it has variables (each written by a sink)."""
        return bool(self._sinks)

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
        return _topological_order(self._parameters, [*self._results, *self._sinks])

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

    # -- validation and copies ---------------------------------------------------------------------

    def validate(self) -> None:
        """Re-checks the structure (cycles, dangling or repeated Parameters, duplicate names, variables
        whose ReadValue and Assign do not pair up).

        A node whose name was generated (built without ``name=``) and that another node's name
        takes gets a new generated name; two given names that are equal are an error.

        :raises ModelValidationError: naming the offending node.
        """
        listed: set[int] = set()
        for p in self._parameters:
            if not isinstance(p, Node) or p.type_name != "Parameter":
                raise ModelValidationError(
                    f"model '{self._name}': {p!r} is listed as a parameter but is not a Parameter node"
                )
            if id(p) in listed:
                raise ModelValidationError(
                    f"model '{self._name}': Parameter '{p.friendly_name}' is listed twice among the model's "
                    "parameters; list each Parameter once"
                )
            listed.add(id(p))
        for sink in self._sinks:
            if not isinstance(sink, Node) or sink.type_name != "Assign":
                raise ModelValidationError(
                    f"model '{self._name}': {sink!r} is listed as a sink but is not an Assign node"
                )
        ops = self.get_ops()
        seen: dict[str, Node] = {}
        for node in ops:
            if node.type_name == "Parameter" and id(node) not in listed:
                raise ModelValidationError(
                    f"model '{self._name}': Parameter '{node.friendly_name}' is consumed but not among the "
                    "model's parameters; pass it in Model(results, parameters)"
                )
            if node._name_generated:
                continue
            other = seen.setdefault(node.friendly_name, node)
            if other is not node:
                raise ModelValidationError(
                    f"model '{self._name}': two nodes are named '{node.friendly_name}' "
                    f"({other.type_name} and {node.type_name}); friendly names must be unique"
                )
        check_variables(self._name, ops, self._sinks)
        for node in ops:  # a generated name never takes a given one: the generated one changes
            if node._name_generated:
                node._rename_generated(seen)
                seen[node.friendly_name] = node

    def validate_nodes_and_infer_types(self) -> None:
        """Re-runs shape and type inference over every node in order, then :meth:`validate`."""
        for node in self.get_ops():
            node.validate_and_infer_types()
        self.validate()

    def reshape(
        self,
        shapes: ShapeLike | Mapping[InputKey, ShapeLike] | None = None,
        *,
        dims: Mapping[str, int] | None = None,
    ) -> None:
        """Gives inputs new shapes and re-infers every shape of the model (``ov.Model.reshape``).

        Any shape the graph accepts goes: dimensions may become static, dynamic (``-1``) or other
        sizes, and ranks may change. The bodies of If, Loop and Scan follow the shapes they receive.
        The change is all or nothing: when some op does not accept the new shapes, the model is left
        exactly as it was.

        For example ``model.reshape([8, 3])`` (the one input of a one-input model),
        ``model.reshape({"x": [-1, 3], 1: [4]})`` (inputs by tensor name, index or port) or
        ``model.reshape(dims={"batch": 8})`` (every input dimension named ``batch``).

        :param shapes: one shape (a list of ints, ``-1`` for a dynamic dimension, or a
            :class:`~hetero_sdk.PartialShape`) for a one-input model, or a mapping from inputs (tensor
            name, index, or the port from :attr:`inputs`) to shapes. Inputs not named keep theirs.
        :param dims: sizes by dimension name, for inputs whose Parameter carries names in its rt_info
            (``dim_names``: one name or None per dimension, as frontends write them). ``shapes`` wins
            where both set an input.
        :raises ModelValidationError: for one shape given to a model with several inputs, a malformed
            shape, or shapes the graph does not accept (naming the op and the shapes).
        :raises PortNotFoundError: for an input name, index or port the model lacks, or a dimension
            name no input carries (listing what exists).
        """
        reshape_model(self, shapes, dims)

    def clone(self) -> Model:
        """A deep copy: new nodes with the same names, attributes, rt_info and tensor names.

        Array attributes (Constant values) are shared: they are read-only.
        """
        mapping: dict[int, Node] = {}
        for node in self.get_ops():
            inputs = [mapping[id(s.node)].output(s.index) for s in node.input_values()]
            attrs = {k: _copied(v) for k, v in node.attrs.items()}
            twin = Node(node.op, inputs, attrs, name=node.friendly_name)
            twin._name_generated = node._name_generated
            twin._rt_info = copy.deepcopy(node._rt_info)
            for mine, theirs in zip(twin.outputs(), node.outputs()):
                if theirs.explicit_names is not None:
                    mine.set_names(theirs.explicit_names)
            mapping[id(node)] = twin
        clone = Model(
            [mapping[id(r)] for r in self._results],
            [mapping[id(p)] for p in self._parameters],
            self._name,
            sinks=[mapping[id(s)] for s in self._sinks],
        )
        clone._rt_info = copy.deepcopy(self._rt_info)
        return clone

    def __repr__(self) -> str:
        ins = ", ".join(f"{o.any_name}: {o.element_type.value}{o.partial_shape}" for o in self.inputs)
        outs = ", ".join(f"{o.any_name}: {o.element_type.value}{o.partial_shape}" for o in self.outputs)
        state = f" [variables: {', '.join(v.variable_id for v in self.get_variables())}]" if self._sinks else ""
        return f"<Model: '{self._name}' ({ins}) -> ({outs}){state}>"


def _port(ports: list[Output], key: int | str, kind: str, model: str) -> Output:
    if isinstance(key, int):
        if not -len(ports) <= key < len(ports):
            raise IndexError(f"model '{model}' has {len(ports)} {kind}(s); index {key} does not exist")
        return ports[key]
    for port in ports:
        if key in port.names:
            return port
    names = [n for p in ports for n in p.names]
    raise PortNotFoundError(
        f"model '{model}' has no {kind} named '{key}'; {did_you_mean(key, names, listing=kind + 's')}"
    )


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


def _listed_node(nodes: list[Node], node: Node, kind: str, model: str) -> Node:
    """``node`` when it is among ``nodes``, else an error listing them."""
    if any(n is node for n in nodes):
        return node
    listed = ", ".join(n.friendly_name for n in nodes) or "none"
    name = getattr(node, "friendly_name", node)
    raise ModelValidationError(f"model '{model}': {name!r} is not one of its {kind}s; its {kind}s: {listed}")


def _result_of(value: Node | Output) -> Node:
    """A Result node as given, or a new Result consuming ``value``."""
    return value if isinstance(value, Node) and value.type_name == "Result" else _result(value)


def _sink(value: Node | Output) -> Node:
    """The node a sink is given as (a node, or one of its ports)."""
    return value.node if isinstance(value, Output) else value


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
