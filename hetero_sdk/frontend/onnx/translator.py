"""Translating an ONNX graph (and its sub-graphs) into a :class:`~hetero_sdk.Model` of the opset.

Names follow the spec: graph inputs, outputs and initializers keep their ONNX names, a node's main op
takes the ONNX node's name (made unique), and the helper ops a rule adds are named ``node/Type``.
A sub-graph that reads a tensor of an enclosing graph gets it as an extra input (a captured value);
a captured constant is copied into the sub-graph instead, so shapes computed from it still fold.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import onnx

from hetero_sdk.element_type import Type
from hetero_sdk.errors import HeteroSDKError, ModelValidationError, UnsupportedOperationError
from hetero_sdk.extensions import missing_op_hint
from hetero_sdk.frontend.input_spec import InputSpec, resolve_inputs
from hetero_sdk.frontend.onnx.attributes import check_attention_mask, check_attribute_domains, check_function_axes
from hetero_sdk.frontend.onnx.external_data import ExternalData
from hetero_sdk.frontend.onnx.functions import function_body
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import find_rule
from hetero_sdk.frontend.onnx.types import ELEMENT_TYPES, element_type, onnx_type_name, tensor_value
from hetero_sdk.frontend.onnx.values import TensorSequence, Value, describe
from hetero_sdk.graph.model import Model
from hetero_sdk.graph.node import Node, Output
from hetero_sdk.ops.basic import constant, convert, parameter
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.rt_info import DIM_NAMES
from hetero_sdk.shape import DYNAMIC, PartialShape
from hetero_sdk.transformations.freeze_inputs import frozen_value

__all__ = ["Body", "GraphTranslator"]

Signature = tuple[Type, PartialShape]


class _Namer:
    """Unique friendly names within one graph."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def unique(self, base: str) -> str:
        name = base
        for n in itertools.count(1):
            if name not in self._used:
                break
            name = f"{base}_{n}"
        self._used.add(name)
        return name


class _Scope:
    """The tensors visible while translating one graph: its own, then its enclosing graph's.

    A body scope (``captures`` not None) turns an enclosing graph's tensor into a new Parameter of the
    body the first time the body reads it; an inline scope reads enclosing tensors directly.
    """

    def __init__(
        self,
        parent: _Scope | None,
        namer: _Namer,
        initializers: Mapping[str, onnx.TensorProto],
        captures: dict[Output, Node] | None,
        external: ExternalData | None = None,
    ) -> None:
        self.parent = parent
        self.namer = namer
        self.external: ExternalData | None = parent.external if parent is not None else external
        self.values: dict[str, Value] = {}
        self.initializers = dict(initializers)
        self.captures = captures
        self.known: set[int] = set() if parent is None or captures is not None else parent.known

    def define(self, name: str, value: Value) -> None:
        self.values[name] = value
        if isinstance(value, Output) and value.explicit_names is None and value.node.type_name not in ("Parameter",):
            value.set_names({name})

    def lookup(self, name: str, reader: str) -> Value:
        if name in self.values:
            return self.values[name]
        if name in self.initializers:
            tensor = self.initializers.pop(name)
            array = tensor_value(tensor, f"initializer '{name}'", self.external)
            node = constant(array, name=self.namer.unique(name), share=True)  # a mapped weight stays mapped
            self.known.add(id(node))
            self.define(name, node.output(0))
            return node.output(0)
        if self.parent is None:
            raise ModelValidationError(
                f"ONNX {reader} reads the tensor '{name}', which no node, input or initializer gives"
            )
        outer = self.parent.lookup(name, reader)
        if self.captures is None:
            return outer
        if not isinstance(outer, Output):
            raise UnsupportedOperationError(
                f"ONNX {reader} reads '{name}', {describe(outer)} of the enclosing graph: a sub-graph takes only "
                "tensors from outside (hetero-sdk resolves sequences and optionals while translating)"
            )
        value = constant_value(outer)
        if value is not None:  # (read-only: the enclosing graph's array is shared, not copied)
            node = constant(value, name=self.namer.unique(name), share=True)
        else:
            node = parameter(outer.partial_shape, outer.element_type, name=self.namer.unique(name))
            self.captures[outer] = node
        self.known.add(id(node))
        self.values[name] = node.output(0)
        return node.output(0)


@dataclass
class Body:
    """A translated sub-graph: its declared inputs, its outputs and the enclosing tensors it reads."""

    name: str
    parameters: list[Node]
    results: list[Output]
    captures: dict[Output, Node] = field(default_factory=dict)

    def model(self, captured: Sequence[Output]) -> Model:
        """The body as a Model taking its declared inputs, then ``captured`` (the op's extra inputs,
        shared by every body of the op: a body that does not read one gets an unused Parameter)."""
        extra = [
            self.captures.get(value)
            or parameter(value.partial_shape, value.element_type, name=f"{self.name}/unused_{i}")
            for i, value in enumerate(captured)
        ]
        return Model(list(self.results), [*self.parameters, *extra], name=self.name)


