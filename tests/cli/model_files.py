"""Small ONNX models the CLI tests build with ``onnx.helper`` (offline, a few hundred bytes each), with the
numpy each one computes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
WEIGHTS = np.arange(12, dtype=np.float32).reshape(3, 4) / 10 - 0.5
BIAS = np.array([0.1, -0.2, 0.3, -0.4], dtype=np.float32)


def _save(graph: onnx.GraphProto, path: Path, opsets: list[onnx.OperatorSetIdProto] | None = None) -> Path:
    model = helper.make_model(graph, opset_imports=opsets or [helper.make_opsetid("", OPSET)])
    onnx.save(model, str(path))
    return path


def dense_relu(path: Path, batch: str | int = "batch") -> Path:
    """``y = relu(x @ WEIGHTS + BIAS)``, ``x`` of shape ``[batch, 3]`` (``batch`` symbolic by default)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 4])
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"], name="dense/matmul"),
        helper.make_node("Add", ["xw", "b"], ["pre"], name="dense/add"),
        helper.make_node("Relu", ["pre"], ["y"], name="dense/relu"),
    ]
    initializers = [numpy_helper.from_array(WEIGHTS, "w"), numpy_helper.from_array(BIAS, "b")]
    return _save(helper.make_graph(nodes, "dense_relu", [x], [y], initializers), path)


def dense_relu_numpy(x: np.ndarray) -> np.ndarray:
    """What :func:`dense_relu` computes."""
    return np.maximum(x @ WEIGHTS + BIAS, 0).astype(np.float32)


def two_inputs(path: Path) -> Path:
    """``y = a * b``, both ``[n, 2]`` with ``n`` symbolic."""
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n", 2])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, ["n", 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 2])
    nodes = [helper.make_node("Mul", ["a", "b"], ["y"], name="product")]
    return _save(helper.make_graph(nodes, "two_inputs", [a, b], [y]), path)


def scored_boxes(path: Path) -> Path:
    """Sigmoid boxes and scores into NonMaxSuppression: the accelerator of the tests refuses NMS, so
    ``HETERO:ACCEL,TEMPLATE`` cuts the model after the sigmoids."""
    raw_boxes = helper.make_tensor_value_info("raw_boxes", TensorProto.FLOAT, [1, 16, 4])
    raw_scores = helper.make_tensor_value_info("raw_scores", TensorProto.FLOAT, [1, 2, 16])
    selected = helper.make_tensor_value_info("selected", TensorProto.INT64, ["k", 3])
    constants = [
        numpy_helper.from_array(np.array([4], dtype=np.int64), "max_per_class"),
        numpy_helper.from_array(np.array([0.5], dtype=np.float32), "iou"),
        numpy_helper.from_array(np.array([0.2], dtype=np.float32), "score_min"),
    ]
    nodes = [
        helper.make_node("Sigmoid", ["raw_boxes"], ["boxes"], name="boxes"),
        helper.make_node("Sigmoid", ["raw_scores"], ["scores"], name="scores"),
        helper.make_node(
            "NonMaxSuppression", ["boxes", "scores", "max_per_class", "iou", "score_min"], ["selected"], name="nms"
        ),
    ]
    graph = helper.make_graph(nodes, "scored_boxes", [raw_boxes, raw_scores], [selected], constants)
    return _save(graph, path)


def with_unknown_op(path: Path) -> Path:
    """A Relu, then ``com.example.Frobnicate`` and ``Glorp``, which no rule translates."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Frobnicate", ["r"], ["f"], name="frob", domain="com.example"),
        helper.make_node("Glorp", ["f"], ["y"], name="glorp", domain="com.example"),
    ]
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("com.example", 1)]
    return _save(helper.make_graph(nodes, "unknown", [x], [y]), path, opsets)
