"""The native f32 GEMM kernel (``hetero_sdk_gemm_f32``, native/src/gemm_f32.cc) against products written in
numpy here: row, depth and column counts that are not multiples of the register tile, the K blocks or the
32-column panels, with and without a bias; ``B`` packed once at compile time (its layout, MatMul's prepare
hook, either orientation, a blob round trip, the bf16 path that puts it back for XLA's dot); the MatMul
lowering with native kernels on, off, and unavailable (no compiler); and an LSTM's input projection in the
kernel (W packed by the LSTM's prepare hook) against an LSTM written in numpy (``test_lstm_native``)."""

from __future__ import annotations

import json
from typing import Any

import hetero_sdk as hs
import jax
import numpy as np
import pytest
from hetero_sdk import opset
from hetero_sdk.plugin import unpack_blob
from hypothesis import given
from hypothesis import strategies as st
from test_lstm_native import _model as lstm_model
from test_lstm_native import _values as lstm_values
from test_lstm_native import numpy_lstm
from xla_helpers import OPS, core, param, single_op

from hetero_sdk_jax import native
from hetero_sdk_jax.lowering import weights_of
from hetero_sdk_jax.lowering.kernels.gemm import (
    MAX_DEPTH,
    MAX_ROWS,
    TARGET,
    TARGET_BIAS,
    faster_natively,
    native_matmul,
    packed_b,
    prepare,
    unpacked_b,
)  # fmt: skip
from hetero_sdk_jax.lowering.kernels.lstm import W_INPUT, is_packed_w, packed_w, unpacked_w
from hetero_sdk_jax.lowering.kernels.lstm import prepare as prepare_lstm
from hetero_sdk_jax.native import BuildError, native_scope

pytestmark = pytest.mark.skipif(
    not (native.available(TARGET) and native.available(TARGET_BIAS)), reason="no C++ compiler with AVX-512 here"
)


def _assert_product(got: Any, a: np.ndarray, b: np.ndarray, bias: np.ndarray | None = None) -> None:
    """``got`` is ``a @ b (+ bias)`` to f32 rounding: each sum within a few ulps of its terms' magnitudes."""
    expected = a.astype(np.float64) @ b.astype(np.float64)
    size = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    if bias is not None:
        expected += bias
        size += np.abs(bias)
    got = np.asarray(got, np.float64)
    assert got.shape == expected.shape
    error = np.abs(got - expected)
    assert np.all(error <= 1e-6 * size + 1e-30), f"error {error.max():.3g} where the terms sum to {size.max():.3g}"


@OPS
@given(
    rows=st.integers(1, 40), depth=st.integers(1, 300), columns=st.integers(1, 100), with_bias=st.booleans(),
    seed=st.integers(0, 2**16),
)  # fmt: skip
def test_kernel_matches_numpy(rows: int, depth: int, columns: int, with_bias: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((rows, depth)).astype(np.float32)
    b = rng.standard_normal((depth, columns)).astype(np.float32)
    bias = rng.standard_normal(columns).astype(np.float32) if with_bias else None
    got = jax.jit(lambda a, p, c: native_matmul(a, p, columns, c))(a, packed_b(b), bias)
    _assert_product(got, a, b, bias)


def test_kernel_with_more_rows_than_a_row_block_matches_numpy() -> None:
    """500 rows: two blocks of rows (480 and 20), tiles of 12 and a shorter last tile in each."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((500, 150)).astype(np.float32)
    b = rng.standard_normal((150, 70)).astype(np.float32)
    _assert_product(jax.jit(lambda a, p: native_matmul(a, p, 70))(a, packed_b(b)), a, b)


@pytest.mark.parametrize(("rows", "depth", "columns"), [(100, 37, 6001), (500, 20, 1100)])
def test_kernel_with_outputs_larger_than_l2_matches_numpy(rows: int, depth: int, columns: int) -> None:
    """Outputs over 2 MiB go by blocks of panels (the second: two blocks of rows too)."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((rows, depth)).astype(np.float32)
    b = rng.standard_normal((depth, columns)).astype(np.float32)
    bias = rng.standard_normal(columns).astype(np.float32)
    got = jax.jit(lambda a, p, c: native_matmul(a, p, columns, c))(a, packed_b(b), bias)
    _assert_product(got, a, b, bias)


def test_kernel_on_a_batched_a() -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 3, 5, 40)).astype(np.float32)
    b = rng.standard_normal((40, 33)).astype(np.float32)
    got = np.asarray(jax.jit(lambda a, p: native_matmul(a, p, 33))(a, packed_b(b)))
    assert got.shape == (2, 3, 5, 33)
    _assert_product(got.reshape(30, 33), a.reshape(30, 40), b)


