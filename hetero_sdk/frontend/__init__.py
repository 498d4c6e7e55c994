"""Model readers: the native format, OpenVINO IR and ONNX, told apart by content and suffix, as
OpenVINO's ``read_model`` chooses a frontend. Each frontend is imported when a model needs it (as
OpenVINO's ``FrontEndManager`` loads a frontend library), so ``import hetero_sdk`` imports neither
``onnx`` nor the IR reader."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from hetero_sdk.errors import ModelFormatError
from hetero_sdk.frontend.detect import is_ir, is_native_json
from hetero_sdk.graph.model import Model
from hetero_sdk.serialization import model_from_bytes
from hetero_sdk.serialization import read_model as read_native
from hetero_sdk.serialization.container import MAGIC
from hetero_sdk.shape import PartialShape

if TYPE_CHECKING:
    from onnx import ModelProto

__all__ = ["ModelSource", "convert_model", "read_model"]

ModelSource: TypeAlias = "str | os.PathLike[str] | bytes | ModelProto"
"""What :func:`read_model` reads: a path (``.onnx``, IR's ``.xml`` or the native ``.json``), a file's
bytes, or an ``onnx.ModelProto``."""

_SNIFF_BYTES = 64


def convert_model(model: ModelSource | Any, input: Mapping[str, Sequence[int] | PartialShape] | None = None) -> Model:  # noqa: A002
    """Reads a model as :func:`read_model` does, without a :class:`~hetero_sdk.Core` (OpenVINO's
    ``ov.convert_model``).

    :param input: shapes for some of an ONNX model's inputs, by name (``{"x": [1, 3, 224, 224]}``,
        ``-1`` for a dimension left dynamic), used while translating: what they make static folds,
        and an ``If`` whose branches give different ranks depending on a shape can be resolved.
        For models already translated use :meth:`Model.reshape`.
    :raises ModelFormatError: for a missing, unreadable or malformed file, naming it.
    :raises UnsupportedOperationError: listing the ONNX nodes no rule translates.
    :raises ModelValidationError: for a graph that fails ONNX's checks, or shapes that do not fit.
    """
    if input is None:
        return read_model(model)
    shapes = {name: PartialShape.of(shape) for name, shape in input.items()}
    if (isinstance(model, (str, os.PathLike)) and Path(model).suffix.lower() not in (".onnx", "")) or isinstance(
        model, Model
    ):
        raise ModelFormatError(
            "input shapes are applied while translating an ONNX model; for a native or IR model call model.reshape(...)"
        )
    return _convert_onnx(model, shapes)


def read_model(model: ModelSource | Any, weights: str | os.PathLike[str] | None = None) -> Model:
    """Reads a model: ONNX (a ``.onnx`` path, ONNX bytes, or an ``onnx.ModelProto``), OpenVINO IR (a
    ``.xml`` path with its ``.bin``), or the native format (a ``.json`` path with its ``.bin``, or
    :func:`~hetero_sdk.serialization.model_to_bytes`'s bytes). A path without any of these suffixes is
    told apart by its first bytes. Never runs code from the file.

    :param weights: the weights file of IR or the native format, when not beside the graph file.
    :raises ModelFormatError: for a missing, unreadable or malformed file, naming it.
    :raises UnsupportedOperationError: listing the ONNX nodes no rule translates.
    :raises ModelValidationError: for an ONNX graph that fails ONNX's checks, naming the node.
    """
    if isinstance(model, Model):
        return model
    if _is_model_proto(model):
        return _convert_onnx(model)
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
        return model_from_bytes(data) if data.startswith(MAGIC) else _convert_onnx(data)
    if not isinstance(model, (str, os.PathLike)):
        raise ModelFormatError(
            f"cannot read a model from a {type(model).__name__}; pass a path, bytes, an onnx.ModelProto or a Model"
        )
    path = Path(model)
    suffix = path.suffix.lower()
    if suffix == ".onnx":
        return _convert_onnx(path)
    if suffix == ".xml":
        return _read_ir(path, weights)
    if suffix == ".json":
        return read_native(path, weights)
    try:
        with path.open("rb") as file:
            head = file.read(_SNIFF_BYTES)
    except OSError as exc:
        if weights is not None:  # the native reader names what is missing
            return read_native(path, weights)
        raise ModelFormatError(f"{path}: cannot read the model file: {exc.strerror or exc}") from None
    if is_ir(head):
        return _read_ir(path, weights)
    if weights is not None or is_native_json(head):
        return read_native(path, weights)
    if _is_onnx(path.read_bytes()):
        return _convert_onnx(path)
    raise ModelFormatError(
        f"{path}: neither an ONNX model, OpenVINO IR nor hetero-sdk's .json format (first bytes {head[:16]!r}); "
        "hetero-sdk reads .onnx files, OpenVINO IR (.xml) and the .json files save_model writes"
    )


def _is_model_proto(model: object) -> bool:
    """Whether ``model`` is an ``onnx.ModelProto``; one exists only once ``onnx`` is imported, so the
    check never imports it."""
    onnx = sys.modules.get("onnx")
    return onnx is not None and isinstance(model, onnx.ModelProto)


def _convert_onnx(model: Any, shapes: Mapping[str, PartialShape] | None = None) -> Model:
    """The ONNX frontend's :func:`~hetero_sdk.frontend.onnx.convert_onnx`, imported on first use."""
    from hetero_sdk.frontend.onnx import convert_onnx

    return convert_onnx(model, shapes)


def _is_onnx(data: bytes) -> bool:
    """The ONNX frontend's content check, imported on first use."""
    from hetero_sdk.frontend.onnx import is_onnx

    return is_onnx(data)


def _read_ir(path: Path, weights: str | os.PathLike[str] | None) -> Model:
    """The IR frontend's reader, imported on first use."""
    from hetero_sdk.frontend.ir import read_ir

    return read_ir(path, weights)
