"""Reading the native format back into a :class:`~hetero_sdk.Model`.

Reading never runs code from the file: the document is parsed with :mod:`json`, arrays are views made
with ``np.frombuffer`` (of the weights file mapped read-only: the weights are not copied), and op
types are looked up by name in the op registry (an unknown one is an error, never an import).
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
from pathlib import Path
from typing import Any, NoReturn

from hetero_sdk.errors import (
    BlobFormatError,
    ModelFormatError,
    ModelValidationError,
    UnknownOpTypeError,
    UnsupportedOperationError,
)
from hetero_sdk.extensions import load_installed, missing_op_hint
from hetero_sdk.graph.model import Model
from hetero_sdk.graph.node import Node
from hetero_sdk.ops import OPS
from hetero_sdk.serialization import container
from hetero_sdk.serialization.schema import FORMAT_NAME, SUBGRAPH_TAG, check_version, field, format_error
from hetero_sdk.serialization.values import decode_attr
from hetero_sdk.serialization.weights import WeightsView
from hetero_sdk.shape import PartialShape

__all__ = ["document_to_model", "model_from_bytes", "model_from_frame", "parse_document", "read_model"]

_EMPTY_WEIGHTS = {"size": 0, "sha256": hashlib.sha256(b"").hexdigest()}
_EDITED = "the file was edited, or written by an SDK whose op definitions differ; re-save the model"


def read_model(path: str | os.PathLike[str], weights: str | os.PathLike[str] | None = None) -> Model:
    """Reads a model written by :func:`~hetero_sdk.serialization.save_model`.

    :param path: the graph file (``model.json``).
    :param weights: the weights file; by default the graph file's stem with ``.bin``. It may be
        absent when the model has no weights.
    :raises ModelFormatError: when either file is missing, truncated, corrupted (checksum mismatch,
        offsets out of range), of a newer format version, not valid JSON, or describes an invalid
        graph (an unknown producer...); the message names the file, the place (JSON path, node, line
        and column, or byte offset) and what to do.
    :raises UnknownOpTypeError: (an ``UnsupportedOperationError`` and a ``ModelFormatError``) for a node
        of an op type this SDK does not define, naming the op type, the node and the file.
    """
    path = Path(path)
    source = str(path)
    document = parse_document(_read(path, "the model file", "check the path"), source)
    summary = field(document, "weights", dict, source, "", default=_EMPTY_WEIGHTS)
    bin_path = Path(weights) if weights is not None else path.with_suffix(".bin")
    if bin_path == path:
        raise format_error(source, "", "the graph file cannot be its own weights file", "name it model.json")
    needed = field(summary, "size", int, source, "weights")
    data: bytes | mmap.mmap = b""
    if needed != 0 or bin_path.exists():
        data = _map(
            bin_path,
            f"the weights file ({source} needs {needed} bytes of weights)",
            f"put {bin_path.name} (saved with {path.name}) beside it, or pass weights=",
        )
    return document_to_model(document, WeightsView(data, summary, source, str(bin_path)), source)


def model_from_bytes(data: bytes | bytearray | memoryview, source: str = "<blob>") -> Model:
    """Reads a model from the byte string :func:`~hetero_sdk.serialization.model_to_bytes` returned.

    :param data: the bytes (copied first unless they are immutable ``bytes``).
    :param source: a name for the bytes in error messages (the blob or file they came from).
    :raises ModelFormatError: for truncated, foreign, corrupted or newer-version bytes, or an invalid
        model; the message names ``source`` and the byte offset or node at fault.
    :raises UnknownOpTypeError: (also a ``ModelFormatError``) for a node of an op type this SDK does not
        define.
    """
    blob = data if isinstance(data, bytes) else bytes(data)
    document_bytes, weights, base = container.unpack(blob, source)
    document = parse_document(document_bytes, source)
    summary = field(document, "weights", dict, source, "", default=_EMPTY_WEIGHTS)
    return document_to_model(document, WeightsView(weights, summary, source, source, base), source)


def model_from_frame(payload: bytes, where: str, frame: str = "model") -> Model:
    """Reads the model an exported blob's ``frame`` holds (bytes of :func:`model_to_bytes`).

    A defect in the bytes is the blob's, so it is reported as one; an op whose extension is not
    installed here is not: the blob is sound and the error names the op and its distribution.

    :param where: the blob, for messages (``"TEMPLATE blob"``).
    :raises BlobFormatError: for truncated, corrupted or invalid model bytes, naming ``where`` and ``frame``.
    :raises UnknownOpTypeError: for an op type nobody defines here.
    """
    try:
        return model_from_bytes(payload, source=where)
    except UnknownOpTypeError:
        raise
    except ModelFormatError as exc:
        raise BlobFormatError(f"{where} frame {frame!r} is malformed: {exc}") from exc


def parse_document(raw: bytes | memoryview, source: str) -> dict[str, Any]:
    """Parses the JSON document and checks its format name and version.

    :raises ModelFormatError: for bytes that are not UTF-8 JSON (naming line and column), a document of
        another format, or a newer version (naming the file's version and the one this SDK reads).
    """
    try:
        text = bytes(raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise format_error(source, f"byte offset {exc.start}", "the document is not UTF-8 text") from None
    try:
        document = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise format_error(
            source, f"line {exc.lineno}, column {exc.colno}", f"malformed JSON: {exc.msg}", "fix the JSON or re-save"
        ) from None
    except _NonStandardLiteral as exc:
        raise format_error(source, "", str(exc), 'the format spells non-finite floats as {"$float": ...}') from None
    except ValueError as exc:  # e.g. an integer with more digits than Python parses
        raise format_error(source, "", f"malformed JSON: {exc}", "fix the JSON or re-save") from None
    except RecursionError:
        raise format_error(source, "", "the JSON is nested too deeply") from None
    if type(document) is not dict:
        raise format_error(source, "top level", "must be a JSON object")
    name = document.get("format")
    if name != FORMAT_NAME:
        raise format_error(
            source,
            "format",
            f"is {name!r}, not {FORMAT_NAME!r}: this is not a hetero-sdk model",
            "read ONNX files through their frontend; write native files with hetero_sdk.save_model",
        )
    check_version(field(document, "version", int, source, ""), source, "version", "save the model again")
    return document


def document_to_model(document: dict[str, Any], weights: WeightsView, source: str) -> Model:
    """Builds the model a parsed document describes, reading its arrays from ``weights``.

    :raises ModelFormatError: naming the JSON path and node at fault.
    """
    model = _build_graph(document, weights, source, "")
    weights.verify()
    return model


def _build_graph(document: dict[str, Any], weights: WeightsView, source: str, path: str) -> Model:
    """The model (or sub-graph) of a graph document; ``path`` prefixes the JSON paths in messages."""
    entries = field(document, "nodes", list, source, path)
    declared = {e["name"] for e in entries if type(e) is dict and type(e.get("name")) is str}
    by_name: dict[str, Node] = {}
    for i, entry in enumerate(entries):
        node = _build_node(entry, f"{path}nodes[{i}]", by_name, declared, weights, source)
        by_name[node.friendly_name] = node
    parameters = _listed(document, "parameters", "Parameter", by_name, source)
    results = _listed(document, "results", "Result", by_name, source)
    sinks = _listed(document, "sinks", "Assign", by_name, source) if "sinks" in document else []
    name = field(document, "name", str, source, path, default=None)
    try:
        model = Model(results, parameters, name, sinks=sinks)
    except ModelValidationError as exc:
        raise format_error(source, path, f"the graph is invalid: {exc}", _EDITED) from exc
    reached = {id(n) for n in model.get_ops()}
    for i, entry_name in enumerate(by_name):
        if id(by_name[entry_name]) not in reached:
            raise format_error(
                source,
                f"{path}nodes[{i}] ('{_short(entry_name)}')",
                "is not connected to any result",
                "remove the node",
            )
    model.get_rt_info().update(field(document, "rt_info", dict, source, path, default={}))
    return model


def _attr(value: Any, where: str, weights: WeightsView, source: str) -> Any:
    """An attribute value: a sub-graph, or a value :func:`decode_attr` reads."""
    if type(value) is dict and set(value) == {SUBGRAPH_TAG}:
        graph = value[SUBGRAPH_TAG]
        if type(graph) is not dict:
            raise format_error(source, where, f"{SUBGRAPH_TAG} must hold a graph object", _EDITED)
        return _build_graph(graph, weights, source, f"{where}.{SUBGRAPH_TAG}.")
    return decode_attr(value, where, source, weights.array)


def _build_node(
    entry: Any, where: str, by_name: dict[str, Node], declared: set[Any], weights: WeightsView, source: str
) -> Node:
    if type(entry) is not dict:
        raise format_error(source, where, "each node must be a JSON object")
    name = field(entry, "name", str, source, where)
    type_name = field(entry, "type", str, source, where)
    label = f"{where} ({_short(type_name)} '{_short(name)}')"
    if name in by_name:
        raise format_error(source, f"{label}.name", "another node has this name; friendly names must be unique")
    if type_name not in OPS:
        load_installed()  # an installed extension may define it
    try:
        op = OPS.get(type_name)
    except UnsupportedOperationError as exc:
        hint = missing_op_hint(type_name, entry.get("extension")) or (
            "register the op (import the module defining it, or add its extension) before reading"
        )
        raise UnknownOpTypeError(str(format_error(source, f"{label}.type", str(exc), hint))) from None
    version = field(entry, "version", str, source, label, default=op.version)
    if version != op.version:
        raise format_error(
            source,
            f"{label}.version",
            f"{op.type_name} of {_short(version)} is not available; this SDK defines {op.type_name} of {op.version}",
            "convert the model with the SDK version that wrote it",
        )
    inputs = []
    for k, ref in enumerate(field(entry, "inputs", list, source, label, default=[])):
        inputs.append(_input(ref, f"{label}.inputs[{k}]", by_name, declared, source))
    attrs = {
        key: _attr(value, f"{label}.attrs.{key}", weights, source)
        for key, value in field(entry, "attrs", dict, source, label, default={}).items()
    }
    try:
        node = Node(type_name, inputs, attrs, name)
    except Exception as exc:  # the document is untrusted: any failure to build is a format error here
        raise format_error(source, label, f"the node does not build: {exc}", _EDITED) from exc
    outputs = field(entry, "outputs", list, source, label, default=None)
    if outputs is not None:
        _check_outputs(node, outputs, label, source)
    node.get_rt_info().update(field(entry, "rt_info", dict, source, label, default={}))
    return node


def _input(ref: Any, where: str, by_name: dict[str, Node], declared: set[Any], source: str) -> Any:
    if type(ref) is not list or len(ref) != 2 or type(ref[0]) is not str or type(ref[1]) is not int:
        raise format_error(source, where, f"must be [producer name, port], got {_short(repr(ref))}")
    producer_name, port = ref
    producer = by_name.get(producer_name)
    if producer is None:
        if producer_name in declared:
            raise format_error(
                source, where, f"producer '{_short(producer_name)}' comes later; nodes must be in topological order"
            )
        raise format_error(source, where, f"refers to an unknown producer node '{_short(producer_name)}'")
    if not 0 <= port < producer.get_output_size():
        raise format_error(
            source, where, f"'{_short(producer_name)}' has {producer.get_output_size()} output(s), not port {port}"
        )
    return producer.output(port)


def _check_outputs(node: Node, outputs: list[Any], label: str, source: str) -> None:
    if len(outputs) != node.get_output_size():
        raise format_error(
            source, f"{label}.outputs", f"lists {len(outputs)} output(s), the op has {node.get_output_size()}", _EDITED
        )
    for i, spec in enumerate(outputs):
        where = f"{label}.outputs[{i}]"
        if type(spec) is not dict:
            raise format_error(source, where, "must be a JSON object")
        port = node.output(i)
        element_type = field(spec, "element_type", str, source, where, default=port.element_type.value)
        declared = port.partial_shape
        dims: list[Any] | None = field(
            spec, "shape", (list, type(None)), source, where, default=_shape_listed(declared)
        )
        if element_type != port.element_type.value or not _shape_fits(declared, dims):
            _mismatch(source, where, element_type, dims, port)
        names: list[Any] | None = field(spec, "names", (list, type(None)), source, where, default=None)
        if names is not None:
            if any(type(n) is not str for n in names):
                raise format_error(source, f"{where}.names", "tensor names must be strings")
            port.set_names(names)


def _shape_listed(shape: PartialShape) -> list[int] | None:
    """A port's shape as the file lists it: its dims, or None for a dynamic rank (what an If whose
    branches give different ranks infers)."""
    return list(shape.dims) if shape.rank_is_static else None


def _shape_fits(declared: PartialShape, dims: list[Any] | None) -> bool:
    """Whether a file's ``shape`` entry fits what the op infers."""
    if dims is None or not declared.rank_is_static:
        return dims is None and not declared.rank_is_static
    return all(type(d) is int and d >= -1 for d in dims) and declared.compatible(dims)


