"""Real models whose heads XLA rewrites with its small graph passes outside the convolutions give ONNX Runtime's
outputs with and without the native kernels: YOLOv8n (nudenet's ``320n.onnx``), its DFL head one
``XlaSoftmaxExpectation``. The models are downloaded once with ``pip download``; offline these tests skip."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from bench_modules import load_bench_module

import hetero_sdk as hs

pytest.importorskip("onnxruntime")
pytest.importorskip("hetero_sdk_jax")

real_models = load_bench_module("real_models")


def _fetch(key: str) -> tuple[Any, Any]:
    model = real_models.BENCH_MODELS[key]
    try:
        return model, real_models.fetch(model)
    except real_models.FetchError as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("native_kernels", [True, False])
def test_yolov8n_with_its_dfl_head_as_one_op_matches_onnx_runtime(native_kernels: bool) -> None:
    model, path = _fetch("yolov8n")
    converted = hs.convert_model(path, input=model.input_shapes)
    compiled: Any = hs.Core().compile_model(converted, "XLA", {"XLA_NATIVE_KERNELS": native_kernels})
    types = [n.type_name for n in compiled.get_runtime_model().get_ops()]
    assert types.count("XlaSoftmaxExpectation") == 1 and "Softmax" not in types
    results = compiled(model.feeds)
    for name, value in real_models.onnx_runtime_outputs(path, model.feeds).items():
        np.testing.assert_allclose(results[name], value, rtol=1e-4, atol=1e-4, err_msg=name)
