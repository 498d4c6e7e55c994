"""What an export rule works with: the node being exported and an :class:`ExportContext` that names
ONNX tensors, adds ONNX nodes and initializers, and reads constant operands."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from hetero_sdk.element_type import Type
from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.frontend.onnx.types import ELEMENT_TYPES
from hetero_sdk.graph.node import Node, Output
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.registry import Registry

if TYPE_CHECKING:
    from hetero_sdk.graph.model import Model

__all__ = ["EXPORTERS", "ExportContext", "ExportRule", "Names", "NotExportable", "exporter", "onnx_type"]

_ONNX_TYPES = {t: code for code, t in ELEMENT_TYPES.items()}


def onnx_type(element_type: Type) -> int:
    """The ``TensorProto`` code of ``element_type``."""
    return _ONNX_TYPES[element_type]


class NotExportable(UnsupportedOperationError):
    """Raised by a rule for a node whose attributes or operands ONNX cannot express; the exporter
    collects these and reports every such node at once."""


class Names:
    """Tensor and node names unique across a model and all its bodies (ONNX forbids a body from
    reusing a name of an enclosing graph)."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def unique(self, base: str) -> str:
        """``base``, or ``base_1``, ``base_2``... when taken; the name is then taken."""
        name, count = base or "t", 0
        while name in self._taken:
            count += 1
            name = f"{base}_{count}"
        self._taken.add(name)
        return name


