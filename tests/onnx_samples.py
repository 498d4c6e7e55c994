"""Small ONNX models built with ``onnx.helper`` for the frontend's tests: offline, a few nodes each."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

__all__ = ["conv_relu_model", "graph_model", "tensor_input"]


def tensor_input(
    name: str, dims: Sequence[int | str | None] | None, elem_type: int = TensorProto.FLOAT
) -> onnx.ValueInfoProto:
    """A graph input or output; a str dim is symbolic, None unknown; ``dims=None``: no shape at all."""
    return helper.make_tensor_value_info(name, elem_type, None if dims is None else list(dims))


def graph_model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Sequence[onnx.ValueInfoProto],
    outputs: Sequence[onnx.ValueInfoProto],
    initializers: Sequence[np.ndarray | tuple[str, np.ndarray]] = (),
    opset: int = 17,
    name: str = "test",
) -> onnx.ModelProto:
    """A checked model of one graph; initializers given as ``(name, array)``."""
    tensors = [numpy_helper.from_array(array, name) for name, array in initializers]  # type: ignore[misc]
    graph = helper.make_graph(list(nodes), name, list(inputs), list(outputs), tensors)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def conv_relu_model(batch: int | str = "batch") -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """``relu(conv(x, w) + b)`` then a global average pool: x[batch,3,8,8] -> y[batch,4,1,1]."""
    rng = np.random.default_rng(0)
    weights = {
        "w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
        "b": rng.standard_normal(4).astype(np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["y"], name="pool"),
    ]
    model = graph_model(
        nodes, [tensor_input("x", [batch, 3, 8, 8])], [tensor_input("y", [batch, 4, 1, 1])], list(weights.items())
    )
    return model, weights
