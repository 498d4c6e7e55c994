"""Real models that XLA's small graph passes outside the convolutions rewrite give ONNX Runtime's outputs:
PP-OCRv4 rec, its squeeze-and-excitation blocks averaging before their scale and shift (YOLOv8n's DFL head as
one ``XlaSoftmaxExpectation``: tests/frontend/onnx/test_yolo_native.py).
The models are downloaded once with ``pip download``; offline these tests skip."""

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


def test_ppocr_rec_with_its_squeeze_and_excitation_means_taken_first_matches_onnx_runtime() -> None:
    model, path = _fetch("ppocr-rec")
    compiled: Any = hs.Core().compile_model(hs.convert_model(path), "XLA")
    ops = compiled.get_runtime_model().get_ops()
    means = [n.input_value(0).node.type_name for n in ops if n.type_name == "ReduceMean"]
    assert means.count("XlaDepthwiseConvolution") == 2  # the SE blocks' averages read the depthwise results
    results = compiled(model.feeds)
    for name, value in real_models.onnx_runtime_outputs(path, model.feeds).items():
        np.testing.assert_allclose(results[name], value, rtol=1e-4, atol=1e-5, err_msg=name)
