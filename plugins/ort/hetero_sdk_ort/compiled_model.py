"""A (sub)model compiled for ORT: one ONNX Runtime session, run whole, profiled as one fused row."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from hetero_sdk import Model, Type
from hetero_sdk.errors import BlobFormatError, CompilationError, ModelFormatError
from hetero_sdk.plugin import (
    CompiledModel,
    RunContext,
    model_from_bytes,
    model_to_bytes,
    pack_blob,
    rt_info,
    unpack_blob,
)

from hetero_sdk_ort.config import session_threads
from hetero_sdk_ort.session import open_session

__all__ = ["BLOB_FORMAT", "NODE_TYPE", "OrtCompiledModel", "read_blob"]

BLOB_FORMAT = "ORT"
"""The format tag of ORT blobs."""
NODE_TYPE = "OnnxRuntimeSession"
"""The node type of ORT's one profiling row."""
EXEC_TYPE = "onnxruntime CPUExecutionProvider"


def _to_onnxruntime(value: np.ndarray) -> np.ndarray:
    """ONNX Runtime takes strings as object arrays of ``str``, not numpy's StringDType."""
    return value.astype(object) if value.dtype.kind in "TU" else value


def _from_onnxruntime(value: np.ndarray) -> np.ndarray:
    """ONNX Runtime gives strings as object arrays: as the SDK's ``string`` tensors (StringDType)."""
    return value.astype(Type.string.numpy) if value.dtype == object else value


class OrtCompiledModel(CompiledModel):
    """``model`` run by one ``onnxruntime.InferenceSession`` on ``model_bytes`` (its ONNX export).

    :param model: the (sub)model, for its inputs, outputs and runtime model; it is cloned.
    :param model_bytes: the ONNX bytes of ``model``.
    """

    def __init__(self, model: Model, model_bytes: bytes, device_name: str, config: dict[str, Any]) -> None:
        model = model.clone()  # the caller's model must not change
        super().__init__(model, device_name, config)
        self.model_bytes = model_bytes
        try:
            self.session = open_session(model_bytes, session_threads(config))
        except Exception as exc:  # onnxruntime's own error types (Fail, InvalidGraph...) share no base
            raise CompilationError(
                f"{device_name}: ONNX Runtime cannot load model '{model.friendly_name}': {exc}"
            ) from exc
        self._input_names = [port.name for port in self.session.get_inputs()]
        self._compute = [n.friendly_name for n in model.get_ops() if not n.op.structural]

    # --8<-- [start:profiled-run]
    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        """Feeds the inputs in the model's order (the exporter keeps it) and runs the whole session."""
        context.check_cancelled()
        feed = {name: _to_onnxruntime(np.asarray(value)) for name, value in zip(self._input_names, inputs)}
        with context.timed(self.model.friendly_name, NODE_TYPE, EXEC_TYPE):
            outputs = self.session.run(None, feed)
        self.keep_profile(context.profile, whole_model=True)  # every compute op ran in the one session
        return [_from_onnxruntime(np.asarray(value)) for value in outputs]

    def get_runtime_model(self) -> Model:
        """The model as ORT runs it: every compute op ran in the one session, and carries its time."""
        runtime = super().get_runtime_model()
        for node in runtime.get_ops():
            if node.friendly_name in self._compute and rt_info.PERF_COUNTER in node.get_rt_info():
                node.get_rt_info()[rt_info.EXEC_TYPE] = EXEC_TYPE
        return runtime

    # --8<-- [end:profiled-run]

    def export_model(self) -> bytes:
        """A checksummed blob: the ONNX bytes the session runs, the model's interface (native format)
        and the compile configuration."""
        stored = {key: value for key, value in self.config.items() if isinstance(value, (bool, int, float, str))}
        return pack_blob(
            BLOB_FORMAT,
            {
                "onnx": self.model_bytes,
                "model": model_to_bytes(self.model),
                "config": json.dumps(stored, sort_keys=True).encode(),
            },
        )


def read_blob(blob: bytes) -> tuple[Model, bytes, dict[str, Any]]:
    """The model, its ONNX bytes and the compile configuration an ORT blob holds.

    :raises BlobFormatError: for a blob of another device, a corrupted one, or one missing a frame.
    """
    frames = unpack_blob(blob, BLOB_FORMAT)
    missing = sorted({"onnx", "model", "config"} - set(frames))
    if missing:
        raise BlobFormatError(f"ORT blob lacks frame(s) {missing}")
    try:
        return model_from_bytes(frames["model"], source="ORT blob"), frames["onnx"], json.loads(frames["config"])
    except (ModelFormatError, ValueError) as exc:
        raise BlobFormatError(f"ORT blob is malformed: {exc}") from exc
