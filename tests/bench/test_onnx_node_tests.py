"""The node-test runner: bfloat16 outputs compare as floats (NaNs equal), as the other float types
do, not bit for bit through ``array_equal`` where NaN never equals NaN; an op a device declines at
compile time counts as unsupported, not as an error."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx

_PATH = Path(__file__).parents[2] / "bench" / "onnx_node_tests.py"
_SPEC = importlib.util.spec_from_file_location("onnx_node_tests", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
node_tests = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(node_tests)


def test_bfloat16_outputs_with_nans_in_the_same_places_match() -> None:
    values = np.array([0.5, np.nan, np.inf, -2.0], np.float32).astype(ml_dtypes.bfloat16)
    assert node_tests.compare([values.copy()], [values]) is None


def test_bfloat16_outputs_that_differ_are_reported() -> None:
    want = np.array([0.5, np.nan], np.float32).astype(ml_dtypes.bfloat16)
    got = np.array([0.75, np.nan], np.float32).astype(ml_dtypes.bfloat16)
    assert "values differ" in (node_tests.compare([got], [want]) or "")


def _model(node: onnx.NodeProto, inputs: list[onnx.ValueInfoProto], output: onnx.ValueInfoProto) -> onnx.ModelProto:
    graph = onnx.helper.make_graph([node], "case", inputs, [output])
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)])


def _nonzero_case() -> tuple[onnx.ModelProto, list[tuple[list[np.ndarray], list[np.ndarray]]]]:
    x = np.array([[1, 0], [0, 2]], np.float32)
    model = _model(
        onnx.helper.make_node("NonZero", ["x"], ["y"]),
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 2])],
        onnx.helper.make_tensor_value_info("y", onnx.TensorProto.INT64, [2, None]),
    )
    return model, [([x], [np.array([[0, 1], [0, 1]], np.int64)])]


def test_a_device_that_declines_an_op_at_compile_time_counts_as_unsupported() -> None:
    model, sets = _nonzero_case()
    result = node_tests._Runner("XLA").run(model, sets)
    assert result["status"] == "unsupported" and result["ops"] == ["NonZero"]
    assert node_tests._Runner("HETERO:XLA,TEMPLATE").run(model, sets) == {"status": "passed"}


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
    assert node_tests._Runner("XLA").run(model, sets) == {"status": "passed"}
