"""What a translation rule sees of one ONNX node: its inputs as SDK outputs, its attributes with ONNX's
defaults, its opset version, and the means to translate its sub-graphs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np
import onnx

from hetero_sdk.element_type import Type
from hetero_sdk.errors import ModelValidationError, UnsupportedOperationError
from hetero_sdk.frontend.onnx.attributes import read_flag
from hetero_sdk.frontend.onnx.external_data import ExternalData
from hetero_sdk.frontend.onnx.types import tensor_value
from hetero_sdk.frontend.onnx.values import TensorSequence, Value, describe
from hetero_sdk.graph.node import Output
from hetero_sdk.ops.basic import constant
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.ops.movement import transpose

__all__ = ["REQUIRED", "NodeContext"]

REQUIRED: Final[Any] = object()
"""The default of :meth:`NodeContext.attr` for an attribute the node must have."""


class NodeContext:
    """One ONNX node being translated.

    :param proto: the node.
    :param inputs: its inputs, None where the ONNX input name is empty (an omitted optional input).
    :param version: the opset version of the node's domain in the model.
    :param name: the unique friendly name its main SDK node gets.
    :param subgraphs: translates a sub-graph attribute: ``subgraphs(graph, signatures, inline)``.
    :param external: the model's external data, where a tensor attribute may keep its values.
    """

    def __init__(
        self,
        proto: onnx.NodeProto,
        inputs: Sequence[Value | None],
        version: int,
        name: str,
        subgraphs: Callable[..., Any],
        external: ExternalData | None = None,
    ) -> None:
        self.proto = proto
        self.external = external
        self.inputs = list(inputs)
        self.version = version
        self.name = name
        self._subgraphs = subgraphs
        self._attributes = {a.name: a for a in proto.attribute}

    @property
    def op_type(self) -> str:
        """The ONNX op type."""
        return self.proto.op_type

    @property
    def domain(self) -> str:
        """The ONNX domain (``ai.onnx`` for the default one)."""
        return self.proto.domain or "ai.onnx"

    @property
    def output_count(self) -> int:
        """How many outputs the node lists (including empty names of unwanted optional outputs)."""
        return len(self.proto.output)

    def wants_output(self, index: int) -> bool:
        """Whether output ``index`` is listed with a name (optional outputs may be left out)."""
        return index < len(self.proto.output) and bool(self.proto.output[index])

    # -- inputs ------------------------------------------------------------------------------------

    def has_input(self, index: int) -> bool:
        """Whether input ``index`` is given (present and not an empty name)."""
        return index < len(self.inputs) and self.inputs[index] is not None

    def input(self, index: int) -> Output:
        """Input ``index``, a tensor. :raises ModelValidationError: when the node does not give it, or
        gives a sequence or an empty optional."""
        value = self.value(index)
        if value is None:
            raise self.error(f"input {index} is required but not given")
        return value

    def optional_input(self, index: int) -> Output | None:
        """Input ``index`` (a tensor), or None when it is not given."""
        return self.value(index)

    def value(self, index: int) -> Output | None:
        """Input ``index`` when it is a tensor, None when it is not given.

        :raises ModelValidationError: when it is a sequence or an empty optional.
        """
        value = self.any_input(index)
        if value is not None and not isinstance(value, Output):
            raise self.error(f"input {index} is {describe(value)}; this input takes a tensor")
        return value

    def any_input(self, index: int) -> Value | None:
        """Input ``index`` whatever it is (a tensor, a :class:`~.values.TensorSequence`, an empty
        optional), or None when it is not given."""
        return self.inputs[index] if index < len(self.inputs) else None

    def sequence(self, index: int) -> TensorSequence:
        """Input ``index``, a sequence known while translating. :raises ModelValidationError: otherwise."""
        value = self.any_input(index)
        if not isinstance(value, TensorSequence):
            raise self.error(f"input {index} is {describe(value) if value is not None else 'not given'}; "
                             "this input takes a sequence")  # fmt: skip
        return value

    def input_of_rank(self, index: int, rank: int) -> Output:
        """Input ``index``, which the op needs of rank ``rank``: when its rank is dynamic (an ``If`` whose
        branches give different ranks made it), an identity Transpose of ``rank`` axes gives it that
        rank, and fails when it runs on a tensor of another rank (as the ONNX op would)."""
        value = self.input(index)
        if value.partial_shape.rank_is_static:
            return value
        return transpose(value, self.const(list(range(rank)), np.int64)).output(0)

    def constant_input(self, index: int) -> np.ndarray | None:
        """The value of input ``index`` when it is known while translating (a constant or a folded shape)."""
        value = self.optional_input(index)
        return None if value is None else constant_value(value)

    def static_input(self, index: int, what: str) -> np.ndarray:
        """The value of input ``index``, which this translation needs known while translating.

        :raises UnsupportedOperationError: when it is computed at run time.
        """
        value = self.constant_input(index)
        if value is None:
            raise self.unsupported(f"{what} (input {index}) must be a constant or computable from static shapes")
        return value

    # -- attributes --------------------------------------------------------------------------------

    def has_attr(self, name: str) -> bool:
        """Whether the node sets attribute ``name``."""
        return name in self._attributes

    def attr(self, name: str, default: Any = REQUIRED) -> Any:
        """Attribute ``name`` as a Python value (int, float, str, lists of them, an array for a tensor,
        the ``GraphProto`` of a sub-graph), or ``default`` when the node does not set it.

        :raises ModelValidationError: when a required attribute is missing.
        """
        attribute = self._attributes.get(name)
        if attribute is None:
            if default is REQUIRED:
                raise self.error(f"the required attribute '{name}' is missing")
            return default
        kind = attribute.type
        if kind == onnx.AttributeProto.INT:
            return int(attribute.i)
        if kind == onnx.AttributeProto.FLOAT:
            return float(attribute.f)
        if kind == onnx.AttributeProto.STRING:
            return self._text(name, attribute.s)
        if kind == onnx.AttributeProto.INTS:
            return [int(v) for v in attribute.ints]
        if kind == onnx.AttributeProto.FLOATS:
            return [float(v) for v in attribute.floats]
        if kind == onnx.AttributeProto.STRINGS:
            return [self._text(name, s) for s in attribute.strings]
        if kind == onnx.AttributeProto.TENSOR:
            return tensor_value(attribute.t, f"{self.describe()} attribute '{name}'", self.external)
        if kind == onnx.AttributeProto.GRAPH:
            return attribute.g
        raise self.unsupported(f"attribute '{name}' of kind {onnx.AttributeProto.AttributeType.Name(kind)}")

    def flag(self, name: str, default: bool) -> bool:
        """Integer attribute ``name`` read as ONNX's booleans are written: 0 or 1 (``default`` when the
        node does not set it). :raises ModelValidationError: for any other value."""
        return read_flag(name, self.attr(name, int(default)), self.describe())

    def axis(self, name: str, default: int, rank: int, *, extra: int = 0) -> int:
        """Attribute ``name`` read as an axis of a tensor of ``rank`` dims (``rank + extra`` for an axis of
        the output that adds ``extra`` dims), made non-negative (``default`` when the node does not set it).

        :raises ModelValidationError: for an axis outside ``[-rank, rank)`` (every axis of a scalar).
        """
        return self.check_axis(self.attr(name, default), rank + extra, f"attribute {name}")

    def check_axis(self, axis: int, rank: int, what: str) -> int:
        """``axis`` (of a tensor of ``rank`` dims) made non-negative. :raises ModelValidationError: for
        an axis outside ``[-rank, rank)`` (every axis of a scalar), naming ``what`` holds it."""
        if not isinstance(axis, int) or not -rank <= axis < rank:
            expected = f"expected {-rank}..{rank - 1}" if rank else "a scalar has no axis"
            raise self.error(f"{what}: axis {axis!r} is out of range for rank {rank}", expected)
        return axis % rank

    def _text(self, name: str, value: bytes) -> str:
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise self.error(f"attribute {name} holds {value[:40]!r}, which is not UTF-8 text") from None

    # -- building ----------------------------------------------------------------------------------

    def const(self, value: Any, dtype: Type | np.dtype | type | None = None) -> Output:
        """A Constant output holding ``value`` (named after this node when the rule is done)."""
        array = np.asarray(value, dtype=None if dtype is None else (dtype.numpy if isinstance(dtype, Type) else dtype))
        return constant(array).output(0)

    def subgraph(self, attribute: str, signatures: Sequence[tuple[Type, Any] | None] = ()) -> Any:
        """Translates sub-graph ``attribute`` into a body (see ``translator.Body``).

        :param signatures: ``(element type, shape)`` per declared body input, used where the file does
            not declare them (None: use the file's).
        """
        return self._subgraphs(self.attr(attribute), f"{self.name}/{attribute}", signatures, inline=False)

    def inline_subgraph(self, attribute: str) -> list[Output]:
        """Translates sub-graph ``attribute`` (which takes no inputs) into the enclosing graph; returns
        its outputs. Used where a branch is known while translating."""
        outputs: list[Output] = self._subgraphs(self.attr(attribute), self.name, (), inline=True)
        return outputs

    # -- errors ------------------------------------------------------------------------------------

    def describe(self) -> str:
        """The node as messages name it: ``Conv 'conv1' (ai.onnx opset 13)``."""
        return f"{self.op_type} '{self.name}' ({self.domain} opset {self.version})"

    def error(self, problem: str, hint: str = "") -> ModelValidationError:
        """A :class:`ModelValidationError` naming this node."""
        return ModelValidationError(f"ONNX {self.describe()}: {problem}" + (f"; {hint}" if hint else ""))

    def unsupported(self, problem: str) -> UnsupportedOperationError:
        """An :class:`UnsupportedOperationError` naming this node: a case no rule translates."""
        return UnsupportedOperationError(f"ONNX {self.describe()}: {problem} is not supported by hetero-sdk")
