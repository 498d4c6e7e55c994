"""com.microsoft ops that mean ONNX's own (QuantizeLinear, DequantizeLinear, QLinearConv, GatherND, Trilu,
Pad, Range) and QLinearWhere, against ONNX Runtime and numpy written here, on TEMPLATE, XLA and HETERO."""

from __future__ import annotations

import numpy as np
import pytest
from ms_models import check, ms_model


def test_quantize_and_dequantize_linear() -> None:
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((3, 4)) * 5).astype(np.float32)
    scale, zero = np.array(0.1, np.float32), np.array(7, np.uint8)
    model, feeds = ms_model("QuantizeLinear", {"x": x, "scale": scale, "zero": zero}, output_types={"y": np.uint8})
    want = check(model, feeds, atol=0)
    np.testing.assert_array_equal(want[0], np.clip(np.round(x / 0.1) + 7, 0, 255).astype(np.uint8))
    q = rng.integers(-128, 128, (3, 4)).astype(np.int8)
    per_axis = np.array([0.5, 0.25, 2.0, 1.0], np.float32)
    zeros = np.array([1, -2, 0, 3], np.int8)
    model, feeds = ms_model("DequantizeLinear", {"q": q, "scale": per_axis, "zero": zeros}, axis=1)
    want = check(model, feeds)
    np.testing.assert_allclose(want[0], (q.astype(np.float32) - zeros) * per_axis)


def test_gather_nd() -> None:
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    indices = np.array([[0, 1], [1, 2]], np.int64)
    want = check(*ms_model("GatherND", {"data": data, "indices": indices}))
    np.testing.assert_array_equal(want[0], data[[0, 1], [1, 2]])


@pytest.mark.parametrize("upper", [0, 1])
def test_trilu(upper: int) -> None:
    x = np.arange(1, 21, dtype=np.float32).reshape(4, 5)
    k = np.array(1, np.int64)
    want = check(*ms_model("Trilu", {"x": x, "k": k}, upper=upper))
    np.testing.assert_array_equal(want[0], np.triu(x, 1) if upper else np.tril(x, 1))


def test_pad() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    pads, value = np.array([0, 1, 1, 0], np.int64), np.array(9, np.float32)
    want = check(*ms_model("Pad", {"x": x, "pads": pads, "value": value}, constants=["pads"]))
    np.testing.assert_array_equal(want[0], np.pad(x, ((0, 1), (1, 0)), constant_values=9))


@pytest.mark.parametrize("delta", [True, False])
def test_range(delta: bool) -> None:
    inputs = {
        "start": np.array(2, np.int64),
        "limit": np.array(11, np.int64),
        "delta": np.array(3, np.int64) if delta else None,
    }
    model, feeds = ms_model("Range", inputs, constants=[k for k, v in inputs.items() if v is not None],
                            output_types={"y": np.int64})  # fmt: skip
    want = check(model, feeds, atol=0)
    np.testing.assert_array_equal(want[0], np.arange(2, 11, 3 if delta else 1))


def test_qlinear_where() -> None:
    rng = np.random.default_rng(2)
    condition = rng.random((3, 4)) > 0.5
    x, y = rng.integers(0, 256, (3, 4)).astype(np.uint8), rng.integers(0, 256, (4,)).astype(np.uint8)
    scales = {name: np.array(s, np.float32) for name, s in (("xs", 0.1), ("ys", 0.2), ("zs", 0.15))}
    zeros = {name: np.array(z, np.uint8) for name, z in (("xz", 120), ("yz", 130), ("zz", 125))}
    inputs = {"c": condition, "x": x, "xs": scales["xs"], "xz": zeros["xz"], "other": y, "ys": scales["ys"],
              "yz": zeros["yz"], "zs": scales["zs"], "zz": zeros["zz"]}  # fmt: skip
    model, feeds = ms_model("QLinearWhere", inputs, ["z"], constants=[*scales, *zeros], output_types={"z": np.uint8})
    chosen = np.where(condition, (x.astype(np.float64) - 120) * 0.1, (y.astype(np.float64) - 130) * 0.2)
    expected = np.clip(np.round(chosen / 0.15) + 125, 0, 255).astype(np.uint8)
    want = check(model, feeds, atol=1)
    assert np.abs(want[0].astype(int) - expected).max() <= 1


def test_qlinear_conv_with_int8_activations() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (1, 2, 5, 5)).astype(np.int8)
    w = rng.integers(-128, 128, (3, 2, 3, 3)).astype(np.int8)
    inputs = {"x": x, "xs": np.array(0.05, np.float32), "xz": np.array(2, np.int8), "w": w,
              "ws": np.array(0.01, np.float32), "wz": np.array(0, np.int8), "ys": np.array(0.2, np.float32),
              "yz": np.array(-3, np.int8)}  # fmt: skip
    model, feeds = ms_model("QLinearConv", inputs, constants=["xs", "xz", "w", "ws", "wz", "ys", "yz"],
                            output_types={"y": np.int8})  # fmt: skip
    fx, fw = (x.astype(np.float64) - 2) * 0.05, w.astype(np.float64) * 0.01
    conv = np.zeros((1, 3, 3, 3))
    for i, j in np.ndindex(3, 3):
        conv[:, :, i, j] = np.einsum("nchw,fchw->nf", fx[:, :, i : i + 3, j : j + 3], fw)
    expected = np.clip(np.round(conv / 0.2) - 3, -128, 127)
    want = check(model, feeds, atol=1)
    assert np.abs(want[0].astype(int) - expected).max() <= 1
