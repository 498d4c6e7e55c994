"""A MatMul by a constant and its per-column bias Add as one op (:mod:`hetero_sdk_jax.matmul_bias`), the bias
added in the native GEMM kernel's epilogue: the pass firing only on its pattern, and fused models on XLA
against products written in numpy here, with native kernels on and off, over shapes and bias forms."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hetero_sdk import Model, Type, opset
from hetero_sdk.plugin import unpack_blob
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, core, param, single_op

from hetero_sdk_jax import native
from hetero_sdk_jax.lowering.kernels.gemm import MAX_ROWS, TARGET, TARGET_BIAS
from hetero_sdk_jax.matmul_bias import MATMUL_BIAS, column_bias
from hetero_sdk_jax.shape_buckets import independent_groups
from hetero_sdk_jax.transformations import transform_model

needs_kernel = pytest.mark.skipif(not native.available(TARGET_BIAS), reason="the native kernel cannot be built here")


def _layer(a_shape: tuple[int, ...], b: np.ndarray, bias: np.ndarray, transpose_b: bool = False, **kw: Any) -> Model:
    """``MatMul(x, b) + bias`` (``bias + MatMul`` with ``bias_first``; a second reader of the product with
    ``reader``); -1 in ``a_shape`` is a dynamic dimension."""
    px = opset.parameter(list(a_shape), Type.f32, name="x")
    product = opset.matmul(px, np.ascontiguousarray(b.T) if transpose_b else b, transpose_b=transpose_b)
    c = opset.constant(bias)
    out = opset.add(c, product) if kw.get("bias_first") else opset.add(product, c)
    if kw.get("reader"):
        out = opset.add(out, product)
    return single_op(out, [px])


def _types(model: Model) -> list[str]:
    transform_model(model)
    return [node.type_name for node in model.get_ordered_ops()]


def _expected(a: np.ndarray, b: np.ndarray, bias: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a @ b + bias`` in f64, and the magnitude of its terms (the f32 rounding scale)."""
    a64, b64, bias64 = a.astype(np.float64), b.astype(np.float64), bias.astype(np.float64)
    return a64 @ b64 + bias64, np.abs(a64) @ np.abs(b64) + np.abs(bias64)


