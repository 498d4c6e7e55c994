"""Cutting a model into one submodel per subgraph, joined by named intermediate tensors.

A cut edge becomes one Result in the producer's submodel and one Parameter in each consuming
submodel. Every tensor is identified by a *value key*, ``"<producer friendly name>:<port>"``: stable
and deterministic, so exported blobs and caches are too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hetero_sdk import rt_info
from hetero_sdk.element_type import Type
from hetero_sdk.graph import Model, Node, Output
from hetero_sdk.hetero.subgraph import Subgraph
from hetero_sdk.shape import PartialShape

__all__ = ["Cut", "SplitModel", "Submodel", "hosted_shapes", "output_constants", "split_model", "value_key"]


def value_key(output: Output) -> str:
    """The stable key of a tensor: its producer's friendly name and port."""
    return f"{output.node.friendly_name}:{output.index}"


@dataclass(frozen=True)
class Submodel:
    """One subgraph as a model of its own, with the value keys of its inputs and outputs."""

    index: int
    device: str
    model: Model
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True)
class Cut:
    """A tensor crossing from one submodel to others."""

    key: str
    producer: int
    consumers: tuple[int, ...]
    element_type: Type
    shape: PartialShape

    @property
    def nbytes(self) -> int | None:
        """Bytes per inference, or None when the shape is dynamic."""
        if not self.shape.is_static:
            return None
        return int(np.prod(self.shape.dims, dtype=np.int64)) * self.element_type.numpy.itemsize


