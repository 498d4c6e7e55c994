"""Compiling: 64-bit models without flipping JAX's global flag, bf16 inference, dynamic shapes, errors."""

from __future__ import annotations

import threading

import jax
import numpy as np
import pytest
from hetero_sdk import Model, Type, opset
from hetero_sdk.errors import CompilationError, PropertyValueError, UnsupportedOperationError
from hetero_sdk.reference import evaluate
from xla_helpers import assert_close, core, run_xla

from hetero_sdk_jax import compiled_model


def _mlp(dtype: Type = Type.f32) -> Model:
    rng = np.random.default_rng(0)
    x = opset.parameter([4, 16], dtype, name="x")
    w1 = rng.standard_normal((16, 32)).astype(dtype.numpy)
    w2 = rng.standard_normal((32, 8)).astype(dtype.numpy)
    hidden = opset.relu(opset.matmul(x, w1, name="fc1"), name="act")
    return Model([opset.softmax(opset.matmul(hidden, w2, name="fc2"), 1, name="probs")], [x], name="mlp")


def test_i64_and_f64_models_run_without_enabling_x64_globally() -> None:
    a = opset.parameter([3], Type.i64, name="a")
    b = opset.parameter([3], Type.f64, name="b")
    big = np.int64(2**40)
    model = Model([opset.add(a, big, name="sum"), opset.multiply(b, 1e-300, name="tiny")], [a, b])
    av, bv = np.array([1, -2, 3], np.int64), np.array([1.0, 2.0, 3.0])
    total, tiny = run_xla(model, [av, bv])
    assert total.dtype == np.int64 and tiny.dtype == np.float64
    np.testing.assert_array_equal(total, av + 2**40)
    np.testing.assert_allclose(tiny, bv * 1e-300)
    assert not jax.config.jax_enable_x64


def test_x64_stays_thread_local_while_another_thread_runs_a_64_bit_model() -> None:
    a = opset.parameter([1000], Type.i64, name="a")
    compiled = core().compile_model(Model([opset.add(a, np.int64(1))], [a]), "XLA")
    seen = []

    def other() -> None:
        seen.append(jax.numpy.zeros(1, jax.numpy.int64).dtype)

    def run() -> None:
        for _ in range(20):
            compiled([np.zeros(1000, np.int64)])

    worker = threading.Thread(target=run)
    worker.start()
    for _ in range(20):
        with pytest.warns(UserWarning):
            other()
    worker.join()
    assert all(dtype == np.int32 for dtype in seen)


def test_bf16_precision_computes_in_bf16_and_returns_declared_types() -> None:
    model = _mlp()
    x = np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32)
    expected = evaluate(model, [x])[0]
    compiled = core().compile_model(model, "XLA", {"INFERENCE_PRECISION_HINT": "bf16"})
    assert compiled.get_property("INFERENCE_PRECISION_HINT") == Type.bf16
    got = compiled([x])[0]
    assert got.dtype == np.float32
    assert_close(got, expected, rtol=5e-2, atol=5e-2)
    assert not np.array_equal(got, run_xla(model, [x])[0])  # really computed in reduced precision


def test_accuracy_mode_keeps_f32_whatever_the_precision_hint() -> None:
    model = _mlp()
    x = np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32)
    config = {"INFERENCE_PRECISION_HINT": "bf16", "EXECUTION_MODE_HINT": "ACCURACY"}
    assert_close(core().compile_model(model, "XLA", config)([x])[0], evaluate(model, [x])[0], 1e-5, 1e-6)


def test_unsupported_precision_is_a_property_error() -> None:
    with pytest.raises(PropertyValueError, match="INFERENCE_PRECISION_HINT"):
        core().compile_model(_mlp(), "XLA", {"INFERENCE_PRECISION_HINT": "f16"})


