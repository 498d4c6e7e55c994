"""Nodes and their ports (outputs and inputs): the vertices and edges of a :class:`~hetero_sdk.Model`."""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from hetero_sdk.element_type import Type
from hetero_sdk.errors import DynamicRankError, ModelValidationError
from hetero_sdk.graph.op_def import OPS, OpDef
from hetero_sdk.shape import PartialShape

__all__ = ["Input", "Node", "Output"]

_name_counter = itertools.count()


def _generated_name(type_name: str) -> str:
    """``Relu_7``: the name of a node built without one (a Model renames it if a given name takes it)."""
    return f"{type_name}_{next(_name_counter)}"


class _Port:
    """What an output and an input port share: the node they belong to, their index on it, and the
    element type and shape of the tensor there (OpenVINO's getters and the matching properties)."""

    __slots__ = ("_index", "_node")

    def __init__(self, node: Node, index: int) -> None:
        self._node = node
        self._index = index

    @property
    def node(self) -> Node:
        """The node the port belongs to."""
        return self._node

    @property
    def index(self) -> int:
        """The port's index on its node."""
        return self._index

    def get_node(self) -> Node:
        """The node the port belongs to."""
        return self._node

    def get_index(self) -> int:
        """The port's index on its node."""
        return self._index

    @property
    def element_type(self) -> Type:
        """The element type of the tensor."""
        raise NotImplementedError

    @property
    def partial_shape(self) -> PartialShape:
        """The (partial) shape of the tensor; ``-1`` marks a dynamic dimension."""
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:
        """The static shape. :raises ValueError: when a dimension is dynamic."""
        return self.partial_shape.to_shape()

    def get_element_type(self) -> Type:
        """The element type of the tensor."""
        return self.element_type

    def get_partial_shape(self) -> PartialShape:
        """The (partial) shape of the tensor."""
        return self.partial_shape

    def get_shape(self) -> tuple[int, ...]:
        """The static shape. :raises ValueError: when a dimension is dynamic."""
        return self.shape

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _Port)
            and type(other) is type(self)
            and other._node is self._node
            and other._index == self._index
        )

    def __hash__(self) -> int:
        return hash((type(self), id(self._node), self._index))


class Output(_Port):
    """One output port of a node: the tensor an edge of the graph carries (like ``ov.Output``); its
    node is the producer."""

    __slots__ = ()

    @property
    def element_type(self) -> Type:
        """The element type of the tensor."""
        return self._node._output_types[self._index]

    @property
    def partial_shape(self) -> PartialShape:
        """The (partial) shape of the tensor; ``-1`` marks a dynamic dimension."""
        return self._node._output_shapes[self._index]

    @property
    def names(self) -> set[str]:
        """The tensor names. A Result's port carries the names of the tensor it consumes.

        Without explicit names a port is named after its node: ``name`` for port 0, ``name:i`` after.
        """
        node = self._node
        if node.type_name == "Result":
            return node.input_value(0).names
        explicit = node._output_names[self._index]
        if explicit is not None:
            return set(explicit)
        return {node.friendly_name if self._index == 0 else f"{node.friendly_name}:{self._index}"}

    @property
    def explicit_names(self) -> set[str] | None:
        """The names set on this port with :meth:`set_names`, or None when they follow the node's name."""
        explicit = self._node._output_names[self._index]
        return None if explicit is None else set(explicit)

    def get_names(self) -> set[str]:
        """The tensor names."""
        return self.names

    def set_names(self, names: Iterable[str]) -> None:
        """Replaces the tensor names of this port."""
        self._node._output_names[self._index] = set(names)

    @property
    def any_name(self) -> str:
        """One tensor name, chosen deterministically (the smallest).

        :raises ModelValidationError: when the port has no names (``set_names([])``, or a model file
            that gives none), as OpenVINO's ``get_any_name`` refuses; the port is still usable by index.
        """
        names = self.names
        if not names:
            raise ModelValidationError(
                f"port {self._index} of {self._node.type_name} '{self._node.friendly_name}' has no tensor names; "
                "use it by index, or give it a name with set_names"
            )
        return min(names)

    def get_any_name(self) -> str:
        """One tensor name, chosen deterministically (the smallest)."""
        return self.any_name

    def __repr__(self) -> str:
        name = f"'{self.any_name}'" if self.names else "no names"
        return (
            f"<Output: {name} from {self._node.type_name} '{self._node.friendly_name}' "
            f"port {self._index} {self.element_type.value}{self.partial_shape}>"
        )


