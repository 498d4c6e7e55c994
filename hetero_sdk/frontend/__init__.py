"""Model readers: the native format, OpenVINO IR and ONNX, told apart by content and suffix, as
OpenVINO's ``read_model`` chooses a frontend. Each frontend is imported when a model needs it (as
OpenVINO's ``FrontEndManager`` loads a frontend library), so ``import hetero_sdk`` imports neither
``onnx`` nor the IR reader."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from hetero_sdk.errors import ModelFormatError
from hetero_sdk.extensions.registered import set_sdk_rule_versions
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


def convert_model(model: ModelSource | Any, input: Any = None) -> Model:  # noqa: A002
    """Reads a model as :func:`read_model` does, without a :class:`~hetero_sdk.Core` (OpenVINO's
    ``ov.convert_model``), setting what ``input`` says on its inputs.

    :param input: as OpenVINO's ``input=``: shapes, element types and values by input name or in
        input order (``{"x": [1, 3, 224, 224]}``, ``("x", [1, 3, 224, 224], np.float32)``,
        ``"x[1,3,224,224]"``, ``{"sr": np.array(16000)}``; ``-1`` or ``?`` for a dynamic dimension).
        A list, tuple or :class:`~hetero_sdk.PartialShape` is a shape; a numpy array or numpy scalar
        freezes the input to that value: it leaves the model's inputs, and what it decides folds (an
        ``If`` on it becomes the branch taken). An ONNX model gets all of this while it is translated,
        so static shapes fold and a branch not taken is never built; see
        :mod:`hetero_sdk.frontend.input_spec` for every form.
    :raises ModelFormatError: for a missing, unreadable or malformed file, naming it.
    :raises UnsupportedOperationError: listing the ONNX nodes no rule translates.
    :raises ModelValidationError: for a graph that fails ONNX's checks, an ``input=`` form not accepted,
        an input name the model lacks, or a shape, type or value that does not fit its input.
    """
    if input is None:
        return read_model(model)
    from hetero_sdk.frontend.model_inputs import convert_with_input  # with the ONNX frontend, on first use

    return convert_with_input(model, input, read_model)


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


def _sdk_onnx_rule_versions(domain: str, op_type: str) -> list[int]:
    """The ONNX frontend's :func:`~hetero_sdk.frontend.onnx.rules.sdk_rule_versions`, the frontend
    imported on first use (an extension with ONNX rules is being registered)."""
    import hetero_sdk.frontend.onnx  # noqa: F401  (registers every SDK rule)
    from hetero_sdk.frontend.onnx.rules import sdk_rule_versions

    return sdk_rule_versions(domain, op_type)


set_sdk_rule_versions(_sdk_onnx_rule_versions)


def _read_ir(path: Path, weights: str | os.PathLike[str] | None) -> Model:
    """The IR frontend's reader, imported on first use."""
    from hetero_sdk.frontend.ir import read_ir

    return read_ir(path, weights)
