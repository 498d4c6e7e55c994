"""The node-test runner on a device that declines ops: an op a device declines at compile time counts as
unsupported (naming the op), not as an error, and HETERO runs it; inputs that decide shapes (Reduce's
axes as a graph input) run on XLA through value specialisation."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from hetero_sdk.conformance.onnx_node.cases import NodeCase
from hetero_sdk.conformance.onnx_node.execute import DeviceRunner

pytest.importorskip("hetero_sdk_jax")


def _model(node: onnx.NodeProto, inputs: list[onnx.ValueInfoProto], output: onnx.ValueInfoProto) -> onnx.ModelProto:
    graph = onnx.helper.make_graph([node], "case", inputs, [output])
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)])


def _nonzero_case() -> NodeCase:
    x = np.array([[1, 0], [0, 2]], np.float32)
    model = _model(
        onnx.helper.make_node("NonZero", ["x"], ["y"]),
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 2])],
        onnx.helper.make_tensor_value_info("y", onnx.TensorProto.INT64, [2, None]),
    )
    return NodeCase("test_nonzero_declined", model, [([x], [np.array([[0, 1], [0, 1]], np.int64)])])


def test_a_device_that_declines_an_op_at_compile_time_counts_as_unsupported() -> None:
    case = _nonzero_case()
    result = DeviceRunner("XLA").run(case)
    assert result.status == "unsupported" and result.ops == ["NonZero"]
    assert DeviceRunner("HETERO:XLA,TEMPLATE").run(case).status == "passed"


def test_axes_given_as_a_graph_input_run_on_xla() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    model = _model(
        onnx.helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0),
        [
            onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3]),
            onnx.helper.make_tensor_value_info("axes", onnx.TensorProto.INT64, [1]),
        ],
        onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [None]),
    )
    sets = [([x, np.array([1], np.int64)], [np.array([3.0, 12.0], np.float32)])]
    sets.append(([x, np.array([0], np.int64)], [np.array([3.0, 5.0, 7.0], np.float32)]))
    assert DeviceRunner("XLA").run(NodeCase("test_reduce_sum_axes_input", model, sets)).status == "passed"
