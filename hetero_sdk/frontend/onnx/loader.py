"""Reading an ONNX file into an ``onnx.ModelProto``: parsing, external data kept inside the model's
folder, and ONNX's own checker (run once the nodes are known to translate). Parsing is protobuf
decoding by the ``onnx`` package: no code from the file runs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError
from onnx import external_data_helper

from hetero_sdk.errors import ModelFormatError, ModelValidationError
from hetero_sdk.frontend.onnx.strings import check_strings

__all__ = ["LoadedProto", "check_proto", "load_proto"]

_MAX_DETAIL = 600
"""Characters of the checker's message kept in the error (it can list a whole node)."""


@dataclass(frozen=True)
class LoadedProto:
    """A parsed, checked ONNX model and where it came from (for messages)."""

    proto: onnx.ModelProto
    source: str


def load_proto(model: str | os.PathLike[str] | bytes | onnx.ModelProto) -> LoadedProto:
    """Parses ``model`` (a path, the file's bytes, or a ``ModelProto``) and loads its external data
    (:func:`check_proto` runs ONNX's checker on the result).

    :raises ModelFormatError: for a missing, truncated or corrupted file, a name that is not UTF-8
        text, or external data that is missing or lies outside the model's folder.
    """
    if isinstance(model, onnx.ModelProto):
        check_strings(model, "ONNX model")
        loaded = LoadedProto(model, f"ONNX model '{model.graph.name or '<unnamed>'}'")
        _check_external_data(loaded, None)
    elif isinstance(model, (bytes, bytearray, memoryview)):
        loaded = LoadedProto(_parse(bytes(model), "<ONNX bytes>"), "<ONNX bytes>")
        _check_external_data(loaded, None)
    else:
        path = Path(model)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ModelFormatError(f"{path}: cannot read the model file: {exc.strerror or exc}") from None
        loaded = LoadedProto(_parse(data, str(path)), str(path))
        _check_external_data(loaded, path.resolve().parent)
    return loaded


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


def _check_external_data(loaded: LoadedProto, folder: Path | None) -> None:
    """Loads every external tensor, refusing locations outside ``folder`` (and all of them without one)."""
    external = [t for t in _tensors(loaded.proto.graph) if external_data_helper.uses_external_data(t)]
    if not external:
        return
    if folder is None:
        names = ", ".join(t.name for t in external[:5])
        raise ModelFormatError(
            f"{loaded.source}: tensors {names} keep their data in external files, which need the model's "
            "folder; pass the .onnx file's path instead"
        )
    for tensor in external:
        info = external_data_helper.ExternalDataInfo(tensor)
        location = Path(info.location)
        target = (folder / location).resolve()
        if location.is_absolute() or ".." in location.parts or not target.is_relative_to(folder):
            raise ModelFormatError(
                f"{loaded.source}: tensor '{tensor.name}' names the external data file '{info.location}', "
                f"which is outside the model's folder {folder}; external data must lie beside the model"
            )
        if not target.is_file():
            raise ModelFormatError(
                f"{loaded.source}: tensor '{tensor.name}': the external data file '{info.location}' is missing "
                f"from {folder}; copy it beside the model"
            )
        size = target.stat().st_size
        end = (info.offset or 0) + (info.length or 0)
        if end > size:
            raise ModelFormatError(
                f"{loaded.source}: tensor '{tensor.name}': external data '{info.location}' has {size} bytes, "
                f"but the tensor reads up to byte {end}; the file is truncated"
            )
    try:
        external_data_helper.load_external_data_for_model(loaded.proto, str(folder))
    except (OSError, ValueError) as exc:
        raise ModelFormatError(f"{loaded.source}: cannot load the external data: {exc}") from None


def _tensors(graph: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    """Every tensor of ``graph`` and of its sub-graphs: initializers and tensor attributes."""
    yield from graph.initializer
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.HasField("t"):
                yield attribute.t
            yield from attribute.tensors
            if attribute.HasField("g"):
                yield from _tensors(attribute.g)
            for body in attribute.graphs:
                yield from _tensors(body)


def check_proto(loaded: LoadedProto) -> None:
    """Runs ONNX's checker on ``loaded``.

    :raises ModelValidationError: for a graph that fails ONNX's checks, naming the node.
    :raises ModelFormatError: for a model that Python's protobuf parsed but ONNX's C++ side cannot.
    """
    try:
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
