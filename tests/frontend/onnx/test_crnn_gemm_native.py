"""ddddocr's CRNN on XLA with its classifier (a Gemm, 20x1024 by 1024x8210) in the native GEMM kernel gives ONNX
Runtime's outputs. The model is downloaded once with ``pip download``; offline this test skips."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from bench_modules import load_bench_module

import hetero_sdk as hs

pytest.importorskip("onnxruntime")
jax_native = pytest.importorskip("hetero_sdk_jax.native")

real_models = load_bench_module("real_models")
TARGET = "hetero_sdk_gemm_f32"


def test_crnn_matches_onnx_runtime_with_the_native_gemm() -> None:
    if not jax_native.available(TARGET):
        pytest.skip("the native GEMM kernel cannot be built here (no compiler or AVX-512F)")
    model = real_models.ISSUE_MODELS["crnn-lstm"]
    try:
        path = real_models.fetch(model)
    except real_models.FetchError as exc:
        pytest.skip(str(exc))
    converted = hs.convert_model(path, input=model.input_shapes)
    compiled: Any = hs.Core().compile_model(converted, "XLA", {"XLA_NATIVE_KERNELS": True})
    results = compiled(model.feeds)
    assert TARGET in compiled.jax_executable().as_text()
    for name, value in real_models.onnx_runtime_outputs(path, model.feeds).items():
        np.testing.assert_allclose(results[name], value, rtol=1e-4, atol=1e-5, err_msg=name)