@OPS
@given(depth=st.integers(1, 40), columns=st.integers(1, 100))
def test_packed_layout(depth: int, columns: int) -> None:
    b = np.random.default_rng(columns).standard_normal((depth, columns)).astype(np.float32)
    packed = packed_b(b)
    panels = (columns + 31) // 32
    assert packed.shape == (panels, depth, 32)
    assert not packed.flags.writeable and packed.ctypes.data % 64 == 0
    expected = np.zeros((panels, depth, 32), np.float32)
    for k in range(depth):
        for n in range(columns):
            expected[n // 32, k, n % 32] = b[k, n]
    np.testing.assert_array_equal(packed, expected)
    np.testing.assert_array_equal(np.asarray(unpacked_b(packed, columns)), b)


def test_the_measured_class() -> None:
    assert faster_natively(20, 1024, 8210) and faster_natively(40, 120, 120) and faster_natively(1, 512, 214)
    assert faster_natively(MAX_ROWS, 512, 512) and not faster_natively(MAX_ROWS + 1, 512, 512)  # XLA level or ahead
    assert not faster_natively(20, 32, 32)  # a weight too small to measure
    assert not faster_natively(20, MAX_DEPTH + 1, 1)  # A's columns are gathered with 32-bit offsets


def _matmul_model(
    a_shape: tuple[int, ...], depth: int, columns: int, transpose_b: bool, seed: int = 3
) -> tuple[hs.Model, np.ndarray, np.ndarray]:
    """A model of one MatMul of a parameter by a Constant; ``b`` is returned as ``[K, N]``."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*a_shape, depth)).astype(np.float32)
    b = rng.standard_normal((depth, columns)).astype(np.float32)
    constant = np.ascontiguousarray(b.T) if transpose_b else b
    pa = param(a)
    return single_op(opset.matmul(pa, constant, transpose_b=transpose_b), [pa]), a, b


@pytest.mark.parametrize(("a_shape", "transpose_b"), [((20,), True), ((2, 7), False), ((1, 40), False)])
def test_matmul_lowering_with_native_kernels_on_and_off(a_shape: tuple[int, ...], transpose_b: bool) -> None:
    model, a, b = _matmul_model(a_shape, 130, 70, transpose_b)
    texts = {}
    for on in (True, False):
        compiled: Any = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": on})
        got = np.asarray(compiled([a])[0])
        _assert_product(got.reshape(-1, 70), a.reshape(-1, 130), b)
        texts[on] = compiled.jax_executable([list(a.shape)]).as_text()
    assert TARGET in texts[True] and TARGET not in texts[False]


def test_the_matmul_lowering_without_a_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel that cannot be built: the MatMul runs XLA's dot, with the same values."""

    def no_compiler(target: str) -> None:
        raise BuildError("no C++ compiler: 'c++' is not on PATH")

    model, a, b = _matmul_model((20,), 130, 70, True)
    monkeypatch.setattr(native.kernels, "register", no_compiler)
    compiled: Any = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": True})
    _assert_product(compiled([a])[0], a, b)
    assert TARGET not in compiled.jax_executable([list(a.shape)]).as_text()


def test_prepare_packs_a_constant_once() -> None:
    """A MatMul in the kernel's class gets its Constant replaced by the packed form (the same array each time
    it is asked: one weight), which the compiled model takes as its only weight."""
    model, _, b = _matmul_model((20,), 300, 70, True)  # 84 KB: a weight (64 KiB and more)
    node = next(op for op in model.get_ops() if op.type_name == "MatMul")
    values = [None, node.input_value(1).node.attrs["value"]]
    with native_scope("cpu", True):
        first, again = prepare(node, values)[1], prepare(node, values)[1]
        shapes = [weight.shape for weight in weights_of(model)]
    assert first is again
    np.testing.assert_array_equal(first, packed_b(b))
    assert shapes == [(3, 300, 32)]
    with native_scope("cpu", False):
        assert prepare(node, values) == {}
    many_rows = _matmul_model((MAX_ROWS + 1,), 300, 70, False)[0]  # outside the class: XLA's dot reads B
    with native_scope("cpu", True):
        assert [weight.shape for weight in weights_of(many_rows)] == [(300, 70)]


def test_prepare_leaves_a_transposed_a_and_a_computed_b() -> None:
    rng = np.random.default_rng(4)
    a = rng.standard_normal((130, 20)).astype(np.float32)
    b = rng.standard_normal((130, 70)).astype(np.float32)
    pa, pb = param(a), param(b, "b")
    transposed = single_op(opset.matmul(pa, b, transpose_a=True), [pa])
    computed = single_op(opset.matmul(pa, pb, transpose_a=True), [pa, pb])
    for model, inputs in ((transposed, [a]), (computed, [a, b])):
        compiled: Any = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": True})
        _assert_product(compiled(inputs)[0], a.T, b)
        assert TARGET not in compiled.jax_executable([list(x.shape) for x in inputs]).as_text()


def test_a_packed_b_through_the_compiled_model_and_a_blob() -> None:
    model, a, b = _matmul_model((20,), 300, 100, True)
    compiled: Any = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": True})
    assert TARGET in compiled.jax_executable([list(a.shape)]).as_text()
    got = np.asarray(compiled([a])[0])
    _assert_product(got, a, b)
    blob = compiled.export_model()
    assert TARGET in json.loads(unpack_blob(blob, "XLA")["header"])["native_kernels"]
    np.testing.assert_array_equal(np.asarray(core().import_model(blob, "XLA")([a])[0]), got)


def test_a_packed_b_read_by_xla_in_bf16() -> None:
    """At bf16 the kernel does not run: the lowering puts the packed B back for XLA's dot."""
    model, a, b = _matmul_model((20,), 130, 70, True)
    compiled: Any = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": True, "INFERENCE_PRECISION_HINT": "bf16"})
    got = np.asarray(compiled([a])[0], np.float64)
    expected = a.astype(np.float64) @ b
    assert np.max(np.abs(got - expected)) <= 0.05 * np.max(np.abs(expected))


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_an_lstm_input_projection_in_the_kernel_matches_numpy(direction: str) -> None:
    """X [2, 9, 40] by W^T [40, dirs * 4 * 32]: in the kernel's class, so W is packed and the projection, its
    bias added, runs the kernel (the recurrence the LSTM kernel); a partial length."""
    dirs = 2 if direction == "bidirectional" else 1
    values = lstm_values(7, batch=2, steps=9, inputs=40, size=32, dirs=dirs, lengths=[9, 5])
    model = lstm_model(values, direction)
    node = next(op for op in model.get_ops() if op.type_name == "LSTMSequence")
    with native_scope("cpu", True):
        assert is_packed_w(node, prepare_lstm(node, [v.node.attrs.get("value") for v in node.input_values()])[W_INPUT])
    compiled: Any = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": True})
    assert TARGET_BIAS in compiled.jax_executable([list(v.shape) for v in values[:3]]).as_text()
    x, h0, c0, lengths, w, r, b = values
    expected = numpy_lstm(x, h0, c0, lengths, w, r, b, direction, 0.0)
    for name, got, want in zip(("Y", "Ho", "Co"), compiled(values[:3]).to_tuple(), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=name)


def test_an_lstm_with_a_packed_w_in_bf16() -> None:
    """At bf16 the kernels do not run: the lowering puts the packed W back for XLA's product."""
    values = lstm_values(8, batch=1, steps=6, inputs=40, size=32, dirs=2, lengths=[6])
    config = {"XLA_NATIVE_KERNELS": True, "INFERENCE_PRECISION_HINT": "bf16"}
    compiled: Any = core().compile_model(lstm_model(values, "bidirectional"), "XLA", config)
    x, h0, c0, lengths, w, r, b = values
    expected = numpy_lstm(x, h0, c0, lengths, w, r, b, "bidirectional", 0.0)
    for got, want in zip(compiled(values[:3]).to_tuple(), expected, strict=True):
        assert np.max(np.abs(np.asarray(got, np.float64) - want)) <= 0.05


def test_packed_w_layout() -> None:
    w = np.random.default_rng(9).standard_normal((2, 128, 40)).astype(np.float32)
    packed = packed_w(w)
    assert packed.shape == (8, 40, 32)
    assert packed[5, 7, 3] == w[1, 5 * 32 + 3 - 128, 7]  # column 163 of W^T: direction 1, gate row 35
    np.testing.assert_array_equal(np.asarray(unpacked_w(packed, 2, 128)), w)


def test_kernel_split_across_the_thread_pool_matches_numpy() -> None:
    """20x1024 by 1024x2000: 63 panels, one a piece, on however many threads XLA's pool has."""
    rng = np.random.default_rng(10)
    a = rng.standard_normal((20, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 2000)).astype(np.float32)
    bias = rng.standard_normal(2000).astype(np.float32)
    _assert_product(jax.jit(lambda a, p, c: native_matmul(a, p, 2000, c))(a, packed_b(b), bias), a, b, bias)
