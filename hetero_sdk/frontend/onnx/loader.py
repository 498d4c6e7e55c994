"""Reading an ONNX file into an ``onnx.ModelProto``: parsing, external data checked and memory-mapped
(never read into the proto: :mod:`~hetero_sdk.frontend.onnx.external_data`), and ONNX's own checker
(run once the nodes are known to translate, on the graph without its external weights). Parsing is
protobuf decoding by the ``onnx`` package: no code from the file runs."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError

from hetero_sdk.errors import ModelFormatError, ModelValidationError
from hetero_sdk.frontend.onnx.external_data import ExternalData, uses_external_data
from hetero_sdk.frontend.onnx.strings import check_strings

__all__ = ["LoadedProto", "check_proto", "load_proto"]

_MAX_DETAIL = 600
"""Characters of the checker's message kept in the error (it can list a whole node)."""


@dataclass(frozen=True)
class LoadedProto:
    """A parsed ONNX model, where it came from, and its external data.

    :ivar proto: the model; external tensors keep their references (their bytes are not read into it).
    :ivar source: the file or object it came from, for messages.
    :ivar path: the file, when read from one.
    :ivar external: its external data, checked and mapped; None when no tensor has any.
    """

    proto: onnx.ModelProto
    source: str
    path: Path | None = None
    external: ExternalData | None = None


def load_proto(model: str | os.PathLike[str] | bytes | onnx.ModelProto) -> LoadedProto:
    """Parses ``model`` (a path, the file's bytes, or a ``ModelProto``) and checks and maps its external
    data (:func:`check_proto` runs ONNX's checker on the result).

    :raises ModelFormatError: for a missing, truncated or corrupted file, a name that is not UTF-8 text,
        or external data that is missing, lies outside the model's folder or has a malformed field
        (naming the tensor and field).
    """
    if isinstance(model, onnx.ModelProto):
        check_strings(model, "ONNX model")
        source = f"ONNX model '{model.graph.name or '<unnamed>'}'"
        return LoadedProto(model, source, external=_external_data(model, source, None))
    if isinstance(model, (bytes, bytearray, memoryview)):
        proto = _parse(bytes(model), "<ONNX bytes>")
        return LoadedProto(proto, "<ONNX bytes>", external=_external_data(proto, "<ONNX bytes>", None))
    path = Path(model)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelFormatError(f"{path}: cannot read the model file: {exc.strerror or exc}") from None
    proto = _parse(data, str(path))
    del data
    return LoadedProto(proto, str(path), path, _external_data(proto, str(path), path.resolve().parent))


def _parse(data: bytes, source: str) -> onnx.ModelProto:
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise ModelFormatError(
            f"{source}: not a readable ONNX model ({len(data)} bytes): the protobuf is truncated or corrupted "
            f"({exc}); export the model again or check the download"
        ) from None
    if not proto.HasField("graph") or proto.ir_version <= 0:
        raise ModelFormatError(
            f"{source}: not an ONNX model: no graph or IR version in {len(data)} bytes; hetero-sdk reads "
            ".onnx files and its own .json format"
        )
    check_strings(proto, source)
    return proto


_PRIVATE_DOMAIN = "hetero_sdk.onnxruntime_default"
"""Where :func:`check_proto` moves the default-domain ops ONNX does not define while ONNX's checker runs."""


def _schemaless_default_nodes(proto: onnx.ModelProto) -> list[onnx.NodeProto]:
    """The nodes of the default domain whose op type ONNX does not define at any version, in the graph,
    its sub-graphs and the model's local functions."""
    nodes = [n for n in _nodes(proto) if n.domain in ("", "ai.onnx")]
    known = {n.op_type for n in nodes if onnx.defs.has(n.op_type)}
    return [n for n in nodes if n.op_type not in known]


def _nodes(proto: onnx.ModelProto) -> Iterator[onnx.NodeProto]:
    yield from _graph_nodes(proto.graph.node)
    for function in proto.functions:
        yield from _graph_nodes(function.node)


def _graph_nodes(nodes: Iterable[onnx.NodeProto]) -> Iterator[onnx.NodeProto]:
    for node in nodes:
        yield node
        for attribute in node.attribute:
            if attribute.HasField("g"):
                yield from _graph_nodes(attribute.g.node)
            for body in attribute.graphs:
                yield from _graph_nodes(body.node)


@contextlib.contextmanager
def _in_private_domain(proto: onnx.ModelProto, nodes: list[onnx.NodeProto]) -> Iterator[None]:
    """``nodes`` in :data:`_PRIVATE_DOMAIN` (imported by ``proto`` and its functions) for the ``with``
    block, restored after."""
    domains = [n.domain if n.HasField("domain") else None for n in nodes]
    importers = [proto, *proto.functions]
    imports = [len(i.opset_import) for i in importers]
    for importer in importers:
        importer.opset_import.add(domain=_PRIVATE_DOMAIN, version=1)
    for node in nodes:
        node.domain = _PRIVATE_DOMAIN
    try:
        yield
    finally:
        for node, domain in zip(nodes, domains, strict=True):
            if domain is None:
                node.ClearField("domain")
            else:
                node.domain = domain
        for importer, count in zip(importers, imports, strict=True):
            del importer.opset_import[count:]


