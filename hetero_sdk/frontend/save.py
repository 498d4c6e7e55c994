"""``hs.save_model``: the writer chosen by the file's suffix, as ``read_model`` chooses a reader, and
imported when a model is written (the ONNX exporter imports ``onnx``)."""

from __future__ import annotations

import os
from pathlib import Path

from hetero_sdk.errors import ModelFormatError
from hetero_sdk.graph.model import Model
from hetero_sdk.serialization import save_model as save_native

__all__ = ["SAVED_SUFFIXES", "save_model"]

SAVED_SUFFIXES = (".json", ".onnx", ".xml")
"""The suffixes :func:`save_model` writes: the native format, ONNX and OpenVINO IR."""


def save_model(model: Model, path: str | os.PathLike[str], *, opset: int | None = None) -> None:
    """Writes ``model`` in the format its suffix names.

    - ``model.json``: the native format, the graph and ``model.bin`` beside it (the weights), as
      OpenVINO writes ``.xml`` and ``.bin``; everything the SDK builds saves this way.
    - ``model.onnx``: ONNX (see :func:`hetero_sdk.frontend.onnx_export.export_model`), for tools and
      runtimes that read ONNX; weights inside the file.

    - ``model.xml``: OpenVINO IR v11, ``model.bin`` beside it, which OpenVINO reads
      (``ov.Core().read_model``); ops without an IR form raise ``UnsupportedOperationError``.

    All read back with ``core.read_model(path)`` or ``hs.convert_model(path)``.

    :param model: the model to write.
    :param path: the file to write; missing parent folders are created.
    :param opset: the ONNX opset to write (``.onnx`` only); default
        :data:`~hetero_sdk.frontend.onnx_export.DEFAULT_OPSET`.
    :raises ModelFormatError: for another suffix (naming the supported ones), an ``opset`` given for
        ``.json``, or a value the native format cannot store.
    :raises UnsupportedOperationError: for ``.onnx``, listing every node ONNX cannot express.
    :raises ModelValidationError: when the model's structure is invalid.
    """
    suffix = Path(path).suffix.lower()
    if suffix == ".onnx":
        from hetero_sdk.frontend.onnx_export import save_onnx

        save_onnx(model, path, opset)
    elif suffix == ".json":
        if opset is not None:
            raise ModelFormatError(f"{path}: opset= applies to ONNX files; the native .json format has no opset")
        save_native(model, path)
    elif suffix == ".xml":
        if opset is not None:
            raise ModelFormatError(f"{path}: opset= applies to ONNX files; IR names each op's version itself")
        from hetero_sdk.frontend.ir import save_ir

        save_ir(model, path)
    else:
        raise ModelFormatError(
            f"{path}: cannot tell the format from the suffix {suffix or '(none)'!r}; save_model writes "
            f"{', '.join(SAVED_SUFFIXES[:-1])} and {SAVED_SUFFIXES[-1]} (hetero-sdk's native format, ONNX, OpenVINO IR)"
        )
