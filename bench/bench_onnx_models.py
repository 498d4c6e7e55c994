"""Real ONNX models on hetero-sdk's devices against ONNX Runtime and OpenVINO, one thread each.

Usage::

    python bench/bench_onnx_models.py                         # every model of bench/real_models.py
    python bench/bench_onnx_models.py --models ppocr-det --runs 100 --json bench/results/onnx.json

Each model is read by hetero-sdk's ONNX frontend and compiled on TEMPLATE, XLA and
``HETERO:XLA,TEMPLATE``; the same file runs on ONNX Runtime (CPU provider) and, when installed,
OpenVINO's CPU device (f32). Every candidate's outputs are compared with ONNX Runtime's first (max
absolute error); the candidates are then timed in interleaved rounds. The table gives medians and p90s
in microseconds and each median's ratio to ONNX Runtime's and OpenVINO's.
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS

from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from real_models import MODELS, RealModel, fetch, onnx_runtime_outputs  # noqa: E402
from timing import bench_arguments, environment, measure, print_table, summary, write_report  # noqa: E402

import hetero_sdk as hs  # noqa: E402

DEVICES = ("TEMPLATE", "XLA", "HETERO:XLA,TEMPLATE")
ONE_THREAD = {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY"}


def sdk_candidates(model: RealModel, path: Path) -> dict[str, Callable[[], Any]]:
    """One inference per device: name -> a call returning outputs by name."""
    converted = hs.convert_model(path, input=model.input_shapes) if model.input_shapes else hs.convert_model(path)
    core = hs.Core()
    calls = {}
    for device in DEVICES:
        config = ONE_THREAD if device == "TEMPLATE" else {}
        request = core.compile_model(converted, device, config).create_infer_request()
        names = [o.any_name for o in converted.outputs]

        def call(request: Any = request, names: list[str] = names) -> dict[str, np.ndarray]:
            results = request.infer(model.feeds)
            return {name: np.asarray(results[name]) for name in names}

        calls[device] = call
    return calls


def reference_candidates(
    path: Path, feeds: dict[str, np.ndarray], input_shapes: dict[str, list[int]] | None = None
) -> dict[str, Callable[[], Any]]:
    """ONNX Runtime and (when installed) OpenVINO on the same file, one thread each; OpenVINO converts
    with the same input shapes hetero-sdk is given (``ov.convert_model(path, input=...)``)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    calls: dict[str, Callable[[], Any]] = {"onnxruntime": lambda: dict(zip(names, session.run(names, feeds)))}
    try:
        import openvino as ov
    except ImportError:
        return calls
    core = ov.Core()
    try:
        if input_shapes:
            ov_model = ov.convert_model(str(path), input=list(input_shapes.items()))
        else:
            ov_model = core.read_model(str(path))
        compiled = core.compile_model(
            ov_model, "CPU", {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "INFERENCE_PRECISION_HINT": "f32"}
        )
    except Exception as exc:  # OpenVINO fails on some real models: shown, not fatal
        print(f"  OpenVINO cannot run {path.name}: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
        return calls
    request = compiled.create_infer_request()
    ov_names = [o.get_any_name() for o in compiled.outputs]

    def ov_call() -> dict[str, np.ndarray]:
        request.infer(feeds)
        return {name: request.get_tensor(name).data.copy() for name in ov_names}

    calls["openvino"] = ov_call
    return calls


def main() -> None:
    parser = bench_arguments(__doc__.splitlines()[0], list(MODELS), runs=50)
    parser.set_defaults(warmup=5)
    args = parser.parse_args()
    rows = []
    for key in args.models:
        model = MODELS[key]
        path = fetch(model)
        expected = onnx_runtime_outputs(path, model.feeds)
        candidates = {**sdk_candidates(model, path), **reference_candidates(path, model.feeds, model.input_shapes)}
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
