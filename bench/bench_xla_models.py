"""XLA against ONNX Runtime (and OpenVINO, when installed) on the model classes issue 31 names, one run.

Usage::

    python bench/bench_xla_models.py                            # magika, yolov8n, ppocr-rec (48x320)
    python bench/bench_xla_models.py --models magika --runs 100 --json bench/results/xla_models.json

The models are ``bench/real_models.py``'s (``ISSUE_MODELS``, ``MODELS``), public ones of the issue's
classes: the byte-content classifier is Google's ``magika`` (a one-hot of int32 bytes, then dense
layers and a 1-D convolution), the YOLO detector ``nudenet``'s ``320n.onnx`` (YOLOv8n at 320x320, its
input left dynamic as in the file), and the PP-OCRv4 recogniser at 48x320. The process runs pinned to
one CPU (XLA:CPU sizes its thread pool by the CPUs it may use); ONNX Runtime and OpenVINO are told to
use one thread. Every candidate's outputs are compared with ONNX Runtime's, then timed in interleaved
rounds (medians, ratios to ONNX Runtime's).
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS

import dataclasses  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from bench_onnx_models import ISSUE_SIZES, at_issue_size, pin_to_one_cpu, reference_candidates  # noqa: E402
from real_models import ISSUE_MODELS, MODELS, RealModel, fetch, onnx_runtime_outputs, read  # noqa: E402
from timing import bench_arguments, environment, measure, print_table, summary, write_report  # noqa: E402

import hetero_sdk as hs  # noqa: E402

XLA_MODELS = {
    "magika": ISSUE_MODELS["byte-classifier"],
    # converted with its dynamic batch and image size as the file has them (the suite fixes 1x3x320x320)
    "yolov8n": dataclasses.replace(ISSUE_MODELS["yolov8n"], input_shapes=None),
    "ppocr-rec": dataclasses.replace(
        at_issue_size("ppocr-rec", MODELS["ppocr-rec"]), input_shapes={"x": list(ISSUE_SIZES["ppocr-rec"])}
    ),
}
"""The models by short name."""


def xla_call(model: RealModel) -> Any:
    """One inference on XLA (a call returning outputs by name)."""
    path = fetch(model)
    converted = read(model, path)
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