@dataclass(frozen=True)
class SplitModel:
    """A model cut into submodels.

    :ivar submodels: in executable order.
    :ivar inputs: the value key of each model input.
    :ivar outputs: the value key of each model output.
    :ivar constants: values of model outputs that come straight from a Constant.
    :ivar cuts: the tensors crossing between submodels.
    :ivar shapes: the shapes of model inputs that HETERO computes itself (a ``ShapeOf`` of a Parameter,
        when the model is split): by value key, the input's value key and the element type, as numpy's.
    """

    submodels: tuple[Submodel, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    constants: dict[str, np.ndarray]
    cuts: tuple[Cut, ...]
    shapes: dict[str, tuple[str, str]] = field(default_factory=dict)


def split_model(model: Model, parts: Sequence[Subgraph], host_shapes: bool = True) -> SplitModel:
    """Builds one submodel per subgraph of compute nodes (``Subgraph.nodes`` holds Nodes).

    When there are several (and ``host_shapes``), a ``ShapeOf`` of a model input runs on the host
    (:attr:`SplitModel.shapes`): a submodel that needs only the shape of an input another one reads (a
    decoder's past length, taken from one layer's cache and used by every layer) then gets that shape,
    not the whole tensor. A cut made to ask a device about some ops keeps them all (``host_shapes=False``).
    """
    order = model.get_ordered_ops()
    hosted = _input_shapes(model) if len(parts) > 1 and host_shapes else {}
    part_of = {id(n): i for i, part in enumerate(parts) for n in part.nodes if id(n) not in hosted}
    consumers = model.consumers()
    submodels = []
    cut_consumers: dict[str, set[int]] = {}
    cut_ports: dict[str, tuple[int, Output]] = {}
    for index, part in enumerate(parts):
        builder = _SubmodelBuilder(model.friendly_name, index)
        members = [n for n in order if part_of.get(id(n)) == index]
        for node in members:
            builder.add(node, part_of, index)
            for output in node.outputs():
                users = consumers.get(output, [])
                for user, _ in users:
                    if user.type_name == "Result":
                        builder.add_output(output, user)
                    elif part_of.get(id(user), index) != index:
                        cut_consumers.setdefault(value_key(output), set()).add(part_of[id(user)])
                        cut_ports[value_key(output)] = (index, output)
                        builder.add_output(output, None)
        submodels.append(builder.finish(part.device))
    _keep_donatable(model, submodels)
    constants = output_constants(model)
    cuts = tuple(
        Cut(key, producer, tuple(sorted(cut_consumers[key])), port.element_type, port.partial_shape)
        for key, (producer, port) in sorted(cut_ports.items(), key=lambda kv: (kv[1][0], kv[0]))
    )
    read = {key for sub in submodels for key in sub.inputs}
    return SplitModel(
        tuple(submodels),
        tuple(value_key(p.output(0)) for p in model.get_parameters()),
        tuple(value_key(r.input_value(0)) for r in model.get_results()),
        constants,
        cuts,
        hosted_shapes(model, read | set(value_key(r.input_value(0)) for r in model.get_results())) if hosted else {},
    )


def _input_shapes(model: Model) -> dict[int, Node]:
    return {
        id(n): n
        for n in model.get_ordered_ops()
        if n.type_name == "ShapeOf" and n.input_value(0).node.type_name == "Parameter"
    }


def hosted_shapes(model: Model, keys: set[str]) -> dict[str, tuple[str, str]]:
    """:attr:`SplitModel.shapes` for the ``ShapeOf`` nodes of model inputs whose value keys are in ``keys``."""
    shapes = {}
    for node in _input_shapes(model).values():
        key = value_key(node.output(0))
        if key in keys:
            shapes[key] = (value_key(node.input_value(0)), node.get_output_element_type(0).numpy.name)
    return shapes


def _keep_donatable(model: Model, submodels: Sequence[Submodel]) -> None:
    """Marks a submodel's Parameter :data:`~hetero_sdk.rt_info.DONATABLE` where the model input it takes is
    (a stateful model's fixed-capacity cache, written in place) and no other submodel reads that input:
    a buffer donated to one submodel cannot be read by another."""
    for parameter in model.get_parameters():
        if not parameter.get_rt_info().get(rt_info.DONATABLE):
            continue
        key = value_key(parameter.output(0))
        readers = [sub for sub in submodels if key in sub.inputs]
        if len(readers) == 1:
            (sub,) = readers
            sub.model.get_parameters()[sub.inputs.index(key)].get_rt_info()[rt_info.DONATABLE] = True


def output_constants(model: Model) -> dict[str, np.ndarray]:
    """The values of model outputs that come straight from a Constant, by value key."""
    sources = [r.input_value(0) for r in model.get_results()]
    return {value_key(s): s.node.attrs["value"] for s in sources if s.node.type_name == "Constant"}


class _SubmodelBuilder:
    def __init__(self, model_name: str, index: int) -> None:
        self._name = f"{model_name}/subgraph{index}"
        self._index = index
        self._clones: dict[int, Node] = {}
        self._parameters: list[Node] = []
        self._input_keys: list[str] = []
        self._boundary: dict[str, Output] = {}
        self._results: list[Node] = []
        self._output_keys: list[str] = []

    def add(self, node: Node, part_of: dict[int, int], index: int) -> None:
        inputs = []
        for source in node.input_values():
            producer = source.node
            if part_of.get(id(producer)) == index:
                inputs.append(self._clones[id(producer)].output(source.index))
            elif producer.type_name == "Constant":
                inputs.append(self._constant(producer))
            else:
                inputs.append(self._input(source))
        clone = Node(node.type_name, inputs, node.attrs, name=node.friendly_name)
        clone.get_rt_info().update(node.get_rt_info())
        for mine, theirs in zip(clone.outputs(), node.outputs()):
            mine.set_names(theirs.names)
        self._clones[id(node)] = clone

    def add_output(self, output: Output, original_result: Node | None) -> None:
        key = value_key(output)
        if original_result is None and key in self._output_keys:
            return
        source = self._clones[id(output.node)].output(output.index)
        name = original_result.friendly_name if original_result is not None else f"hetero_out/{key}"
        self._results.append(Node("Result", [source], {}, name=name))
        self._output_keys.append(key)

    def finish(self, device: str) -> Submodel:
        model = Model(self._results, self._parameters, self._name)
        return Submodel(self._index, device, model, tuple(self._input_keys), tuple(self._output_keys))

    def _constant(self, producer: Node) -> Output:
        clone = self._clones.get(id(producer))
        if clone is None:
            clone = Node("Constant", [], producer.attrs, name=producer.friendly_name)
            self._clones[id(producer)] = clone
        return clone.output(0)

    def _input(self, source: Output) -> Output:
        key = value_key(source)
        if key not in self._boundary:
            is_model_input = source.node.type_name == "Parameter"
            name = source.node.friendly_name if is_model_input else f"hetero_in/{key}"
            parameter = Node(
                "Parameter", [], {"element_type": source.element_type, "shape": source.partial_shape}, name=name
            )
            if is_model_input:
                parameter.output(0).set_names(source.names)
            self._parameters.append(parameter)
            self._input_keys.append(key)
            self._boundary[key] = parameter.output(0)
        return self._boundary[key]
