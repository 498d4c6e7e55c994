"""``hetero_sdk.onnx_backend`` is an ONNX backend: ONNX's own ``BackendTest`` runner passes its node
tests on TEMPLATE, ``"CPU"`` maps to TEMPLATE, and outputs come back in the model's output order."""

from __future__ import annotations

import unittest

import numpy as np
import onnx.backend.test
import pytest
from onnx import TensorProto, helper

import hetero_sdk.onnx_backend as backend
from hetero_sdk.errors import DeviceNotFoundError, UnsupportedOperationError

NODE_TESTS = [
    "test_relu",
    "test_add_bcast",
    "test_conv_with_strides_padding",
    "test_lstm_defaults",
    "test_if",
    "test_loop11",
    "test_gru_defaults",
    "test_softmax_axis_0",
    "test_slice_neg_steps",
    "test_reduce_sum_keepdims_example",
]


def test_onnx_backend_test_runner_passes_its_node_tests_on_template() -> None:
    runner = onnx.backend.test.BackendTest(backend, __name__)
    for name in NODE_TESTS:
        runner.include(f"^{name}_cpu$")
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(runner.test_cases["OnnxBackendNodeModelTest"])
    result = unittest.TextTestRunner(verbosity=0).run(suite)
    ran = result.testsRun - len(result.skipped)
    assert ran == len(NODE_TESTS), [reason for _, reason in result.skipped]
    assert not result.failures and not result.errors, result.failures + result.errors


def _two_outputs() -> onnx.ModelProto:
    nodes = [helper.make_node("Neg", ["x"], ["second"]), helper.make_node("Relu", ["x"], ["first"])]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [
            helper.make_tensor_value_info("first", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("second", TensorProto.FLOAT, [3]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("device", ["CPU", "TEMPLATE", "XLA", "HETERO:XLA,TEMPLATE"])
def test_outputs_come_in_onnx_order_on_each_device(device: str) -> None:
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    outputs = backend.prepare(_two_outputs(), device).run([x])
    np.testing.assert_array_equal(outputs[0], np.maximum(x, 0))
    np.testing.assert_array_equal(outputs[1], -x)
    np.testing.assert_array_equal(outputs["second"], -x)
    by_name = backend.run_model(_two_outputs(), {"x": x}, device)
    np.testing.assert_array_equal(by_name[1], -x)


def test_run_node_reads_the_node_in_the_given_opset() -> None:
    node = helper.make_node("Squeeze", ["x"], ["y"], axes=[0])
    x = np.ones((1, 2), np.float32)
    (y,) = backend.run_node(node, [x], opset_version=11)
    np.testing.assert_array_equal(y, np.ones(2, np.float32))


def test_supports_cpu_and_sdk_devices_but_not_cuda() -> None:
    assert backend.supports_device("CPU")
    assert backend.supports_device("TEMPLATE")
    assert backend.supports_device("HETERO:XLA,TEMPLATE")
    assert not backend.supports_device("CUDA")
    assert not backend.supports_device("NOPE")
    assert backend.ONNX_DEVICES["CPU"] == "TEMPLATE"


def test_typed_errors_for_unknown_devices_and_untranslatable_ops() -> None:
    with pytest.raises(DeviceNotFoundError):
        backend.prepare(_two_outputs(), "NOPE")
    node = helper.make_node("RandomNormalLike", ["x"], ["y"])
    with pytest.raises(UnsupportedOperationError, match="RandomNormalLike"):
        backend.run_node(node, [np.ones((2, 2), np.float32)], opset_version=14)
