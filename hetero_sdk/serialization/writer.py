"""Writing a model in the native format: ``model.json`` + ``model.bin``, or one byte string."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hetero_sdk.extensions import provider_of
from hetero_sdk.graph.model import Model
from hetero_sdk.serialization import container
from hetero_sdk.serialization.schema import (
    FORMAT_NAME,
    FORMAT_VERSION,
    STATELESS_VERSION,
    SUBGRAPH_TAG,
    format_error,
)
from hetero_sdk.serialization.values import encode_attr, rt_info_to_json
from hetero_sdk.serialization.weights import WeightsBuilder

if TYPE_CHECKING:
    from hetero_sdk.graph.node import Node

__all__ = ["model_to_bytes", "model_to_document", "save_model"]

_FIX_NAME = "give every node a str friendly name"
_LINE = 100


def save_model(model: Model, path: str | os.PathLike[str]) -> None:
    """Writes ``model`` as ``path`` (the graph, JSON) and the same stem with ``.bin`` (the weights).

    Both files are replaced atomically; missing parent folders are created.

    :param model: the model to write.
    :param path: the graph file, conventionally ``model.json``.
    :raises ModelValidationError: when the model's structure is invalid (duplicate names, a cycle...).
    :raises ModelFormatError: when ``path`` ends in ``.bin``, or a value cannot be stored: an attribute
        of an unsupported type, or an rt_info value that is not plain JSON; the message names the node,
        the key and what is allowed.
    """
    path = Path(path)
    bin_path = path.with_suffix(".bin")
    if bin_path == path:
        raise format_error(str(path), "", "the graph file cannot end in .bin (that is the weights')", "name it .json")
    weights = WeightsBuilder()
    document = model_to_document(model, weights, str(path))
    text = _dump(document, pretty=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    _replace(bin_path, weights.chunks())
    _replace(path, [text])


def model_to_bytes(model: Model) -> bytes:
    """``model`` as one self-contained byte string (header, JSON document, weights), for blobs.

    Read it back with :func:`~hetero_sdk.serialization.model_from_bytes`.

    :raises ModelValidationError: when the model's structure is invalid.
    :raises ModelFormatError: when a value cannot be stored (see :func:`save_model`).
    """
    weights = WeightsBuilder()
    document = model_to_document(model, weights, "<blob>")
    return container.pack(_dump(document, pretty=False), weights.getvalue(), document["version"])


def model_to_document(model: Model, weights: WeightsBuilder, source: str) -> dict[str, Any]:
    """The JSON document of ``model``; its arrays are added to ``weights``.

    :param source: the destination's name, for error messages.
    """
    document: dict[str, Any] = {"format": FORMAT_NAME, "version": STATELESS_VERSION, "name": None, "rt_info": None}
    document["weights"] = None  # keeps its place before the graph; filled once the arrays are stored
    document.update(_graph(model, weights, source, "model"))
    if _has_sinks(document):
        document["version"] = FORMAT_VERSION
    document["weights"] = weights.summary()
    return document


def _graph(model: Model, weights: WeightsBuilder, source: str, where: str) -> dict[str, Any]:
    """A model's graph: its name, rt_info, parameters, results and nodes (a sub-graph is stored so too)."""
    model.validate()
    if type(model.friendly_name) is not str:
        raise format_error(source, where, f"name {model.friendly_name!r} is not a str", "give the model a str name")
    return {
        "name": model.friendly_name,
        "rt_info": rt_info_to_json(model.get_rt_info(), f"{where} rt_info", source),
        "parameters": [p.friendly_name for p in model.get_parameters()],
        "results": [r.friendly_name for r in model.get_results()],
        **({"sinks": [s.friendly_name for s in model.get_sinks()]} if model.get_sinks() else {}),
        "nodes": [_node_entry(node, weights, source) for node in model.get_ops()],
    }


def _has_sinks(graph: dict[str, Any]) -> bool:
    """Whether a graph document or one of its sub-graphs lists sinks (format version 2)."""
    if "sinks" in graph:
        return True
    return any(
        isinstance(value, dict) and SUBGRAPH_TAG in value and _has_sinks(value[SUBGRAPH_TAG])
        for node in graph["nodes"]
        for value in node["attrs"].values()
    )


def _node_entry(node: Node, weights: WeightsBuilder, source: str) -> dict[str, Any]:
    name = node.friendly_name
    if type(name) is not str:
        raise format_error(source, f"{node.type_name} node", f"friendly name {name!r} is not a str", _FIX_NAME)
    where = f"{node.type_name} '{name}'"
    attrs: dict[str, Any] = {}
    for key, value in node.attrs.items():
        if type(key) is not str:
            raise format_error(source, where, f"attribute name {key!r} is not a str", "name attributes with str")
        label = f"{where} attribute '{key}'"
        if isinstance(value, Model):
            attrs[key] = {SUBGRAPH_TAG: _graph(value, weights, source, label)}
        else:
            attrs[key] = encode_attr(value, label, source, weights.add)
    entry: dict[str, Any] = {
        "name": name,
        "type": node.type_name,
        "version": node.version,
        "inputs": [[s.node.friendly_name, s.index] for s in node.input_values()],
        "attrs": attrs,
        "outputs": [
            {
                "element_type": port.element_type.value,
                "shape": list(port.partial_shape.dims) if port.partial_shape.rank_is_static else None,
                "names": _explicit_names(node, port.index, source, where),
            }
            for port in node.outputs()
        ],
        "rt_info": rt_info_to_json(node.get_rt_info(), f"{where} rt_info", source),
    }
    provider = provider_of(node.type_name)
    if provider is not None:  # so that a reader without the extension names what provides the op
        entry["extension"] = provider
    return entry


def _explicit_names(node: Node, index: int, source: str, where: str) -> list[str] | None:
    # Names derived from the friendly name are left implicit so they keep following it after loading.
    names = node.output(index).explicit_names
    if names is None:
        return None
    for tensor_name in names:
        if type(tensor_name) is not str:
            raise format_error(
                source, f"{where} output {index}", f"tensor name {tensor_name!r} is not a str", "set str tensor names"
            )
    return sorted(names)


def _dump(document: dict[str, Any], *, pretty: bool) -> bytes:
    try:
        return _text(document, pretty, ascii_only=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in some name: \u escapes keep it exact and the file UTF-8
        return _text(document, pretty, ascii_only=True).encode("utf-8")


def _text(document: dict[str, Any], pretty: bool, ascii_only: bool) -> str:
    if not pretty:
        return json.dumps(document, separators=(",", ":"), ensure_ascii=ascii_only, allow_nan=False)
    return _pretty(document, "", ascii_only) + "\n"


def _pretty(value: Any, indent: str, ascii_only: bool) -> str:
    # Indented JSON that keeps short values (inputs, shapes, tagged attributes) on one line.
    flat = json.dumps(value, ensure_ascii=ascii_only, allow_nan=False)
    if len(flat) + len(indent) <= _LINE or not isinstance(value, (dict, list)) or not value:
        return flat
    inner = indent + "  "
    if isinstance(value, dict):
        keys = [json.dumps(k, ensure_ascii=ascii_only) for k in value]
        items = [f"{inner}{k}: {_pretty(v, inner, ascii_only)}" for k, v in zip(keys, value.values())]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    return "[\n" + ",\n".join(inner + _pretty(v, inner, ascii_only) for v in value) + "\n" + indent + "]"


def _replace(path: Path, chunks: Iterable[bytes | memoryview]) -> None:
    # A temporary name in the same folder, then a rename: readers never see half a file.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "wb") as out:
            for chunk in chunks:
                out.write(chunk)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
