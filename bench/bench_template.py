"""TEMPLATE's latency on an MLP, a small CNN and a transformer block against numpy and ONNX Runtime.

Usage::

    python bench/bench_template.py                                   # all three models
    python bench/bench_template.py --models mlp --runs 1000 --json bench/results/template.json

The same model (same weights, see ``bench/models.py``) runs on TEMPLATE through an infer request, as
a plain numpy function, and, when ``onnxruntime`` is installed, on ONNX Runtime's CPU provider from
the ONNX export; every output is checked against numpy before timing. Everything runs on one thread
(BLAS variables, ORT's intra- and inter-op pools, TEMPLATE's ``INFERENCE_NUM_THREADS``): shared 2-core
machines make two-thread figures meaningless. Candidates are interleaved round by round; the table
gives medians and p90s in microseconds and the ratios TEMPLATE/numpy and TEMPLATE/ORT of the medians.
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS

from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from models import MODELS, BenchModel  # noqa: E402
from timing import (  # noqa: E402
    bench_arguments,
    device_peak_bytes,
    environment,
    measure,
    print_table,
    summary,
    write_report,
)

import hetero_sdk as hs  # noqa: E402
from hetero_sdk.frontend.onnx_export import export_model  # noqa: E402
from template_plugin import TemplatePlugin  # noqa: E402

ONE_THREAD = {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY"}
"""TEMPLATE's configuration for latency on one thread."""


def ort_session(bench_model: BenchModel) -> Any | None:
    """An ONNX Runtime CPU session of the model on one thread, or None when onnxruntime is missing."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    proto = export_model(bench_model.build())
    return ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])


def candidates(bench_model: BenchModel, core: hs.Core, use_ort: bool) -> tuple[dict[str, Callable[[], Any]], Any]:
    """The calls to time, each checked against the numpy forward pass first, and TEMPLATE's compiled model.

    :raises AssertionError: when a runtime's output differs from numpy's.
    """
    x = bench_model.sample_input()
    expected = bench_model.numpy(x)
    compiled = core.compile_model(bench_model.build(), "TEMPLATE", ONE_THREAD)
    request = compiled.create_infer_request()
    feed = {bench_model.input_name: x}
    calls: dict[str, Callable[[], Any]] = {
        "TEMPLATE": lambda: request.infer(feed),
        "numpy": lambda: bench_model.numpy(x),
    }
    session = ort_session(bench_model) if use_ort else None
    if session is not None:
        calls["ORT"] = lambda: session.run(None, feed)
    outputs = {"TEMPLATE": request.infer(feed)[0], "numpy": expected}
    if session is not None:
        outputs["ORT"] = session.run(None, feed)[0]
    for name, value in outputs.items():
        np.testing.assert_allclose(value, expected, rtol=1e-4, atol=1e-4, err_msg=f"{bench_model.name} on {name}")
    return calls, compiled


def bench(models: list[str], runs: int, warmup: int, use_ort: bool) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Times every model; returns one row per (model, runtime) and the ratios per model."""
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False)
    rows: list[dict[str, Any]] = []
    ratios: dict[str, Any] = {}
    for name in models:
        bench_model = MODELS[name]()
        calls, compiled = candidates(bench_model, core, use_ort)
        times = measure(calls, runs, warmup)
        stats = {runtime: summary(values) for runtime, values in times.items()}
        template = stats["TEMPLATE"]["median_us"]
        ratios[name] = {f"TEMPLATE/{r}": template / s["median_us"] for r, s in stats.items() if r != "TEMPLATE"}
        for runtime, s in stats.items():
            row = {"model": name, "runtime": runtime, **s, "template_over": template / s["median_us"]}
            row["peak_bytes"] = device_peak_bytes(compiled) if runtime == "TEMPLATE" else None
            rows.append(row)
    return rows, ratios


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = bench_arguments(__doc__.splitlines()[0], MODELS, runs=1000)
    parser.add_argument("--no-ort", action="store_true", help="leave ONNX Runtime out even when installed")
    args = parser.parse_args(argv)
    rows, ratios = bench(args.models, args.runs, args.warmup, not args.no_ort)
    columns = [
        ("model", "model"),
        ("runtime", "runtime"),
        ("median_us", "median us"),
        ("p90_us", "p90 us"),
        ("template_over", "TEMPLATE/x"),
        ("peak_bytes", "peak MiB"),
    ]
    print_table(columns, rows)
    for model, by_runtime in ratios.items():
        print(f"{model}: " + ", ".join(f"{key} = {value:.2f}" for key, value in by_runtime.items()))
    write_report(args.json, args, environment(), rows=rows, ratios=ratios)


if __name__ == "__main__":
    main()
