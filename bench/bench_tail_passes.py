"""The XLA device with and without one of the small per-model graph passes outside the convolutions
(:data:`PASSES`), whole models compiled both ways in one process, timed interleaved on one CPU, beside
ONNX Runtime.

Usage::

    python bench/bench_tail_passes.py --passes softmax-expectation --models yolov8n --runs 60 --cpu-time
    python bench/bench_tail_passes.py --passes mean-of-affine --models ppocr-rec --runs 100 --cpu-time
    python bench/bench_tail_passes.py --passes max-pool-cascade --models yolox --runs 40 --cpu-time

Each row gives the medians in milliseconds, on / off (of the medians, and of the 20th percentiles, which hold
better on a loaded machine), on / ONNX Runtime, the median over ``--pairs`` back-to-back pairs (on then off, off
then on, alternately) of on's time minus off's, and the largest difference of the two XLA outputs (f32
rounding: the passes re-associate sums). A pass that saves 1 % moves the medians of separate rounds less than
this 2-core machine's load does; the pairs' differences show it.
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

import numpy as np
from bench_onnx_models import model_at, reference_candidates
from hetero_sdk_jax.max_pool_cascade import MaxPoolCascade
from hetero_sdk_jax.mean_of_affine import MeanOfAffineFolding
from hetero_sdk_jax.softmax_expectation import SoftmaxExpectationFusion
from real_models import fetch
from timing import measure, one_cpu_clock, pass_off, print_table

import hetero_sdk as hs

PASSES: dict[str, type] = {
    "softmax-expectation": SoftmaxExpectationFusion,
    "mean-of-affine": MeanOfAffineFolding,
    "max-pool-cascade": MaxPoolCascade,
}
"""The passes by command-line name."""


def _compiled(path: Any, pass_class: type, on: bool) -> Any:
    """``path`` compiled for XLA, ``pass_class`` on or off (it is looked up when the passes run)."""
    with contextlib.nullcontext() if on else pass_off(pass_class):
        return hs.Core().compile_model(hs.convert_model(path), "XLA")


def paired_difference(calls: dict[str, Any], pairs: int, clock: Any) -> float:
    """The median over ``pairs`` back-to-back calls of ``calls["on"]`` and ``calls["off"]`` (in alternating order)
    of on's time minus off's, in seconds."""
    differences = []
    for index in range(pairs):
        spent = {}
        for state in ("on", "off") if index % 2 else ("off", "on"):
            start = clock()
            calls[state]()
            spent[state] = clock() - start
        differences.append(spent["on"] - spent["off"])
    return float(np.median(differences))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", nargs="+", default=list(PASSES), choices=list(PASSES))
    parser.add_argument("--models", nargs="+", default=["yolov8n"])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--pairs", type=int, default=400, help="back-to-back on/off pairs for the paired difference")
    parser.add_argument("--cpu-time", action="store_true", help="time by the process's CPU time")
    args = parser.parse_args()
    clock = one_cpu_clock(args.cpu_time)
    rows = []
    for key in args.models:
        model = model_at(key, True)
        path = fetch(model)
        ort = reference_candidates(path, model.feeds, model.input_shapes, ("onnxruntime",))["onnxruntime"]
        for name in args.passes:
            pass_class = PASSES[name]
            requests = {
                state: _compiled(path, pass_class, state == "on").create_infer_request() for state in ("off", "on")
            }
            outputs = {state: [np.asarray(v) for v in r.infer(model.feeds).values()] for state, r in requests.items()}
            error = max(float(np.abs(a - b).max()) for a, b in zip(outputs["on"], outputs["off"]))
            calls = {state: (lambda r=request, f=model.feeds: r.infer(f)) for state, request in requests.items()}
            times = measure({"onnxruntime": ort, **calls}, args.runs, 5, clock=clock)
            ms = {state: float(np.median(t)) * 1e3 for state, t in times.items()}
            low = {state: float(np.percentile(t, 20)) for state, t in times.items()}
            ratios = {"ratio": ms["on"] / ms["off"], "low": low["on"] / low["off"]}
            ratios["on_ort"] = ms["on"] / ms["onnxruntime"]
            ratios["paired"] = paired_difference(calls, args.pairs, clock) * 1e3
            rows.append({"model": key, "pass": name, "ort": ms["onnxruntime"], "off": ms["off"], "on": ms["on"],
                         **ratios, "error": error})  # fmt: skip
    print(f"XLA, a graph pass on or off, median ms ({'CPU' if args.cpu_time else 'wall'} time)")
    columns = [("model", "model"), ("pass", "pass"), ("ort", "ORT ms"), ("off", "off ms"), ("on", "on ms"),
               ("ratio", "on/off"), ("low", "p20 on/off"), ("on_ort", "on/ORT"),
               ("paired", "paired on-off ms"), ("error", "max |diff|")]  # fmt: skip
    print_table(columns, rows)


if __name__ == "__main__":
    main()