class GraphTranslator:
    """Translates one ONNX model: its main graph and, through node rules, its sub-graphs.

    :param versions: the model's opset version of each domain (``""`` for ``ai.onnx``).
    :param source: the file or object the model came from, for messages.
    :param inputs: what ``convert_model``'s ``input=`` sets on the graph's inputs (shapes used instead
        of the file's, element types, values that make an input a constant), by name or in input order.
    :param external: the model's external data (its tensors become views of the mapped files).
    """

    def __init__(
        self,
        versions: Mapping[str, int],
        source: str,
        inputs: Sequence[InputSpec] = (),
        external: ExternalData | None = None,
    ) -> None:
        self._versions = {("" if d == "ai.onnx" else d): v for d, v in versions.items()}
        self._source = source
        self._inputs = list(inputs)
        self._external = external

    def translate(self, proto: onnx.ModelProto) -> Model:
        """The Model of ``proto``'s main graph, whose nodes the caller has checked with
        :func:`~hetero_sdk.frontend.onnx.support.refuse_unsupported`. :raises ModelValidationError: naming
        the node a rule rejects."""
        graph = proto.graph
        namer = _Namer()
        initializer_names = {t.name for t in graph.initializer}
        scope = _Scope(None, namer, {t.name: t for t in graph.initializer}, None, self._external)
        parameters = []
        inputs = [v for v in graph.input if v.name not in initializer_names]  # with a default (IR < 4): a constant
        specs = resolve_inputs(self._inputs, [v.name for v in inputs], self._source)
        for value_info in inputs:
            spec = specs.get(value_info.name, InputSpec())
            where = f"input '{value_info.name}'"
            node = self._parameter(value_info, namer, where, given=spec.shape)
            scope.known.add(id(node))
            scope.values[value_info.name] = node.output(0)
            if spec.value is not None:
                frozen = constant(
                    frozen_value(spec.value, node.get_output_element_type(0), node.get_output_partial_shape(0), where),
                    dtype=node.get_output_element_type(0),
                    name=node.friendly_name,
                )
                frozen.output(0).set_names({value_info.name})
                scope.known.add(id(frozen))
                scope.values[value_info.name] = frozen.output(0)
                continue
            if spec.element_type is not None and spec.element_type != node.get_output_element_type(0):
                declared = node.get_output_element_type(0)
                node.attrs["element_type"] = spec.element_type
                node.validate_and_infer_types()
                cast = convert(node.output(0), declared, name=namer.unique(f"{value_info.name}/Convert"))
                scope.known.add(id(cast))
                scope.values[value_info.name] = cast.output(0)
            parameters.append(node)
        self._translate_nodes(graph, scope)
        results = self._graph_outputs(graph, scope)
        model = Model(results, parameters, name=graph.name or "onnx_model")
        return model

    # -- graphs ------------------------------------------------------------------------------------

    def _parameter(
        self,
        value_info: onnx.ValueInfoProto,
        namer: _Namer,
        where: str,
        fallback: Signature | None = None,
        given: PartialShape | None = None,
    ) -> Node:
        value_type = value_info.type
        if value_type.HasField("optional_type") and value_type.optional_type.elem_type.HasField("tensor_type"):
            # an optional tensor input is a tensor input the caller must feed (see values.py)
            value_type = value_type.optional_type.elem_type
        tensor_type = value_type.tensor_type
        if not value_type.HasField("tensor_type"):
            if fallback is None:
                kind = (value_type.WhichOneof("value") or "untyped").replace("_type", "")
                article = "an" if kind[0] in "aeiou" else "a"
                raise UnsupportedOperationError(
                    f"{self._source}: {where} is {article} {kind}, not a tensor: hetero-sdk's models take tensors "
                    "only, and resolve sequences and optionals while translating, where their length and "
                    "elements are known"
                )
            return parameter(fallback[1], fallback[0], name=namer.unique(value_info.name))
        if tensor_type.elem_type == 0 and fallback is not None:
            dtype = fallback[0]
        else:
            dtype = element_type(tensor_type.elem_type, f"{self._source}: {where}")
        if tensor_type.HasField("shape"):
            shape_dims = tensor_type.shape.dim
            # a negative dim_value (-1, -5: some exporters' "unknown") is dynamic, as ONNX Runtime reads it
            dims = [d.dim_value if d.dim_value >= 0 and d.HasField("dim_value") else DYNAMIC for d in shape_dims]
            symbols = [d.dim_param if d.HasField("dim_param") and d.dim_param else None for d in shape_dims]
            shape = PartialShape(dims)
            if fallback is not None and fallback[1].rank == shape.rank:
                shape = fallback[1].merge(shape) or shape
        elif fallback is not None:
            shape, symbols = fallback[1], []
        elif given is not None:
            shape, symbols = given, []
        else:
            raise UnsupportedOperationError(
                f"{self._source}: {where} has no shape (not even a rank); hetero-sdk needs each input's rank: "
                "give the input a shape in the file (onnx.tools.update_model_dims)"
            )
        if given is not None:
            if shape.merge(given) is None:
                raise ModelValidationError(
                    f"{self._source}: {where} is {shape} in the file; the shape {given} given for it does not fit"
                )
            symbols = [s if d == DYNAMIC else None for s, d in zip(symbols, given.dims)]
            shape = given
        node = parameter(shape, dtype, name=namer.unique(value_info.name))
        node.output(0).set_names({value_info.name})
        if any(symbols):
            node.get_rt_info()[DIM_NAMES] = symbols
        return node

    def _translate_nodes(
        self,
        graph: onnx.GraphProto | Sequence[onnx.NodeProto],
        scope: _Scope,
        versions: Mapping[str, int] | None = None,
    ) -> None:
        nodes = graph.node if isinstance(graph, onnx.GraphProto) else graph
        versions = self._versions if versions is None else versions
        for index, proto in enumerate(nodes):
            domain = "" if proto.domain in ("", "ai.onnx") else proto.domain
            version = versions.get(domain, self._versions.get(domain, 0))
            base = proto.name or f"{proto.op_type}_{index}"
            reader = f"{proto.op_type} '{base}'"
            inputs = [scope.lookup(n, reader) if n else None for n in proto.input]
            if domain == "":
                check_attribute_domains(proto, f"{reader} (ai.onnx opset {version})")
            found = find_rule(domain, proto.op_type, version)
            if found is None:
                self._expand(proto, version, domain, inputs, scope, versions, base, None)
                continue
            name = scope.namer.unique(base)

            def subgraphs(
                body: onnx.GraphProto, body_name: str, signatures: Sequence[Signature | None], inline: bool
            ) -> Any:
                return self._inline(body, scope) if inline else self._body(body, body_name, scope, signatures)

            ctx = NodeContext(proto, inputs, version, name, subgraphs, scope.external)
            try:
                outputs = list(found.translate(ctx))
            except UnsupportedOperationError as exc:
                # a case the rule leaves out (an optional output, an attribute value) may still be in
                # the op's ONNX function body
                self._expand(proto, version, domain, inputs, scope, versions, base, exc)
                continue
            except HeteroSDKError as exc:
                if str(exc).startswith("ONNX "):
                    raise
                raise type(exc)(f"ONNX {ctx.describe()}: {exc}") from exc
            except (ValueError, TypeError, IndexError, ArithmeticError) as exc:
                raise ctx.error(f"{type(exc).__name__}: {exc}") from exc
            self._name_new_nodes(outputs, name, scope)
            for position, output_name in enumerate(proto.output):
                value = outputs[position] if position < len(outputs) else None
                if not output_name:
                    continue
                if value is None:
                    raise ctx.unsupported(f"output {position} ('{output_name}')")
                scope.define(output_name, value)

    def _expand(
        self,
        proto: onnx.NodeProto,
        version: int,
        domain: str,
        inputs: Sequence[Value | None],
        scope: _Scope,
        versions: Mapping[str, int],
        base: str,
        reason: UnsupportedOperationError | None,
    ) -> None:
        """Translates ``proto`` through its ONNX function body, or raises ``reason`` (or a new error)."""
        if domain == "" and inputs and isinstance(inputs[0], Output):
            check_function_axes(proto, inputs[0].partial_shape.rank, f"{proto.op_type} '{base}'")
            mask = inputs[3] if len(inputs) > 3 and isinstance(inputs[3], Output) else None
            where = f"{proto.op_type} '{base}'"
            check_attention_mask(proto, inputs[0].element_type, None if mask is None else mask.element_type, where)
        body = function_body(proto, version, domain, inputs, scope.namer.unique(base))
        if body is None:
            if reason is not None:
                raise reason
            hint = missing_op_hint(proto.op_type, domain=domain)
            raise UnsupportedOperationError(
                f"{self._source}: no rule translates {proto.op_type} '{base}' (opset {version})"
                + (f"; {hint}" if hint else "")
            )
        self._translate_nodes(body.nodes, scope, {**versions, **body.versions})

    def _name_new_nodes(self, outputs: Sequence[Value | None], name: str, scope: _Scope) -> None:
        """Names the ops a rule created: the first output's producer gets ``name``, the others ``name/Type``."""
        ports = [p for o in outputs for p in (o.items if isinstance(o, TensorSequence) else [o])]
        stack = [o.node for o in ports if isinstance(o, Output)]
        fresh: list[Node] = []
        while stack:
            node = stack.pop()
            if id(node) in scope.known:
                continue
            scope.known.add(id(node))
            fresh.append(node)
            stack.extend(v.node for v in node.input_values())
        main = ports[0].node if ports and isinstance(ports[0], Output) else None
        for node in fresh:
            if node is main:
                node.set_friendly_name(name)
            else:
                node.set_friendly_name(scope.namer.unique(f"{name}/{node.type_name}"))

    def _graph_outputs(self, graph: onnx.GraphProto, scope: _Scope) -> list[Output]:
        """The graph's outputs, each a port named after its ONNX output alone (copied where a port
        would carry two names: an input given back, or one tensor listed twice)."""
        claimed: set[Output] = set()
        results = []
        for value_info in graph.output:
            port = _tensor(scope.lookup(value_info.name, f"graph output '{value_info.name}'"), value_info.name)
            self._check_declared_type(graph, value_info, port)
            if port in claimed or port.node.type_name == "Parameter":
                copy = convert(port, port.element_type, name=scope.namer.unique(value_info.name))
                port = copy.output(0)
            port.set_names({value_info.name})
            claimed.add(port)
            results.append(port)
        return results

    def _check_declared_type(self, graph: onnx.GraphProto, value_info: onnx.ValueInfoProto, port: Output) -> None:
        """Refuses a graph output whose declared element type is not the one its node gives (ONNX Runtime
        refuses it too); a declared shape that differs is left to the translated one, as ONNX Runtime does."""
        declared = ELEMENT_TYPES.get(value_info.type.tensor_type.elem_type)
        if declared is None or declared == port.element_type:
            return
        name = value_info.name
        found = [(i, n) for i, n in enumerate(graph.node) if name in n.output]
        source = f"the input or initializer '{name}'"
        if found:
            index, producer = found[0]
            source = f"node '{producer.name or f'{producer.op_type}_{index}'}' ({producer.op_type})"
        raise ModelValidationError(
            f"{self._source}: graph output '{name}' is declared {onnx_type_name(value_info.type.tensor_type.elem_type)}"
            f" ({declared}), but {source} gives {port.element_type} (opset {self._versions.get('', 'not imported')}); "
            f"correct the output's elem_type in the file (onnx.shape_inference.infer_shapes shows the inferred one)"
        )

    def _body(self, graph: onnx.GraphProto, name: str, outer: _Scope, signatures: Sequence[Signature | None]) -> Body:
        namer = _Namer()
        scope = _Scope(outer, namer, {t.name: t for t in graph.initializer}, captures={})
        parameters = []
        for index, value_info in enumerate(graph.input):
            fallback = signatures[index] if index < len(signatures) else None
            node = self._parameter(value_info, namer, f"input '{value_info.name}' of sub-graph {name}", fallback)
            scope.known.add(id(node))
            scope.values[value_info.name] = node.output(0)
            parameters.append(node)
        self._translate_nodes(graph, scope)
        results = [_tensor(scope.lookup(v.name, f"sub-graph {name} output"), v.name, name) for v in graph.output]
        assert scope.captures is not None
        return Body(name, parameters, results, scope.captures)

    def _inline(self, graph: onnx.GraphProto, outer: _Scope) -> list[Value]:
        if graph.input:
            raise ModelValidationError(f"{self._source}: a sub-graph with inputs cannot be inlined")
        scope = _Scope(outer, outer.namer, {t.name: t for t in graph.initializer}, captures=None)
        self._translate_nodes(graph, scope)
        return [scope.lookup(v.name, "inlined sub-graph output") for v in graph.output]


def _tensor(value: Value, name: str, body: str | None = None) -> Output:
    """``value``, the output ``name`` of the graph (or sub-graph ``body``), when it is a tensor.

    :raises UnsupportedOperationError: for a sequence or an empty optional, which no model returns.
    """
    if isinstance(value, Output):
        return value
    where = f"sub-graph {body}" if body else "the graph"
    raise UnsupportedOperationError(
        f"output '{name}' of {where} is {describe(value)}: hetero-sdk's models give tensors only (sequences "
        "and optionals are resolved while translating and cannot leave a graph)"
    )
