"""From a hetero-sdk (sub)model to an ONNX Runtime session: the public ONNX exporter writes the model's
bytes, ONNX Runtime opens them on its CPU execution provider."""

from __future__ import annotations

import onnxruntime as ort
from hetero_sdk import Model
from hetero_sdk.plugin import export_onnx as export_model

__all__ = ["PROVIDERS", "onnx_bytes", "open_session"]

PROVIDERS = ["CPUExecutionProvider"]


def onnx_bytes(model: Model) -> bytes:
    """``model`` as ONNX file bytes.

    :raises UnsupportedOperationError: listing the nodes ONNX cannot express.
    """
    return export_model(model).SerializeToString()


def open_session(model_bytes: bytes, threads: int) -> ort.InferenceSession:
    """An ONNX Runtime session on ``model_bytes`` with ``threads`` intra-op threads, run sequentially.

    :raises Exception: whatever ONNX Runtime raises for a model it cannot load (a missing kernel...).
    """
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3  # errors only: unsupported ops are answered by query_model, not logs
    return ort.InferenceSession(model_bytes, sess_options=options, providers=PROVIDERS)
