"""Whole models written by ONNX Runtime's quantizer (its com.microsoft ops in place), read and run on
TEMPLATE, XLA and HETERO against ONNX Runtime: quantize_static in the QDQ and the QOperator format on a
small convnet (QLinearConv, QLinearAdd, QLinearSigmoid, QLinearConcat, QLinearAveragePool,
QLinearGlobalAveragePool, QLinearMatMul) and quantize_dynamic on an LSTM (DynamicQuantizeLSTM)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import onnx
import pytest
from ms_models import DEVICES, run_ort, run_sdk
from onnx import helper, numpy_helper

quantization = pytest.importorskip("onnxruntime.quantization")


def _initializer(rng: np.random.Generator, name: str, *shape: int) -> onnx.TensorProto:
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)


def _convnet(rng: np.random.Generator) -> onnx.ModelProto:
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["sum"]),
        helper.make_node("Sigmoid", ["sum"], ["gate"]),
        helper.make_node("Concat", ["gate", "r1"], ["both"], axis=1),
        helper.make_node("AveragePool", ["both"], ["pooled"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["pooled"], ["global"]),
        helper.make_node("Flatten", ["global"], ["flat"]),
        helper.make_node("MatMul", ["flat", "wm"], ["logits"]),
        helper.make_node("Add", ["logits", "bm"], ["y"]),
    ]
    weights = [_initializer(rng, "w1", 4, 3, 3, 3), _initializer(rng, "b1", 4), _initializer(rng, "w2", 4, 4, 3, 3),
               _initializer(rng, "b2", 4), _initializer(rng, "wm", 8, 5), _initializer(rng, "bm", 5)]  # fmt: skip
    graph = helper.make_graph(nodes, "convnet", [helper.make_tensor_value_info("x", 1, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", 1, [1, 5])], weights)  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


class _Calibration(quantization.CalibrationDataReader):  # type: ignore[misc]
    def __init__(self, samples: list[np.ndarray]) -> None:
        self._samples = iter([{"x": s} for s in samples])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self._samples, None)


def _output_scale(model: onnx.ModelProto) -> float:
    """The scale of the DequantizeLinear that writes the graph's output."""
    producer = next(n for n in model.graph.node if model.graph.output[0].name in n.output)
    scales = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    return float(scales[producer.input[1]])


def test_quantize_static_qoperator_convnet(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    source, target = tmp_path / "convnet.onnx", tmp_path / "convnet_int8.onnx"
    onnx.save(_convnet(rng), source)
    samples = [rng.standard_normal((1, 3, 8, 8)).astype(np.float32) for _ in range(8)]
    logging.getLogger().setLevel(logging.ERROR)  # the quantizer's advice to pre-process
    quantization.quantize_static(str(source), str(target), _Calibration(samples),
                                 quant_format=quantization.QuantFormat.QOperator,
                                 activation_type=quantization.QuantType.QUInt8,
                                 weight_type=quantization.QuantType.QInt8)  # fmt: skip
    model = onnx.load(target)
    microsoft = {n.op_type for n in model.graph.node if n.domain == "com.microsoft"}
    assert {"QLinearAdd", "QLinearSigmoid", "QLinearConcat", "QLinearAveragePool",
            "QLinearGlobalAveragePool"} <= microsoft  # fmt: skip
    level = _output_scale(model)
    for sample in samples[:3]:
        want = run_ort(model, {"x": sample})[0]
        for device in DEVICES:
            got = run_sdk(model, {"x": sample}, device)[0]
            # every op requantizes: a tie rounded the other way may move the output by one level
            np.testing.assert_allclose(got, want, atol=1.01 * level, err_msg=device)


def test_quantize_static_qdq_convnet(tmp_path: Path) -> None:
    """The same convnet in the QDQ format: QuantizeLinear/DequantizeLinear pairs around float ops (which
    XLA folds into float arithmetic), within a level of ONNX Runtime's output."""
    rng = np.random.default_rng(1)
    source, target = tmp_path / "convnet.onnx", tmp_path / "convnet_qdq.onnx"
    onnx.save(_convnet(rng), source)
    samples = [rng.standard_normal((1, 3, 8, 8)).astype(np.float32) for _ in range(8)]
    logging.getLogger().setLevel(logging.ERROR)
    quantization.quantize_static(str(source), str(target), _Calibration(samples),
                                 quant_format=quantization.QuantFormat.QDQ,
                                 activation_type=quantization.QuantType.QUInt8,
                                 weight_type=quantization.QuantType.QInt8)  # fmt: skip
    model = onnx.load(target)
    kinds = {n.op_type for n in model.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear", "Conv"} <= kinds and not any(n.domain for n in model.graph.node)
    level = _output_scale(model)
    for sample in samples[:3]:
        want = run_ort(model, {"x": sample})[0]
        for device in DEVICES:
            got = run_sdk(model, {"x": sample}, device)[0]
            np.testing.assert_allclose(got, want, atol=1.01 * level, err_msg=device)


def _lstm(rng: np.random.Generator, hidden: int, inputs: int) -> onnx.ModelProto:
    weights = [_initializer(rng, "W", 1, 4 * hidden, inputs), _initializer(rng, "R", 1, 4 * hidden, hidden),
               _initializer(rng, "B", 1, 8 * hidden)]  # fmt: skip
    node = helper.make_node("LSTM", ["x", "W", "R", "B"], ["y"], hidden_size=hidden)
    graph = helper.make_graph([node], "lstm", [helper.make_tensor_value_info("x", 1, [6, 2, inputs])],
                              [helper.make_tensor_value_info("y", 1, [6, 1, 2, hidden])], weights)  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)


def test_quantize_dynamic_lstm(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    source, target = tmp_path / "lstm.onnx", tmp_path / "lstm_int8.onnx"
    onnx.save(_lstm(rng, 8, 5), source)
    logging.getLogger().setLevel(logging.ERROR)
    quantization.quantize_dynamic(str(source), str(target), weight_type=quantization.QuantType.QInt8)
    model = onnx.load(target)
    assert any(n.op_type == "DynamicQuantizeLSTM" and n.domain == "com.microsoft" for n in model.graph.node)
    x = rng.standard_normal((6, 2, 5)).astype(np.float32)
    want = run_ort(model, {"x": x})[0]
    for device in DEVICES:
        # ONNX Runtime also quantizes the activations at each step; the SDK computes the op's meaning
        np.testing.assert_allclose(run_sdk(model, {"x": x}, device)[0], want, atol=0.03, err_msg=device)