def _mismatch(source: str, where: str, element_type: str, dims: list[Any] | None, port: Any) -> NoReturn:
    raise format_error(
        source,
        where,
        f"the file says {_short(element_type)}{_short(repr(dims))}, the op infers "
        f"{port.element_type.value}{_shape_listed(port.partial_shape)}",
        _EDITED,
    )


def _listed(document: dict[str, Any], key: str, kind: str, by_name: dict[str, Node], source: str) -> list[Node]:
    nodes = []
    for i, name in enumerate(field(document, key, list, source, "")):
        node = by_name.get(name) if type(name) is str else None
        if node is None:
            raise format_error(source, f"{key}[{i}]", f"{_short(repr(name))} names no node of the document")
        if node.type_name != kind:
            raise format_error(source, f"{key}[{i}]", f"'{_short(name)}' is a {node.type_name}, not a {kind}")
        nodes.append(node)
    return nodes


def _read(path: Path, what: str, hint: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise format_error(str(path), "", f"{what} does not exist", hint) from None
    except OSError as exc:
        raise format_error(str(path), "", f"{what} cannot be read: {exc}", "check the path and permissions") from exc


def _map(path: Path, what: str, hint: str) -> bytes | mmap.mmap:
    """``path`` mapped read-only (an empty file, which cannot be mapped, as ``b""``)."""
    try:
        with path.open("rb") as file:
            if os.fstat(file.fileno()).st_size == 0:
                return b""
            return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        raise format_error(str(path), "", f"{what} does not exist", hint) from None
    except OSError as exc:
        raise format_error(str(path), "", f"{what} cannot be read: {exc}", "check the path and permissions") from exc


class _NonStandardLiteral(ValueError):
    """NaN, Infinity or -Infinity: Python's json accepts them, JSON does not."""


def _reject_constant(literal: str) -> NoReturn:
    raise _NonStandardLiteral(f"the JSON literal {literal} is not standard JSON")


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
