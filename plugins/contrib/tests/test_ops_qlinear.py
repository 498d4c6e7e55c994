"""com.microsoft QLinear* ops, QGemm, FusedConv and FusedGemm against ONNX Runtime and numpy written here,
on TEMPLATE, XLA and HETERO. Quantized results may differ from ONNX Runtime's by one level where its
fixed-point arithmetic rounds a tie the other way; the numpy expectation is exact."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ms_models import DEVICES, check, ms_model, run_ort, run_sdk, typed_model


def _quantize(y: np.ndarray, scale: float, zero: int, dtype: type) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.clip(np.round(y.astype(np.float64) / scale) + zero, info.min, info.max).astype(dtype)


def _dequantize(x: np.ndarray, scale: float, zero: int) -> np.ndarray:
    return (x.astype(np.float64) - zero) * scale


def _assert_within_one_level(got: np.ndarray, want: np.ndarray, message: str, exact_share: float) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, message
    difference = np.abs(got.astype(np.int64) - want.astype(np.int64))
    assert difference.max() <= 1, f"{message}: off by {difference.max()} levels"
    assert np.mean(difference == 0) >= exact_share, f"{message}: {np.mean(difference != 0):.0%} of the values differ"


def _check_quantized(model: object, feeds: dict[str, np.ndarray], expected: np.ndarray) -> None:
    """Each device within one level of ONNX Runtime (whose fixed-point arithmetic may round otherwise),
    and within one level of numpy's exact result, equal to it for most values (XLA divides by a
    constant scale as a multiplication, which may round a tie the other way)."""
    reference = run_ort(model, feeds)[0]  # type: ignore[arg-type]
    _assert_within_one_level(reference, expected, "ONNX Runtime vs numpy", exact_share=0.5)
    typed = typed_model(model, [reference])  # type: ignore[arg-type]
    for device in DEVICES:
        got = run_sdk(typed, feeds, device)[0]
        _assert_within_one_level(got, reference, f"{device} vs ONNX Runtime", exact_share=0.5)
        _assert_within_one_level(got, expected, f"{device} vs numpy", exact_share=0.85)


def _q(rng: np.random.Generator, dtype: type, *shape: int) -> np.ndarray:
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


PARAMS = {"a": (0.05, 10), "b": (0.03, -5), "y": (0.08, 3)}


def _scales(dtype: type, *names: str) -> dict[str, np.ndarray]:
    found = {}
    for name in names:
        scale, zero = PARAMS[name]
        zero = zero if dtype == np.int8 else zero + 128
        found[f"{name}_scale"], found[f"{name}_zero"] = np.array(scale, np.float32), np.array(zero, dtype)
    return found


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_qlinear_binary(op: str, dtype: type) -> None:
    rng = np.random.default_rng(1)
    a, b = _q(rng, dtype, 2, 3, 4), _q(rng, dtype, 4)
    s = _scales(dtype, "a", "b", "y")
    inputs = {"A": a, "a_scale": s["a_scale"], "a_zero": s["a_zero"], "B": b, "b_scale": s["b_scale"],
              "b_zero": s["b_zero"], "y_scale": s["y_scale"], "y_zero": s["y_zero"]}  # fmt: skip
    model, feeds = ms_model(
        op, inputs, constants=[k for k in inputs if "scale" in k or "zero" in k], output_types={"y": dtype}
    )
    fa, fb = _dequantize(a, s["a_scale"], s["a_zero"]), _dequantize(b, s["b_scale"], s["b_zero"])
    combined = fa + fb if op == "QLinearAdd" else fa * fb
    _check_quantized(model, feeds, _quantize(combined, float(s["y_scale"]), int(s["y_zero"]), dtype))


@pytest.mark.parametrize("op", ["QLinearSigmoid", "QLinearLeakyRelu", "QLinearGlobalAveragePool"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_qlinear_unary(op: str, dtype: type) -> None:
    rng = np.random.default_rng(2)
    x = _q(rng, dtype, 2, 3, 4, 5)
    s = _scales(dtype, "a", "y")
    inputs = {"X": x, "x_scale": s["a_scale"], "x_zero": s["a_zero"], "y_scale": s["y_scale"], "y_zero": s["y_zero"]}
    attrs = {"alpha": 0.1} if op == "QLinearLeakyRelu" else {}
    model, feeds = ms_model(op, inputs, constants=list(inputs)[1:], output_types={"y": dtype}, **attrs)
    f = _dequantize(x, s["a_scale"], s["a_zero"])
    y = {
        "QLinearSigmoid": lambda: 1 / (1 + np.exp(-f)),
        "QLinearLeakyRelu": lambda: np.where(f >= 0, f, 0.1 * f),
        "QLinearGlobalAveragePool": lambda: f.mean(axis=(2, 3), keepdims=True),
    }[op]()
    _check_quantized(model, feeds, _quantize(y, float(s["y_scale"]), int(s["y_zero"]), dtype))


def test_qlinear_average_pool() -> None:
    rng = np.random.default_rng(3)
    x = _q(rng, np.uint8, 1, 2, 6, 6)
    s = _scales(np.uint8, "a", "y")
    inputs = {"X": x, "x_scale": s["a_scale"], "x_zero": s["a_zero"], "y_scale": s["y_scale"], "y_zero": s["y_zero"]}
    model, feeds = ms_model("QLinearAveragePool", inputs, constants=list(inputs)[1:], kernel_shape=[2, 2],
                            strides=[2, 2], output_types={"y": np.uint8})  # fmt: skip
    f = _dequantize(x, s["a_scale"], s["a_zero"])
    pooled = f.reshape(1, 2, 3, 2, 3, 2).mean(axis=(3, 5))
    _check_quantized(model, feeds, _quantize(pooled, float(s["y_scale"]), int(s["y_zero"]), np.uint8))


def test_qlinear_concat() -> None:
    rng = np.random.default_rng(4)
    parts = [_q(rng, np.uint8, 2, n, 3) for n in (1, 2)]
    s = _scales(np.uint8, "a", "b", "y")
    inputs = {"y_scale": s["y_scale"], "y_zero": s["y_zero"], "X0": parts[0], "s0": s["a_scale"], "z0": s["a_zero"],
              "X1": parts[1], "s1": s["b_scale"], "z1": s["b_zero"]}  # fmt: skip
    model, feeds = ms_model("QLinearConcat", inputs, constants=["y_scale", "y_zero", "s0", "z0", "s1", "z1"], axis=1,
                            output_types={"y": np.uint8})  # fmt: skip
    f = np.concatenate([_dequantize(parts[0], s["a_scale"], s["a_zero"]),
                        _dequantize(parts[1], s["b_scale"], s["b_zero"])], axis=1)  # fmt: skip
    _check_quantized(model, feeds, _quantize(f, float(s["y_scale"]), int(s["y_zero"]), np.uint8))


@pytest.mark.parametrize("float_output", [True, False])
def test_qgemm(float_output: bool) -> None:
    rng = np.random.default_rng(5)
    a, b = _q(rng, np.uint8, 3, 4), _q(rng, np.int8, 5, 4)
    c = rng.integers(-1000, 1000, 5).astype(np.int32)
    s = _scales(np.uint8, "a", "y") | {k.replace("a_", "b_"): v for k, v in _scales(np.int8, "b").items()}
    inputs = {"A": a, "a_scale": s["a_scale"], "a_zero": s["a_zero"], "B": b, "b_scale": s["b_scale"],
              "b_zero": s["b_zero"], "C": c}  # fmt: skip
    if not float_output:
        inputs |= {"y_scale": s["y_scale"], "y_zero": s["y_zero"]}
    model, feeds = ms_model("QGemm", inputs, constants=[k for k in inputs if k not in ("A",)], transB=1, alpha=0.5,
                            output_types={"y": np.float32 if float_output else np.uint8})  # fmt: skip
    fa, fb = _dequantize(a, s["a_scale"], s["a_zero"]), _dequantize(b, s["b_scale"], s["b_zero"])
    y = 0.5 * (fa @ fb.T + c * float(s["a_scale"]) * float(s["b_scale"]))  # alpha scales C too, as ORT does
    if float_output:
        want = run_ort(model, feeds)[0]
        np.testing.assert_allclose(want, y, rtol=1e-5, atol=1e-4)
        typed = typed_model(model, [want])
        for device in DEVICES:
            np.testing.assert_allclose(run_sdk(typed, feeds, device)[0], want, rtol=1e-5, atol=1e-4, err_msg=device)
    else:
        _check_quantized(model, feeds, _quantize(y, float(s["y_scale"]), int(s["y_zero"]), np.uint8))


ACTIVATIONS = {
    "Relu": ({}, lambda y: np.maximum(y, 0)),
    "LeakyRelu": ({"activation_params": [0.2]}, lambda y: np.where(y >= 0, y, 0.2 * y)),
    "Sigmoid": ({}, lambda y: 1 / (1 + np.exp(-y))),
    "Tanh": ({}, np.tanh),
    "Clip": ({"activation_params": [-0.5, 0.7]}, lambda y: np.clip(y, -0.5, 0.7)),
    "HardSigmoid": ({"activation_params": [0.3, 0.4]}, lambda y: np.clip(0.3 * y + 0.4, 0, 1)),
}


def _conv(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A 'valid' 2-D convolution, one output at a time."""
    n, _, h, wd = x.shape
    f, _, kh, kw = w.shape
    out = np.zeros((n, f, h - kh + 1, wd - kw + 1))
    for i, j in np.ndindex(out.shape[2], out.shape[3]):
        out[:, :, i, j] = np.einsum("nchw,fchw->nf", x[:, :, i : i + kh, j : j + kw], w) + b
    return out


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_fused_conv(activation: str) -> None:
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32) / 3
    b = rng.standard_normal(3).astype(np.float32)
    attrs, fn = ACTIVATIONS[activation]
    model, feeds = ms_model("FusedConv", {"X": x, "W": w, "B": b}, constants=["W", "B"], activation=activation,
                            kernel_shape=[3, 3], **attrs)  # fmt: skip
    want = check(model, feeds, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(want[0], fn(_conv(x, w, b)), rtol=1e-5, atol=1e-5)


def test_fused_conv_adds_z_before_the_activation() -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
    w = rng.standard_normal((2, 2, 3, 3)).astype(np.float32) / 3
    b, z = rng.standard_normal(2).astype(np.float32), rng.standard_normal((1, 2, 2, 2)).astype(np.float32)
    model, feeds = ms_model("FusedConv", {"X": x, "W": w, "B": b, "Z": z}, activation="Relu")
    check(model, feeds, expected=[np.maximum(_conv(x, w, b) + z, 0).astype(np.float32)], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("activation", ["Relu", "LeakyRelu", "Sigmoid"])
def test_fused_gemm(activation: str) -> None:
    rng = np.random.default_rng(8)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (5, 4), (5,)))
    attrs = {"activation_alpha": 0.2} if activation == "LeakyRelu" else {}
    model, feeds = ms_model("FusedGemm", {"A": a, "B": b, "C": c}, activation=activation, transB=1, alpha=0.5,
                            beta=2.0, **attrs)  # fmt: skip
    want = check(model, feeds, rtol=1e-5, atol=1e-5)
    y = 0.5 * a.astype(np.float64) @ b.T + 2.0 * c
    expected = {"Relu": np.maximum(y, 0), "LeakyRelu": np.where(y >= 0, y, 0.2 * y), "Sigmoid": 1 / (1 + np.exp(-y))}
    np.testing.assert_allclose(want[0], expected[activation], rtol=1e-5, atol=1e-5)
    assert math.isfinite(float(want[0].sum()))


