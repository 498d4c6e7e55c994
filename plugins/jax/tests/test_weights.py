"""Weights on XLA: large constants are arguments of the executable (moved to the device once, shared by
every executable of the compiled model), not constants baked into the program; results stay those of
numpy, exports stay self-contained."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hetero_sdk import Model, opset
from xla_helpers import core

from hetero_sdk_jax import WithWeights
from hetero_sdk_jax.compiled_model import XlaCompiledModel
from hetero_sdk_jax.lowering import WEIGHT_BYTES, weights_of

_RNG = np.random.default_rng(3)
W1 = _RNG.standard_normal((128, 256)).astype(np.float32)  # 128 KiB: a weight
W2 = _RNG.standard_normal((256, 64)).astype(np.float32)  # 64 KiB: a weight
BIAS = _RNG.standard_normal(256).astype(np.float32)  # 1 KiB: a constant in the program


def _mlp(batch: int | None = 4) -> Model:
    x = opset.parameter([batch if batch is not None else -1, 128], np.float32, name="x")
    hidden = opset.relu(opset.add(opset.matmul(x, opset.constant(W1)), opset.constant(BIAS)))
    return Model([opset.matmul(hidden, opset.constant(W2))], [x], name="mlp")


def _expected(x: np.ndarray) -> np.ndarray:
    return np.maximum(x @ W1 + BIAS, 0) @ W2


def _x(batch: int) -> np.ndarray:
    return np.random.default_rng(batch).standard_normal((batch, 128)).astype(np.float32)


def _compile(model: Model, config: dict[str, object] | None = None) -> XlaCompiledModel:
    compiled = core().compile_model(model, "XLA", config or {})
    assert isinstance(compiled, XlaCompiledModel)
    return compiled


def test_the_weights_are_the_large_constants() -> None:
    found = weights_of(_mlp())
    assert [w.shape for w in found] == [W1.shape, W2.shape]
    assert all(w.nbytes >= WEIGHT_BYTES for w in found)


def test_a_static_model_takes_its_weights_as_arguments_not_as_program_constants() -> None:
    # native kernels off: the GEMM kernel would take both weights packed (tests/test_native_gemm.py)
    compiled = _compile(_mlp(), {"XLA_NATIVE_KERNELS": False})
    np.testing.assert_allclose(compiled(_x(4))[0], _expected(_x(4)), rtol=1e-5, atol=1e-4)
    executable = compiled.jax_executable()
    assert isinstance(executable, WithWeights)
    assert [tuple(w.shape) for w in executable.weights] == [W1.shape, W2.shape]
    np.testing.assert_allclose(np.asarray(executable(_x(4))[0]), _expected(_x(4)), rtol=1e-5, atol=1e-4)
    program = executable.as_text()
    assert not re.search(r"constant\(.*f32\[128,256\]|f32\[128,256\]\{1,0\} constant", program)
    assert "entry_computation_layout={(f32[4,128]{1,0}, f32[128,256]{1,0}, f32[256,64]{1,0})" in program


def test_executables_for_several_shapes_share_one_device_copy_of_the_weights() -> None:
    compiled = _compile(_mlp(batch=None))
    for batch in (1, 3, 1):
        np.testing.assert_allclose(compiled(_x(batch))[0], _expected(_x(batch)), rtol=1e-5, atol=1e-4)
    first, second = compiled.jax_executable([[1, 128]]), compiled.jax_executable([[3, 128]])
    assert all(a is b for a, b in zip(first.weights, second.weights))


def test_bf16_precision_computes_with_the_weights_in_bf16() -> None:
    compiled = _compile(_mlp(), {"INFERENCE_PRECISION_HINT": "bf16"})
    got = compiled(_x(4))[0]
    expected = _expected(_x(4))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=0, atol=0.02 * float(np.abs(expected).max()))
    assert not np.allclose(got, expected, rtol=1e-4, atol=1e-3)  # bf16's rounding shows


@pytest.mark.parametrize("batch", [4, None])
def test_an_exported_model_with_weights_imports_and_gives_the_same_results(batch: int | None) -> None:
    compiled = _compile(_mlp(batch))
    expected = compiled(_x(4))[0]
    imported = core().import_model(compiled.export_model(), "XLA")
    np.testing.assert_allclose(imported(_x(4))[0], expected, rtol=1e-6, atol=1e-6)


def test_a_model_compiled_per_input_value_takes_its_weights_as_arguments() -> None:
    x = opset.parameter([-1], np.float32, name="x")
    shape = opset.parameter([2], np.int64, name="shape")
    table = _RNG.standard_normal(32768).astype(np.float32)  # 128 KiB
    rows = opset.reshape(opset.constant(table), [-1, 128], special_zero=False)
    scaled = opset.multiply(opset.reshape(x, shape, special_zero=False), rows)
    compiled = _compile(Model([scaled], [x, shape], name="by_value"))
    assert compiled.by_value is not None
    data = np.arange(32768, dtype=np.float32)
    got = compiled([data, np.array([256, 128], np.int64)])[0]
    np.testing.assert_allclose(got, data.reshape(256, 128) * table.reshape(256, 128), rtol=1e-6)
