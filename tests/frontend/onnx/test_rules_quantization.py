"""QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear compute what ONNX Runtime computes: per
tensor, per axis and per block, to and from 8- and 16-bit integers, with ties rounded to even."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_models import check, node_model

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