@pytest.mark.parametrize(("opset", "axis"), [(13, -1), (13, 1), (11, 1)])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_qlinear_softmax(opset: int, axis: int, dtype: type) -> None:
    """Softmax of the dequantized input, requantized (to ONNX Runtime's 1/256 output scale); before opset
    13 the axes from ``axis`` on are normalised together."""
    rng = np.random.default_rng(6)
    x = _q(rng, dtype, 2, 3, 4)
    s = _scales(dtype, "a")
    zero = np.array(0 if dtype == np.uint8 else -128, dtype)
    inputs = {"X": x, "x_scale": s["a_scale"], "x_zero": s["a_zero"], "y_scale": np.array(1 / 256, np.float32),
              "y_zero": zero}  # fmt: skip
    model, feeds = ms_model("QLinearSoftmax", inputs, constants=list(inputs)[1:], output_types={"y": dtype},
                            axis=axis, opset=opset)  # fmt: skip
    f = _dequantize(x, s["a_scale"], s["a_zero"])
    flat = f.reshape(2, -1) if opset < 13 else f
    e = np.exp(flat - flat.max(axis=axis, keepdims=True))
    y = (e / e.sum(axis=axis, keepdims=True)).reshape(f.shape)
    _check_quantized(model, feeds, _quantize(y, 1 / 256, int(zero), dtype))