class Input(_Port):
    """One input port of a node: where an edge of the graph ends (like ``ov.Input``); its node is the
    consumer. Its element type and shape are those of the output port it consumes, its source output."""

    __slots__ = ()

    @property
    def source_output(self) -> Output:
        """The output port this input consumes."""
        return self._node.input_value(self._index)

    def get_source_output(self) -> Output:
        """The output port this input consumes."""
        return self.source_output

    def replace_source_output(self, value: Output) -> None:
        """Reconnects this input to ``value``, as :meth:`Node.set_input`; re-run inference after."""
        self._node.set_input(self._index, value)

    @property
    def element_type(self) -> Type:
        """The element type of the consumed tensor."""
        return self.source_output.element_type

    @property
    def partial_shape(self) -> PartialShape:
        """The (partial) shape of the consumed tensor; ``-1`` marks a dynamic dimension."""
        return self.source_output.partial_shape

    def __repr__(self) -> str:
        return (
            f"<Input: port {self._index} of {self._node.type_name} '{self._node.friendly_name}' "
            f"{self.element_type.value}{self.partial_shape}>"
        )


class Node:
    """An operation in a model graph (like ``ov.Node``).

    A node has an op definition (:class:`~hetero_sdk.graph.OpDef`), attributes, input values
    (output ports of other nodes) and typed, shaped outputs computed by the op's shape and type
    inference when the node is built. Build nodes with the factories of :mod:`hetero_sdk.opset`
    rather than directly.

    :param op: the op's definition, or its type name (looked up in :data:`~hetero_sdk.graph.OPS`).
    :raises ModelValidationError: when inputs or attributes do not fit the op; the message names the
        node, its type and what was expected.
    :raises UnsupportedOperationError: when ``op`` names no defined op type.
    """

    def __init__(
        self,
        op: OpDef | str,
        inputs: Sequence[Output],
        attrs: Mapping[str, Any] | None = None,
        name: str | None = None,
    ) -> None:
        self._op = op if isinstance(op, OpDef) else OPS.get(op)
        self._inputs: list[Output] = list(inputs)
        self.attrs: dict[str, Any] = dict(attrs or {})
        self._friendly_name = name if name is not None else _generated_name(self._op.type_name)
        self._name_generated = name is None  # a Model may rename it if a given name takes it
        self._rt_info: dict[str, Any] = {}
        self._output_types: list[Type] = []
        self._output_shapes: list[PartialShape] = []
        self._output_names: list[set[str] | None] = []
        self.validate_and_infer_types()

    @property
    def op(self) -> OpDef:
        """The op's definition: its inputs, attributes, shape inference and family."""
        return self._op

    @property
    def type_name(self) -> str:
        """The op type (``MatMul``, ``Convolution``...)."""
        return self._op.type_name

    @property
    def version(self) -> str:
        """The opset the op type belongs to (``opset1``...)."""
        return self._op.version

    def get_type_name(self) -> str:
        """The op type (``MatMul``, ``Convolution``...)."""
        return self._op.type_name

    @property
    def friendly_name(self) -> str:
        """The node's name, unique within its model."""
        return self._friendly_name

    @friendly_name.setter
    def friendly_name(self, name: str) -> None:
        self._friendly_name = name
        self._name_generated = False

    def get_friendly_name(self) -> str:
        """The node's name, unique within its model."""
        return self._friendly_name

    def set_friendly_name(self, name: str) -> None:
        """Renames the node."""
        self.friendly_name = name

    def _rename_generated(self, taken: Collection[str]) -> None:
        """Gives a node whose name was generated a new generated name that is not in ``taken``."""
        assert self._name_generated, "only generated names are changed"
        while self._friendly_name in taken:
            self._friendly_name = _generated_name(self._op.type_name)

    def get_rt_info(self) -> dict[str, Any]:
        """The mutable runtime-info dict; HETERO reads the key ``"affinity"``."""
        return self._rt_info

    @property
    def rt_info(self) -> dict[str, Any]:
        """The mutable runtime-info dict."""
        return self._rt_info

    def get_attributes(self) -> dict[str, Any]:
        """The op's attributes (a copy)."""
        return dict(self.attrs)

    # -- inputs ------------------------------------------------------------------------------------

    def inputs(self) -> list[Input]:
        """The node's input ports, in input order (each knows its source output)."""
        return [Input(self, i) for i in range(len(self._inputs))]

    def input(self, index: int) -> Input:
        """Input port ``index``. :raises IndexError: naming the node and its number of inputs."""
        if not 0 <= index < len(self._inputs):
            raise IndexError(
                f"{self.type_name} '{self.friendly_name}' has {len(self._inputs)} input(s); port {index} does not exist"
            )
        return Input(self, index)

    def input_values(self) -> list[Output]:
        """The output ports this node consumes, in input order."""
        return list(self._inputs)

    def input_value(self, index: int) -> Output:
        """The output port consumed by input ``index``."""
        return self._inputs[index]

    def get_input_size(self) -> int:
        """The number of inputs."""
        return len(self._inputs)

    def set_input(self, index: int, value: Output) -> None:
        """Reconnects input ``index`` to ``value`` (used by transformations); re-run inference after."""
        self._inputs[index] = value

    def set_inputs(self, values: Sequence[Output]) -> None:
        """Replaces every input (used by graph rewrites); re-run inference after."""
        self._inputs = list(values)

    # -- outputs -----------------------------------------------------------------------------------

    def outputs(self) -> list[Output]:
        """The node's output ports."""
        return [Output(self, i) for i in range(len(self._output_types))]

    def output(self, index: int) -> Output:
        """Output port ``index``."""
        if not 0 <= index < len(self._output_types):
            raise IndexError(
                f"{self.type_name} '{self.friendly_name}' has {len(self._output_types)} output(s); "
                f"port {index} does not exist"
            )
        return Output(self, index)

    def get_output_size(self) -> int:
        """The number of outputs."""
        return len(self._output_types)

    def get_output_element_type(self, index: int) -> Type:
        """The element type of output ``index``."""
        return self._output_types[index]

    def get_output_partial_shape(self, index: int) -> PartialShape:
        """The partial shape of output ``index``."""
        return self._output_shapes[index]

    def get_output_shape(self, index: int) -> tuple[int, ...]:
        """The static shape of output ``index``."""
        return self._output_shapes[index].to_shape()

    # -- validation --------------------------------------------------------------------------------

    def validate_and_infer_types(self) -> None:
        """Checks inputs and attributes, and recomputes output element types and shapes.

        :raises ModelValidationError: naming this node when something does not fit.
        """
        try:
            self._op.check(self)
            specs = self._op.infer(self)
        except DynamicRankError as exc:
            if str(exc).startswith(f"{self.type_name} '{self.friendly_name}'"):
                raise
            raise DynamicRankError(f"{self.type_name} '{self.friendly_name}': {exc}") from None
        types = [t for t, _ in specs]
        shapes = [PartialShape.of(s) for _, s in specs]
        if len(self._output_names) != len(specs):
            self._output_names = [None] * len(specs)
        self._output_types = types
        self._output_shapes = shapes

    def error(self, message: str) -> ModelValidationError:
        """A :class:`ModelValidationError` about this node (for op definitions and passes)."""
        return ModelValidationError(f"{self.type_name} '{self.friendly_name}': {message}")

    def __repr__(self) -> str:
        outs = ", ".join(f"{t.value}{s}" for t, s in zip(self._output_types, self._output_shapes))
        return f"<{self.type_name}: '{self.friendly_name}' -> ({outs})>"
