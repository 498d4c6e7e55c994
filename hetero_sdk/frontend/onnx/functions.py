"""ONNX ops defined as functions of other ops (``LayerNormalization``, ``Shrink``, ``Swish``...): where
no rule translates such an op, its function body from ``onnx.defs`` replaces the node, with the
node's attributes and tensor names substituted, and the body's nodes are translated instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import onnx
from onnx import defs, helper

from hetero_sdk.frontend.onnx.types import ELEMENT_TYPES
from hetero_sdk.frontend.onnx.values import Value
from hetero_sdk.graph.node import Output

__all__ = ["FunctionBody", "function_body", "has_function"]

_ONNX_CODES = {t: code for code, t in ELEMENT_TYPES.items()}


def _schema(op_type: str, version: int, domain: str) -> Any:
    """The op's schema (typed Any: onnx's stubs lack its function accessors), or None (also for a domain
    ONNX does not define, whose opset versions are the model's own and may be any int64)."""
    if domain not in defs.C.schema_version_map():
        return None
    try:
        return defs.get_schema(op_type, max_inclusive_version=version, domain=domain)
    except defs.SchemaError:
        return None


def has_function(op_type: str, version: int, domain: str) -> bool:
    """Whether ONNX defines ``op_type`` (at opset ``version``) as a function of other ops."""
    schema = _schema(op_type, version, domain)
    return schema is not None and (schema.has_function or schema.has_context_dependent_function)


class FunctionBody:
    """The nodes replacing one node, and the opset versions they are written against."""

    def __init__(self, nodes: list[onnx.NodeProto], versions: dict[str, int]) -> None:
        self.nodes = nodes
        self.versions = versions


def _type_proto(value: Output | None) -> bytes:
    if value is None:
        return onnx.TypeProto().SerializeToString()
    code = _ONNX_CODES.get(value.element_type, onnx.TensorProto.UNDEFINED)
    dims = [d if d >= 0 else None for d in value.partial_shape.dims]
    return helper.make_tensor_type_proto(code, dims).SerializeToString()


def function_body(
    node: onnx.NodeProto, version: int, domain: str, inputs: Sequence[Value | None], prefix: str
) -> FunctionBody | None:
    """The function body standing for ``node``, its names bound to the node's, or None.

    :param inputs: the node's inputs (their types choose the body of context-dependent functions).
    :param prefix: prepended to the body's own tensor names, to keep them apart from the graph's.
    """
    schema = _schema(node.op_type, version, domain)
    if schema is None:
        return None
    function = onnx.FunctionProto()
    if schema.has_context_dependent_function:
        types = [_type_proto(v if isinstance(v, Output) else None) for v in inputs]
        usable = [v for v in schema.context_dependent_function_opset_versions if v <= version]
        raw = (
            schema.get_context_dependent_function_with_opset_version(max(usable), node.SerializeToString(), types)
            if usable
            else None
        )
    elif schema.has_function:
        usable = [v for v in schema.function_opset_versions if v <= version]
        raw = schema.get_function_with_opset_version(max(usable)) if usable else None
    else:
        return None
    if raw is None:
        return None
    function.ParseFromString(raw)
    defaults = {name: a.default_value for name, a in schema.attributes.items() if a.default_value.type}
    given = {a.name: a for a in node.attribute}
    names = {formal: actual for formal, actual in zip(function.input, node.input)}
    names.update({formal: "" for formal in list(function.input)[len(node.input) :]})
    names.update(zip(function.output, node.output))
    nodes = []
    for inner in function.node:
        copy = onnx.NodeProto()
        copy.CopyFrom(inner)
        copy.name = f"{prefix}/{inner.name or inner.op_type}"
        _bind_attributes(copy, given, defaults)
        _rename(copy, names, prefix)
        nodes.append(copy)
    return FunctionBody(nodes, {entry.domain: entry.version for entry in function.opset_import})


def _rename(node: onnx.NodeProto, names: dict[str, str], prefix: str) -> None:
    """Binds a body node's tensor names: formal inputs and outputs to the caller's, the body's own
    names under ``prefix``, in the node and in the sub-graphs it carries (which may read them)."""

    def renamed(name: str) -> str:
        return names.get(name, f"{prefix}/{name}") if name else ""

    node.input[:] = [renamed(n) for n in node.input]
    node.output[:] = [renamed(n) for n in node.output]
    for attribute in node.attribute:
        for graph in [attribute.g] if attribute.HasField("g") else list(attribute.graphs):
            for value in [*graph.input, *graph.output, *graph.value_info]:
                value.name = renamed(value.name)
            for tensor in graph.initializer:
                tensor.name = renamed(tensor.name)
            for inner in graph.node:
                _rename(inner, names, prefix)


def _bind_attributes(
    node: onnx.NodeProto, given: dict[str, onnx.AttributeProto], defaults: dict[str, onnx.AttributeProto]
) -> None:
    """Replaces attributes that refer to the calling node's (``ref_attr_name``) by their values."""
    bound = []
    for attribute in node.attribute:
        if not attribute.ref_attr_name:
            bound.append(attribute)
            continue
        source = given.get(attribute.ref_attr_name) or defaults.get(attribute.ref_attr_name)
        if source is None:
            continue  # an optional attribute the caller left out
        value = onnx.AttributeProto()
        value.CopyFrom(source)
        value.name = attribute.name
        bound.append(value)
    del node.attribute[:]
    node.attribute.extend(bound)
