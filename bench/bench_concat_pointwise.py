"""The XLA device with channel concatenates read in place by the 1x1 convolutions they feed
(:mod:`hetero_sdk_jax.lowering.kernels.concat_pointwise`) or written out first, whole models compiled both ways
in one process, timed interleaved on one CPU.

Usage::

    python bench/bench_concat_pointwise.py --models yolov8n yolox --runs 100 --cpu-time

Each row gives the medians in milliseconds, in place / written out, and the largest difference of the two
outputs (f32 rounding: the same products summed in another order).
"""

from __future__ import annotations

import argparse
from typing import Any

from bench_onnx_models import model_at
from hetero_sdk_jax.lowering.kernels import concat_pointwise
from real_models import fetch
from timing import on_off_row, one_cpu_clock, print_table

import hetero_sdk as hs


def _request(model: Any, in_place: bool) -> Any:
    """An infer request of ``model`` (a bench model) compiled for XLA with the rule on or off, lowered (a model
    with dynamic inputs lowers at its first inference) before the rule is put back on."""
    path = fetch(model)
    concat_pointwise.set_enabled(in_place)
    try:
        converted = hs.convert_model(path, input=model.input_shapes) if model.input_shapes else hs.convert_model(path)
        request = hs.Core().compile_model(converted, "XLA").create_infer_request()
        request.infer(model.feeds)
        return request
    finally:
        concat_pointwise.set_enabled(True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["yolov8n", "yolox"])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--cpu-time", action="store_true", help="time by the process's CPU time")
    args = parser.parse_args()
    clock = one_cpu_clock(args.cpu_time)
    rows = []
    for key in args.models:
        model = model_at(key, True)
        requests = {name: _request(model, name == "in_place") for name in ("written", "in_place")}
        rows.append(on_off_row(key, model.feeds, requests, args.runs, clock))
    clock_name = "CPU" if args.cpu_time else "wall"
    print(f"XLA, channel Concats before 1x1 convolutions read in place or written out, median ms ({clock_name} time)")
    columns = [("model", "model"), ("written", "written ms"), ("in_place", "in place ms"), ("ratio", "in place/out")]
    print_table([*columns, ("error", "max |diff|")], rows)


if __name__ == "__main__":
    main()
