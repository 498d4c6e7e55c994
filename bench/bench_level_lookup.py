"""The XLA device with and without :class:`~hetero_sdk_jax.level_lookup.QuantizedLevelLookup` (element-wise
chains over 8-bit levels read from tables) on the statically quantized real models, beside ONNX Runtime,
compiled both ways in one process and timed interleaved on one CPU.

Usage::

    python bench/bench_level_lookup.py --models yolov8n --schemes qdq qoperator --runs 40 --cpu-time

The candidates run in rounds of rotating order (:func:`timing.measure`), once with "on" right after ONNX
Runtime and once with "off" there (that position alone measured about 4 % slower); each row gives both
passes' medians in milliseconds, their on/off and XLA/ORT ratios, and the largest difference of the
two XLA outputs (0: the tables hold the reference values of the chains they replace).
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

import numpy as np
from bench_onnx_models import reference_candidates
from bench_quantized import quantize
from hetero_sdk_jax.level_lookup import QuantizedLevelLookup
from real_models import BENCH_MODELS, fetch
from timing import measure, one_cpu_clock, pass_off, print_table

import hetero_sdk as hs


def _compiled(path: Any, on: bool) -> Any:
    """``path`` compiled for XLA, the lookup pass on or off (it is looked up when the passes run)."""
    with contextlib.nullcontext() if on else pass_off(QuantizedLevelLookup):
        return hs.Core().compile_model(hs.convert_model(path), "XLA")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["yolov8n"])
    parser.add_argument("--schemes", nargs="+", default=["qdq", "qoperator"])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--cpu-time", action="store_true", help="time by the process's CPU time")
    args = parser.parse_args()
    clock = one_cpu_clock(args.cpu_time)
    rows = []
    for key in args.models:
        model = BENCH_MODELS[key]
        for scheme in args.schemes:
            path = quantize(model, fetch(model), scheme)
            ort = reference_candidates(path, model.feeds, model.input_shapes, ("onnxruntime",))["onnxruntime"]
            requests = {name: _compiled(path, name == "on").create_infer_request() for name in ("off", "on")}
            outputs = {name: [np.asarray(v) for v in r.infer(model.feeds).values()] for name, r in requests.items()}
            error = max(float(np.abs(a - b).max()) for a, b in zip(outputs["on"], outputs["off"]))
            calls = {name: (lambda r=request, f=model.feeds: r.infer(f)) for name, request in requests.items()}
            for first in ("on", "off"):
                order = {"onnxruntime": ort, first: calls[first], **calls}
                times = measure(order, args.runs, 3, block=5, clock=clock)
                ms = {name: float(np.median(t)) * 1e3 for name, t in times.items()}
                rows.append({"model": f"{key} {scheme}", "after_ort": first, "ort": ms["onnxruntime"], "on": ms["on"],
                             "off": ms["off"], "ratio": ms["on"] / ms["off"], "on_ort": ms["on"] / ms["onnxruntime"],
                             "off_ort": ms["off"] / ms["onnxruntime"], "error": error})  # fmt: skip
    print(f"XLA, level lookup on or off, median ms ({'CPU' if args.cpu_time else 'wall'} time)")
    columns = [("model", "model"), ("after_ort", "after ORT"), ("ort", "ORT ms"), ("on", "on ms"), ("off", "off ms"),
               ("ratio", "on/off"), ("on_ort", "on/ORT"), ("off_ort", "off/ORT"), ("error", "max |diff|")]  # fmt: skip
    print_table(columns, rows)


if __name__ == "__main__":
    main()
