"""com.microsoft MatMulIntegerToFloat and DynamicQuantizeMatMul against ONNX Runtime and numpy written here,
on TEMPLATE, XLA and HETERO."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ms_models import check, ms_model

FEW = settings(max_examples=5, deadline=None)
M, K, N = 3, 7, 5


def _ints(rng: np.random.Generator, dtype: type, *shape: int) -> np.ndarray:
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


@pytest.mark.parametrize("a_type, b_type", [(np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8)])
@pytest.mark.parametrize("per_column", [True, False])
def test_matmul_integer_to_float_matches_onnx_runtime(a_type: type, b_type: type, per_column: bool) -> None:
    rng = np.random.default_rng(1)
    a, b = _ints(rng, a_type, 2, M, K), _ints(rng, b_type, K, N)
    columns = N if per_column else 1
    b_scale = (rng.random(columns) * 0.1).astype(np.float32).reshape((N,) if per_column else ())
    b_zero = _ints(rng, b_type, columns).reshape(b_scale.shape) // 4
    a_scale, a_zero = np.array(0.05, np.float32), np.array(3, a_type)
    bias = rng.standard_normal(N).astype(np.float32)
    inputs = {"A": a, "B": b, "a_scale": a_scale, "b_scale": b_scale, "a_zero": a_zero, "b_zero": b_zero, "bias": bias}
    model, feeds = ms_model("MatMulIntegerToFloat", inputs, constants=["B", "b_scale", "b_zero"])
    want = check(model, feeds, rtol=1e-5, atol=1e-4)
    exact = (a.astype(np.int64) - a_zero) @ (b.astype(np.int64) - b_zero)
    np.testing.assert_allclose(want[0], exact * (a_scale * b_scale.astype(np.float64)) + bias, rtol=1e-5, atol=1e-4)


def test_matmul_integer_to_float_bias_after_left_out_zero_points() -> None:
    rng = np.random.default_rng(2)
    a, b = _ints(rng, np.uint8, M, K), _ints(rng, np.int8, K, N)
    bias = rng.standard_normal(N).astype(np.float32)
    inputs = {"A": a, "B": b, "a_scale": np.array(0.5, np.float32), "b_scale": np.array(0.25, np.float32),
              "a_zero": None, "b_zero": None, "bias": bias}  # fmt: skip
    model, feeds = ms_model("MatMulIntegerToFloat", inputs)
    expected = (a.astype(np.int64) @ b.astype(np.int64)) * 0.125 + bias
    check(model, feeds, expected=[expected.astype(np.float32)], rtol=1e-6, atol=1e-4)


def _dynamic_quantized(x: np.ndarray) -> tuple[np.ndarray, np.float32, np.uint8]:
    low, high = min(0.0, float(x.min())), max(0.0, float(x.max()))
    scale = np.float32((high - low) / 255)
    zero = np.uint8(np.clip(np.round(-low / scale), 0, 255))
    return np.clip(np.round(x / scale) + zero, 0, 255).astype(np.uint8), scale, zero


@pytest.mark.parametrize("b_type", [np.int8, np.uint8])
@pytest.mark.parametrize("zero_and_bias", [True, False])
def test_dynamic_quantize_matmul_matches_onnx_runtime(b_type: type, zero_and_bias: bool) -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, M, K)).astype(np.float32)
    b = _ints(rng, b_type, K, N) // 2
    b_scale = (rng.random(N) * 0.1).astype(np.float32)
    b_zero = (_ints(rng, b_type, N) // 16) if zero_and_bias else None
    bias = rng.standard_normal(N).astype(np.float32) if zero_and_bias else None
    inputs = {"A": a, "B": b, "b_scale": b_scale, "b_zero": b_zero, "bias": bias}
    model, feeds = ms_model("DynamicQuantizeMatMul", inputs, constants=["B"])
    want = check(model, feeds, rtol=1e-5, atol=1e-4)
    values, scale, zero = _dynamic_quantized(a)
    exact = (values.astype(np.int64) - zero) @ (b.astype(np.int64) - (0 if b_zero is None else b_zero))
    expected = exact * (scale * b_scale.astype(np.float64)) + (0 if bias is None else bias)
    np.testing.assert_allclose(want[0], expected, rtol=1e-5, atol=1e-4)


@FEW
@given(rows=st.integers(1, 4), k=st.integers(1, 9), n=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_dynamic_quantize_matmul_sizes(rows: int, k: int, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    inputs = {"A": (rng.standard_normal((rows, k)) * 4).astype(np.float32), "B": _ints(rng, np.int8, k, n),
              "b_scale": np.array(0.02, np.float32)}  # fmt: skip
    check(*ms_model("DynamicQuantizeMatMul", inputs), devices=("TEMPLATE",), rtol=1e-5, atol=1e-4)


def test_xla_computes_the_integer_product_as_an_int8_dot() -> None:
    """Quantized models run quantized on XLA: an i8 x i8 dot accumulating in i32, exact."""
    jax = pytest.importorskip("jax")
    from hetero_sdk_contrib.xla_quantized_matmul import integer_product

    rng = np.random.default_rng(4)
    a, b = _ints(rng, np.uint8, 3, K), _ints(rng, np.uint8, K, N)
    a_zero, b_zero = np.array(200, np.uint8), _ints(rng, np.uint8, N)
    text = jax.jit(integer_product).lower(a, a_zero, b, b_zero).as_text()
    assert "dot_general" in text and "xi8>" in text and "-> tensor<3x5xi32>" in text
    exact = (a.astype(np.int64) - 200) @ (b.astype(np.int64) - b_zero.astype(np.int64))
    np.testing.assert_array_equal(np.asarray(jax.jit(integer_product)(a, a_zero, b, b_zero)), exact)
