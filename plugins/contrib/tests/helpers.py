"""Single-op ``com.microsoft`` ONNX models, and running them on ONNX Runtime and on hetero-sdk devices."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper

__all__ = ["DEVICES", "run_devices", "run_onnxruntime", "single_op_model"]

DEVICES = ("TEMPLATE", "XLA", "HETERO:XLA,TEMPLATE")


def single_op_model(op_type: str, inputs: Mapping[str, np.ndarray], shape: Sequence[int], **attrs: Any) -> bytes:
    """A model of one ``com.microsoft`` node over float ``inputs``, with one output ``y`` of ``shape``."""
    outputs = ["y"]
    node = helper.make_node(op_type, list(inputs), list(outputs), domain="com.microsoft", **attrs)
    elem = {np.dtype(np.float32): onnx.TensorProto.FLOAT, np.dtype(np.float16): onnx.TensorProto.FLOAT16}
    graph = helper.make_graph(
        [node],
        op_type,
        [helper.make_tensor_value_info(k, elem[v.dtype], list(v.shape)) for k, v in inputs.items()],
        [helper.make_tensor_value_info("y", elem[next(iter(inputs.values())).dtype], list(shape))],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=8).SerializeToString()


def run_onnxruntime(model: bytes, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """The outputs ONNX Runtime computes (one thread, all graph optimizations off)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    return list(session.run(None, dict(inputs)))


def run_devices(model: bytes, inputs: Mapping[str, np.ndarray]) -> dict[str, list[np.ndarray]]:
    """The outputs of each device of :data:`DEVICES` that is installed."""
    import hetero_sdk as hs

    core = hs.Core()
    read = core.read_model(model)
    found = {}
    for device in DEVICES:
        if device.split(":")[-1].split(",")[0] not in core.available_devices:
            continue
        result = core.compile_model(read, device)(dict(inputs))
        found[device] = [np.asarray(result[i]) for i in range(len(read.outputs))]
    return found
