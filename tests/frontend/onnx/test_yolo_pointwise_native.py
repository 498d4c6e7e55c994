"""YOLOv8n (nudenet's ``320n.onnx``) and a YOLOX-style detector (ddddocr's ``common_det.onnx``), whose 1x1
convolutions with their bias and SiLU run on the native GEMM kernel's in-place path, on XLA with native kernels
and without them give ONNX Runtime's outputs. The models are downloaded once with ``pip download``; offline these
tests skip."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from bench_modules import load_bench_module

import hetero_sdk as hs

pytest.importorskip("onnxruntime")
jax_native = pytest.importorskip("hetero_sdk_jax.native")

real_models = load_bench_module("real_models")
TARGET = "hetero_sdk_gemm_f32_fused"


@pytest.mark.parametrize("native_kernels", [True, False])
@pytest.mark.parametrize("key", ["yolov8n", "yolox"])
def test_detector_matches_onnx_runtime_with_and_without_the_native_kernels(key: str, native_kernels: bool) -> None:
    if native_kernels and not jax_native.available(TARGET):
        pytest.skip("the native GEMM kernel cannot be built here (no compiler or AVX-512F)")
    model = real_models.ISSUE_MODELS[key]
    try:
        path = real_models.fetch(model)
    except real_models.FetchError as exc:
        pytest.skip(str(exc))
    converted = hs.convert_model(path, input=model.input_shapes) if model.input_shapes else hs.convert_model(path)
    compiled: Any = hs.Core().compile_model(converted, "XLA", {"XLA_NATIVE_KERNELS": native_kernels})
    results = compiled(model.feeds)
    assert (TARGET in compiled.jax_executable().as_text()) is native_kernels
    for name, value in real_models.onnx_runtime_outputs(path, model.feeds).items():
        scale = float(np.max(np.abs(value)))  # box coordinates reach a few hundred pixels
        np.testing.assert_allclose(results[name], value, rtol=1e-4, atol=1e-5 * max(scale, 1.0), err_msg=name)