@dataclass
class ExportContext:
    """The state of one graph being written: its nodes and initializers, and the ONNX name of each
    SDK tensor exported so far.

    :ivar opset: the ``ai.onnx`` opset version written.
    :ivar names: the tensor names taken in the whole model.
    :ivar node_names: the node names taken in the whole model.
    :ivar values: the ONNX tensor name of each SDK port exported (or bound, for body inputs).
    :ivar nodes: the ONNX nodes of this graph, in order.
    :ivar initializers: this graph's initializers by name.
    :ivar constants: the values of this graph's Constant ports (initializers once read).
    :ivar consumed: the ports of this graph something reads.
    :ivar body: writes a body Model as an ONNX graph (set by the exporter, used by control flow).
    """

    opset: int
    names: Names
    node_names: Names
    values: dict[Output, str]
    nodes: list[onnx.NodeProto]
    initializers: dict[str, onnx.TensorProto]
    constants: dict[Output, np.ndarray]
    body: Callable[[Model, Sequence[str | None], str, Mapping[int, Type]], onnx.GraphProto]
    consumed: set[Output]
    node: Node | None = None
    outputs: list[str] | None = None

    # -- the node being exported -----------------------------------------------------------------------

    @property
    def current(self) -> Node:
        """The SDK node being exported."""
        assert self.node is not None
        return self.node

    @property
    def attrs(self) -> dict[str, Any]:
        """The node's attributes."""
        return self.current.attrs

    @property
    def name(self) -> str:
        """The node's friendly name (the main ONNX node's name)."""
        return self.current.friendly_name

    def out(self, index: int = 0) -> str:
        """The ONNX name the node's output ``index`` must be written to."""
        assert self.outputs is not None
        return self.outputs[index]

    def unsupported(self, what: str) -> NotExportable:
        """The error for this node: ONNX cannot express ``what``."""
        node = self.current
        return NotExportable(f"{node.type_name} '{node.friendly_name}': {what}")

    def used(self, index: int) -> bool:
        """Whether the node's output ``index`` is read by anything."""
        return self.current.output(index) in self.consumed

    def has_input(self, index: int) -> bool:
        """Whether the node has input ``index``."""
        return index < self.current.get_input_size()

    def port(self, index: int) -> Output:
        """The SDK port feeding input ``index``."""
        return self.current.input_value(index)

    def input(self, index: int) -> str:
        """The ONNX name of input ``index`` (a constant becomes an initializer the first time it is read)."""
        return self.value(self.port(index))

    def value(self, port: Output) -> str:
        """The ONNX name of ``port``."""
        if port not in self.values and port in self.constants:
            name = self.names.unique(port.any_name)
            self.initializers[name] = tensor(self.constants[port], name)
            self.values[port] = name
        return self.values[port]

    def constant(self, index: int) -> np.ndarray | None:
        """The value of input ``index`` when known while exporting, else None."""
        return constant_value(self.port(index))

    def required_constant(self, index: int, what: str) -> np.ndarray:
        """The value of input ``index``; ONNX needs it as an attribute.

        :raises NotExportable: when it is not known while exporting.
        """
        value = self.constant(index)
        if value is None:
            raise self.unsupported(f"{what} must be a constant: ONNX takes it as an attribute")
        return value

    def element_type(self, index: int) -> Type:
        """The element type of input ``index``."""
        return self.port(index).element_type

    def rank(self, index: int) -> int:
        """The rank of input ``index``."""
        return self.port(index).partial_shape.rank

    # -- writing -------------------------------------------------------------------------------------

    def const(self, value: Any, dtype: Any = np.int64, name: str = "const") -> str:
        """An initializer holding ``value`` (as ``dtype``), named after the node."""
        array = np.asarray(value, dtype=Type.of(dtype).numpy if isinstance(dtype, Type) else dtype)
        unique = self.names.unique(f"{self.name}/{name}")
        self.initializers[unique] = tensor(array, unique)
        return unique

    def emit(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str] | int = 1, **attrs: Any) -> list[str]:
        """Adds an ONNX node; ``outputs`` are names or a count of fresh names. Returns the output names.

        The first node a rule adds writing the node's output 0 takes the node's friendly name; the
        others are named ``friendly_name/OpType``.
        """
        if isinstance(outputs, int):
            outputs = [self.names.unique(f"{self.name}/{op_type}") for _ in range(outputs)]
        main = self.outputs is not None and bool(self.outputs) and outputs and outputs[0] == self.outputs[0]
        node_name = self.node_names.unique(self.name if main else f"{self.name}/{op_type}")
        kept = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, list(inputs), list(outputs), name=node_name, **kept))
        return list(outputs)

    def emit1(self, op_type: str, inputs: Sequence[str], output: str | None = None, **attrs: Any) -> str:
        """:meth:`emit` for a node with one output; returns its name."""
        return self.emit(op_type, inputs, [output] if output is not None else 1, **attrs)[0]

    def cast(self, name: str, source: Type, target: Type, output: str | None = None) -> str:
        """``name`` cast to ``target`` (the same name when it has that type already and no output is named)."""
        if source == target and output is None:
            return name
        return self.emit1("Cast", [name], output, to=onnx_type(target))

    def i64(self, index: int) -> str:
        """Input ``index`` as int64 (ONNX's index inputs)."""
        return self.cast(self.input(index), self.element_type(index), Type.i64)


def tensor(value: np.ndarray, name: str) -> onnx.TensorProto:
    """An ONNX tensor of ``value``."""
    array = np.asarray(value)
    if array.dtype.name == "bfloat16":
        proto = helper.make_tensor(name, onnx.TensorProto.BFLOAT16, array.shape, array.view(np.uint16).tobytes(), True)
        return proto
    if array.dtype.kind == "T":  # StringDType: ONNX's helpers take object arrays of str
        return numpy_helper.from_array(array.astype(object), name)
    return numpy_helper.from_array(array if array.flags.c_contiguous else array.copy(order="C"), name)


ExportRule = Callable[[ExportContext], None]
"""``rule(ctx)``: writes the ONNX nodes computing ``ctx.current``'s outputs into ``ctx.out(i)``;
raises :class:`NotExportable` for what ONNX cannot express."""

EXPORTERS: Registry[ExportRule] = Registry(
    "ONNX export rule", UnsupportedOperationError, hint="hetero_sdk.frontend.onnx_export.supported_ops() lists them"
)
"""The export rule of each op type."""

exporter = EXPORTERS
"""Registers the decorated rule for each op type named: ``@exporter("Relu")``."""