def _data(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("bias_shape", [(70,), (1, 70), (1, 1, 70), (1,), ()])
def test_a_per_column_bias_is_fused_in_either_operand_order(bias_shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(1)
    bias = _data(rng, *bias_shape)
    for bias_first in (False, True):
        model = _layer((1, 20, 130), _data(rng, 130, 70), bias, bias_first=bias_first)
        assert _types(model) == ["Parameter", "Constant", "Constant", MATMUL_BIAS, "Result"]


def test_column_bias_broadcasts_one_value_and_refuses_other_axes() -> None:
    np.testing.assert_array_equal(column_bias(np.array([2.5], np.float32), 3), [2.5, 2.5, 2.5])
    np.testing.assert_array_equal(column_bias(np.array([[1, 2, 3]], np.float32), 3), [1, 2, 3])
    assert column_bias(np.zeros((2, 3), np.float32), 3) is None  # varies over rows
    assert column_bias(np.zeros((2,), np.float32), 3) is None


def test_outside_the_pattern_or_the_kernel_class_nothing_is_fused() -> None:
    rng = np.random.default_rng(2)
    b = _data(rng, 130, 70)
    per_row = _layer((20, 130), b, _data(rng, 20, 1))
    many_rows = _layer((MAX_ROWS + 1, 130), b, _data(rng, 70))
    small_weight = _layer((20, 16), _data(rng, 16, 8), _data(rng, 8))
    read_twice = _layer((20, 130), b, _data(rng, 70), reader=True)
    for model in (per_row, many_rows, small_weight, read_twice):
        assert MATMUL_BIAS not in _types(model)
    px, pb = param(np.zeros((20, 130), np.float32)), param(b, "b")
    computed_b = single_op(opset.add(opset.matmul(px, pb), opset.constant(_data(rng, 70))), [px, pb])
    assert MATMUL_BIAS not in _types(computed_b)


@needs_kernel
@OPS
@given(
    lead=st.lists(st.integers(1, 9), min_size=1, max_size=3).filter(lambda s: int(np.prod(s)) <= MAX_ROWS),
    depth=st.integers(41, 300),  # B of MIN_WEIGHT elements and more
    columns=st.integers(100, 300),
    transpose_b=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_fused_models_match_numpy_with_native_kernels_on_and_off(
    lead: list[int], depth: int, columns: int, transpose_b: bool, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    a, b, bias = _data(rng, *lead, depth), _data(rng, depth, columns), _data(rng, columns)
    expected, size = _expected(a, b, bias)
    for on in (True, False):
        model = _layer(a.shape, b, bias, transpose_b)
        compiled: Any = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": on})
        got = np.asarray(compiled([a])[0], np.float64)
        assert got.shape == expected.shape
        assert np.all(np.abs(got - expected) <= 1e-6 * size + 1e-30)
        text = compiled.jax_executable([list(a.shape)]).as_text()
        assert (TARGET_BIAS in text) is on and (TARGET not in text.replace(TARGET_BIAS, ""))


@needs_kernel
def test_a_fused_model_at_bf16_puts_the_packed_b_back_for_xla() -> None:
    rng = np.random.default_rng(3)
    a, b, bias = _data(rng, 20, 130), _data(rng, 130, 70), _data(rng, 70)
    compiled: Any = core().compile_model(_layer(a.shape, b, bias), "XLA", {"INFERENCE_PRECISION_HINT": "bf16"})
    expected, _ = _expected(a, b, bias)
    got = np.asarray(compiled([a])[0], np.float64)
    assert np.max(np.abs(got - expected)) <= 0.05 * np.max(np.abs(expected))
    assert TARGET_BIAS not in compiled.jax_executable([list(a.shape)]).as_text()


def test_the_fused_op_on_template_matches_numpy() -> None:
    """The op's definition (what TEMPLATE and the reference run) is MatMul's plus the bias."""
    rng = np.random.default_rng(4)
    a, b, bias = _data(rng, 3, 20, 130), _data(rng, 130, 70), _data(rng, 70)
    model = _layer(a.shape, b, bias, transpose_b=True)
    transform_model(model)
    assert MATMUL_BIAS in [node.type_name for node in model.get_ops()]
    expected, size = _expected(a, b, bias)
    got = np.asarray(core().compile_model(model, "TEMPLATE")([a])[0], np.float64)
    assert np.all(np.abs(got - expected) <= 1e-5 * size)


def test_a_dynamic_a_is_fused_and_its_rows_still_share_buckets() -> None:
    """A dynamic ``A`` (an OCR model's batch and width) is fused, and the rows stay independent for padding."""
    rng = np.random.default_rng(5)
    b, bias = _data(rng, 130, 70), _data(rng, 70)
    unfused = _layer((-1, -1, 130), b, bias)
    groups = independent_groups(unfused)
    fused = _layer((-1, -1, 130), b, bias)
    assert MATMUL_BIAS in _types(fused)
    assert independent_groups(fused) == groups != []
    small = _layer((-1, 16), _data(rng, 16, 8), _data(rng, 8))  # B too small for the kernel at any shape
    assert MATMUL_BIAS not in _types(small)


@needs_kernel
def test_a_dynamic_fused_model_runs_the_kernel_inside_its_class_and_xla_outside() -> None:
    rng = np.random.default_rng(6)
    b, bias = _data(rng, 130, 70), _data(rng, 70)
    compiled: Any = core().compile_model(_layer((-1, -1, 130), b, bias, transpose_b=True), "XLA")
    for shape, native_kernel in (((1, 40, 130), True), ((3, 50, 130), False)):  # 40 rows; 150 > MAX_ROWS
        a = _data(rng, *shape)
        expected, size = _expected(a, b, bias)
        got = np.asarray(compiled([a])[0], np.float64)
        assert got.shape == expected.shape
        assert np.all(np.abs(got - expected) <= 1e-6 * size + 1e-30)
        text = compiled.jax_executable([list(shape)]).as_text()
        assert (TARGET_BIAS in text) is native_kernel


@needs_kernel
def test_an_exported_fused_model_records_the_kernel_and_runs_when_imported() -> None:
    rng = np.random.default_rng(7)
    a, b, bias = _data(rng, 20, 300), _data(rng, 300, 100), _data(rng, 100)
    compiled: Any = core().compile_model(_layer(a.shape, b, bias, transpose_b=True), "XLA")
    blob = compiled.export_model()
    assert TARGET_BIAS in json.loads(unpack_blob(blob, "XLA")["header"])["native_kernels"]
    got = np.asarray(core().import_model(blob, "XLA")([a])[0], np.float64)
    expected, size = _expected(a, b, bias)
    assert np.all(np.abs(got - expected) <= 1e-6 * size + 1e-30)
