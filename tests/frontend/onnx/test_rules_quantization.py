"""QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear compute what ONNX Runtime computes: per
tensor, per axis and per block, to and from 8- and 16-bit integers, with ties rounded to even."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator
from onnx_models import check, node_model, run_ort, run_sdk

F32 = np.float32
# halves (ties round to even), values past both ends of the target range
X = np.array([[-300.0, -2.5, -1.5, -0.5], [0.5, 1.5, 2.5, 300.0], [0.0, 3.2, -7.7, 126.5]], F32)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16])
def test_quantize_per_tensor_saturates_and_rounds_ties_to_even(dtype: type) -> None:
    zero_point = np.array(3 if np.dtype(dtype).kind == "u" else -2, dtype)
    model, feeds = node_model("QuantizeLinear", {"x": X, "s": np.array(0.5, F32), "z": zero_point}, 21)
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=0, atol=0)


def test_quantize_without_zero_point_gives_uint8() -> None:
    model, feeds = node_model("QuantizeLinear", {"x": X, "s": np.array(2.0, F32)}, 13)
    check(model, feeds, rtol=0, atol=0)


def test_quantize_and_dequantize_per_axis() -> None:
    scales, zero_points = np.array([0.5, 1.0, 2.0, 4.0], F32), np.array([0, 10, -10, 5], np.int8)
    model, feeds = node_model("QuantizeLinear", {"x": X, "s": scales, "z": zero_points}, 13, axis=1)
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=0, atol=0)
    q = np.array([[-128, 0, 5], [127, -3, 9]], np.int8)
    model, feeds = node_model(
        "DequantizeLinear", {"x": q, "s": np.array([0.5, 3.0], F32), "z": np.array([1, -2], np.int8)}, 13, axis=0
    )
    check(model, feeds, ("TEMPLATE", "XLA"))


def test_quantize_and_dequantize_per_block() -> None:
    scales = np.array([[1.0, 2.0], [0.5, 4.0], [3.0, 0.25]], F32)  # blocks of 2 along axis 1
    model, feeds = node_model(
        "QuantizeLinear", {"x": X, "s": scales, "z": np.zeros((3, 2), np.int16)}, 21, axis=1, block_size=2
    )
    check(model, feeds, rtol=0, atol=0)
    q = np.arange(-6, 6, dtype=np.int16).reshape(3, 4)
    model, feeds = node_model(
        "DequantizeLinear", {"x": q, "s": scales, "z": np.ones((3, 2), np.int16)}, 21, axis=1, block_size=2
    )
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize("shift", [0.0, 5.0, -5.0])  # a range across zero, all positive, all negative
def test_dynamic_quantize_linear_maps_the_range_with_zero_onto_uint8(shift: float) -> None:
    x = np.random.default_rng(3).uniform(-2, 2, (3, 5)).astype(F32) + F32(shift)
    model, feeds = node_model("DynamicQuantizeLinear", {"x": x}, 11, outputs=3)
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-6, atol=0)


RNG = np.random.default_rng(8)


def _u8(*shape: int) -> np.ndarray:
    return RNG.integers(0, 256, shape).astype(np.uint8)


def _one_step_apart_at_most(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> None:
    """The requantized products against ONNX Runtime's: implementations round a product that lands near
    a .5 tie differently (integer or float accumulation), so a few elements may be one step apart."""
    want = run_ort(model, feeds)[0]
    for device in ("TEMPLATE", "XLA"):
        got = run_sdk(model, feeds, device)[0]
        assert got.dtype == want.dtype and got.shape == want.shape
        steps = np.abs(got.astype(np.int32) - want.astype(np.int32))
        assert steps.max() <= 1 and (steps == 0).mean() > 0.9, (device, got, want)


def test_matmul_integer_with_zero_points_per_row_and_per_column() -> None:
    a, b, az, bz = _u8(4, 3), _u8(3, 2), _u8(4), _u8(2)
    expected = (a.astype(np.int32) - az[:, None]) @ (b.astype(np.int32) - bz[None, :])
    model, feeds = node_model("MatMulInteger", {"a": a, "b": b, "az": az, "bz": bz}, 10)
    check(model, feeds, ("TEMPLATE", "XLA"), expected=[expected])


def test_conv_integer_with_pads_and_a_zero_point_per_output_channel() -> None:
    # ONNX Runtime takes per-tensor zero points only: ONNX's reference evaluator is the oracle
    inputs = {"x": _u8(1, 2, 5, 5), "w": _u8(3, 2, 3, 3), "xz": np.array(7, np.uint8), "wz": _u8(3)}
    model, feeds = node_model("ConvInteger", inputs, 10, pads=[1, 0, 1, 2], strides=[1, 2])
    check(model, feeds, ("TEMPLATE", "XLA"), expected=ReferenceEvaluator(model).run(None, feeds))


def test_qlinear_matmul_requantizes_the_product() -> None:
    inputs = {
        "a": _u8(3, 4), "as": np.array(0.02, F32), "az": np.array(120, np.uint8),
        "b": _u8(4, 2), "bs": np.array(0.05, F32), "bz": np.array(130, np.uint8),
        "ys": np.array(0.4, F32), "yz": np.array(100, np.uint8),
    }  # fmt: skip
    _one_step_apart_at_most(*node_model("QLinearMatMul", inputs, 10))


def test_qlinear_conv_with_a_bias_and_scales_per_output_channel() -> None:
    inputs = {
        "x": _u8(1, 2, 4, 4), "xs": np.array(0.03, F32), "xz": np.array(128, np.uint8),
        "w": RNG.integers(-20, 20, (3, 2, 2, 2)).astype(np.int8), "ws": np.array([0.1, 0.2, 0.05], F32),
        "wz": np.zeros(3, np.int8), "ys": np.array(0.5, F32), "yz": np.array(10, np.uint8),
        "b": np.array([100, -200, 50], np.int32),
    }  # fmt: skip
    _one_step_apart_at_most(*node_model("QLinearConv", inputs, 10, pads=[1, 1, 1, 1]))