@contextlib.contextmanager
def _external_tensors_emptied(proto: onnx.ModelProto) -> Iterator[None]:
    """Each external tensor of ``proto`` an empty tensor of its type for the ``with`` block (its shape
    and reference kept aside and put back after)."""
    saved = []
    for tensor in _tensors(proto):
        if uses_external_data(tensor):
            saved.append((tensor, list(tensor.dims), list(tensor.external_data)))
            del tensor.dims[:]
            tensor.dims.append(0)
            del tensor.external_data[:]
            tensor.ClearField("data_location")
    try:
        yield
    finally:
        for tensor, dims, references in saved:
            del tensor.dims[:]
            tensor.dims.extend(dims)
            tensor.external_data.extend(references)
            tensor.data_location = onnx.TensorProto.EXTERNAL


def _external_data(proto: onnx.ModelProto, source: str, folder: Path | None) -> ExternalData | None:
    """Checks and maps every external tensor of ``proto`` (files inside ``folder``, and none without
    one); None when no tensor keeps its data outside."""
    external = [t for t in _tensors(proto) if uses_external_data(t)]
    if not external:
        return None
    if folder is None:
        names = ", ".join(t.name for t in external[:5])
        raise ModelFormatError(
            f"{source}: tensors {names} keep their data in external files, which need the model's "
            "folder; pass the .onnx file's path instead"
        )
    data = ExternalData(folder, source)
    for tensor in external:
        data.check(tensor)
    return data


def _tensors(proto: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """Every tensor of ``proto``: initializers and tensor attributes, in the graph, its sub-graphs and
    the model's local functions."""
    yield from _graph_tensors(proto.graph)
    for function in proto.functions:
        yield from _node_tensors(function.node)


def _graph_tensors(graph: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    yield from graph.initializer
    yield from _node_tensors(graph.node)


def _node_tensors(nodes: Iterable[onnx.NodeProto]) -> Iterator[onnx.TensorProto]:
    for node in nodes:
        for attribute in node.attribute:
            if attribute.HasField("t"):
                yield attribute.t
            yield from attribute.tensors
            if attribute.HasField("g"):
                yield from _graph_tensors(attribute.g)
            for body in attribute.graphs:
                yield from _graph_tensors(body)


def check_proto(loaded: LoadedProto) -> None:
    """Runs ONNX's checker on ``loaded``. A model with external data is checked from its file, as
    ``onnx.checker.check_model(path)`` does: the checker then sees each external tensor's reference,
    not its bytes (checking the proto would serialize every weight into one more copy, and the
    references are :class:`~hetero_sdk.frontend.onnx.external_data.ExternalData`'s to check).

    Default-domain nodes of op types ONNX does not define (ONNX Runtime registers some there, such as
    ``SimplifiedLayerNormalization``, and a rule translates them: the caller checked that) are checked
    as ops of a private domain: their domain is rewritten in place for the check and restored, so that
    no copy of the weights is made. The model is then checked from the proto, its external tensors
    standing in as empty ones meanwhile (ONNX's checker would look for their files from the working
    folder; ExternalData checked them).

    :raises ModelValidationError: for a graph that fails ONNX's checks, naming the node.
    :raises ModelFormatError: for a model that Python's protobuf parsed but ONNX's C++ side cannot.
    """
    moved = _schemaless_default_nodes(loaded.proto)
    try:
        if moved:
            with _in_private_domain(loaded.proto, moved), _external_tensors_emptied(loaded.proto):
                onnx.checker.check_model(loaded.proto)
        elif loaded.external is not None and loaded.path is not None:
            onnx.checker.check_model(loaded.path)
        else:
            onnx.checker.check_model(loaded.proto)
    except onnx.checker.ValidationError as exc:
        detail = " ".join(str(exc).split())[:_MAX_DETAIL] or type(exc).__name__
        raise ModelValidationError(f"{loaded.source}: the graph fails ONNX's checks: {detail}") from None
    except UnicodeDecodeError as exc:  # the checker quoted text of the model that is not UTF-8
        raise ModelValidationError(
            f"{loaded.source}: the graph fails ONNX's checks, whose message quotes text that is not UTF-8 "
            f"({exc.object[max(exc.start - 60, 0) : exc.end + 20]!r}); fix the names where the model is made"
        ) from None
    except ValueError as exc:  # onnx's "Unable to parse proto from the given bytes"
        raise ModelFormatError(
            f"{loaded.source}: ONNX's checker cannot parse the model that protobuf read ({exc}); the file is "
            "corrupted or written by a non-conforming exporter: export it again"
        ) from None