def test_dynamic_input_dims_compile_once_per_shape_and_keep_a_bounded_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    x = opset.parameter([-1, 4], Type.f32, name="x")
    target = opset.concat([opset.constant(np.array([-1], np.int64)), opset.gather(opset.shape_of(x), [1], 0)], 0)
    flat = opset.reshape(x, target, special_zero=False)
    model = Model([opset.reduce_sum(flat, [1], name="sum")], [x], name="dynamic")
    compiled = core().compile_model(model, "XLA", {"XLA_SHAPE_CACHE_SIZE": 2, "XLA_SHAPE_BUCKETS": "EXACT"})
    assert compiled.outputs[0].partial_shape.dims == (-1,)
    assert compiled.get_property("XLA_SHAPE_CACHE_SIZE") == 2
    calls = []
    original = compiled_model.specialize
    monkeypatch.setattr(compiled_model, "specialize", lambda m, s: calls.append(s) or original(m, s))
    for rows in (1, 3, 1, 5, 1, 3):
        value = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
        np.testing.assert_array_equal(compiled([value])[0], value.sum(1))
    # 1 and 3 compile; 1 again is cached; 5 compiles and evicts 3 (the least recently used); 1 is
    # cached; 3 compiles again and evicts 5
    assert [s[0][0] for s in calls] == [1, 3, 5, 3]
    assert compiled.cached_shapes == [((1, 4),), ((3, 4),)]


def test_repeated_shapes_reuse_their_executable_and_keep_the_cache_order(monkeypatch: pytest.MonkeyPatch) -> None:
    # a call with the last call's shapes takes its executable without the cache: it must still be the
    # executable of those shapes, and a change of shapes must still refresh the least-recently-used order
    x = opset.parameter([-1, 4], Type.f32, name="x")
    target = opset.concat([opset.constant(np.array([-1], np.int64)), opset.gather(opset.shape_of(x), [1], 0)], 0)
    model = Model([opset.reduce_sum(opset.reshape(x, target, special_zero=False), [1], name="sum")], [x], name="d")
    compiled = core().compile_model(model, "XLA", {"XLA_SHAPE_CACHE_SIZE": 2, "XLA_SHAPE_BUCKETS": "EXACT"})
    calls = []
    original = compiled_model.specialize
    monkeypatch.setattr(compiled_model, "specialize", lambda m, s: calls.append(s) or original(m, s))
    request = compiled.create_infer_request()
    for rows in (1, 1, 3, 3, 1, 1, 5, 5, 1, 3):
        value = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4) * rows
        np.testing.assert_array_equal(request.infer([value])[0], value.sum(1))
    # 5 evicts 3 (1 was used after it), then 3 evicts 5
    assert [s[0][0] for s in calls] == [1, 3, 5, 3]
    assert compiled.cached_shapes == [((1, 4),), ((3, 4),)]


def test_the_shape_cache_size_is_a_checked_property() -> None:
    xla = core()
    assert xla.get_property("XLA", "XLA_SHAPE_CACHE_SIZE") == 8
    with pytest.raises(PropertyValueError, match=r"XLA_SHAPE_CACHE_SIZE; allowed: integers 1\.\.1024"):
        xla.set_property("XLA", {"XLA_SHAPE_CACHE_SIZE": 0})
    xla.set_property("XLA", {"XLA_SHAPE_CACHE_SIZE": 3})
    assert xla.get_property("XLA", "XLA_SHAPE_CACHE_SIZE") == 3


def test_unsupported_ops_are_named_with_the_reason() -> None:
    x = opset.parameter([4], Type.f32, name="x")
    model = Model([opset.non_zero(x, name="where")], [x])
    with pytest.raises(UnsupportedOperationError, match=r"NonZero 'where'.*HETERO:XLA,TEMPLATE"):
        core().compile_model(model, "XLA")


def test_a_kernel_error_while_tracing_is_a_compilation_error_naming_the_node() -> None:
    x = opset.parameter([2], Type.i32, name="x")
    zero_division = opset.divide(np.array([1, 2], np.int32), np.array([0, 1], np.int32), name="bad")
    with pytest.raises(CompilationError, match="Divide 'bad'"):
        core().compile_model(Model([opset.add(x, zero_division)], [x]), "XLA")


def test_compiling_does_not_change_the_model_and_two_compiles_are_independent() -> None:
    model = _mlp()
    before = [(n.friendly_name, n.type_name, n.outputs()[0].partial_shape) for n in model.get_ops() if n.outputs()]
    first, second = (core().compile_model(model, "XLA") for _ in range(2))
    after = [(n.friendly_name, n.type_name, n.outputs()[0].partial_shape) for n in model.get_ops() if n.outputs()]
    assert before == after
    x = np.ones((4, 16), np.float32)
    expected = first([x])[0].copy()
    np.testing.assert_array_equal(second([x])[0], expected)
    first.release()
    del first
    np.testing.assert_array_equal(second([x])[0], expected)
