"""ddddocr's CRNN (a bidirectional LSTM, H = 512, then a Gemm classifier, 20x1024 by 1024x8210) on XLA with the
native LSTM and GEMM kernels and without them gives ONNX Runtime's outputs. The model is downloaded once with
``pip download``; offline these tests skip."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from bench_modules import load_bench_module

import hetero_sdk as hs

pytest.importorskip("onnxruntime")
jax_native = pytest.importorskip("hetero_sdk_jax.native")

real_models = load_bench_module("real_models")
TARGETS = ("hetero_sdk_lstm_sequence", "hetero_sdk_gemm_f32")


@pytest.mark.parametrize("native_kernels", [True, False])
def test_crnn_matches_onnx_runtime_with_and_without_the_native_kernels(native_kernels: bool) -> None:
    if native_kernels and not all(jax_native.available(target) for target in TARGETS):
        pytest.skip("the native LSTM or GEMM kernel cannot be built here (no compiler or AVX-512F)")
    model = real_models.ISSUE_MODELS["crnn-lstm"]
    try:
        path = real_models.fetch(model)
    except real_models.FetchError as exc:
        pytest.skip(str(exc))
    converted = hs.convert_model(path, input=model.input_shapes)
    compiled: Any = hs.Core().compile_model(converted, "XLA", {"XLA_NATIVE_KERNELS": native_kernels})
    results = compiled(model.feeds)
    program = compiled.jax_executable().as_text()
    for target in TARGETS:
        assert (target in program) is native_kernels, target
    for name, value in real_models.onnx_runtime_outputs(path, model.feeds).items():
        np.testing.assert_allclose(results[name], value, rtol=1e-4, atol=1e-5, err_msg=name)
