"""The XLA device with merged sibling 1x1 convolutions carrying their branches' bias and activation
(:mod:`hetero_sdk_jax.sibling_convolutions`) or leaving them after the split, whole models compiled both
ways in one process, timed interleaved on one CPU.

Usage::

    python bench/bench_sibling_convolutions.py --models yolox yolov8n --runs 100 --cpu-time

Each row gives the medians in milliseconds, carried / after the split, and the largest difference of the
two outputs (f32 rounding: the same operations, the bias added to the finished sum either way).
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import Any

import hetero_sdk_jax.sibling_convolutions as siblings
from bench_onnx_models import model_at
from real_models import fetch
from timing import on_off_row, one_cpu_clock, print_table

import hetero_sdk as hs


@contextlib.contextmanager
def _biases_after_the_split() -> Iterator[None]:
    """The merge finds no sibling's bias (it is looked up when the pass runs): main's graph before the change."""
    saved = siblings.bias_and_activation
    siblings.bias_and_activation = lambda node, users: None  # type: ignore[assignment]
    try:
        yield
    finally:
        siblings.bias_and_activation = saved  # type: ignore[assignment]


def _compiled(model: Any, carried: bool) -> Any:
    """``model`` (a bench model) compiled for XLA, the biases carried into the merged convolution or not."""
    path = fetch(model)
    with contextlib.nullcontext() if carried else _biases_after_the_split():
        converted = hs.convert_model(path, input=model.input_shapes) if model.input_shapes else hs.convert_model(path)
        return hs.Core().compile_model(converted, "XLA")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["yolox", "yolov8n"])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--cpu-time", action="store_true", help="time by the process's CPU time")
    args = parser.parse_args()
    clock = one_cpu_clock(args.cpu_time)
    rows = []
    for key in args.models:
        model = model_at(key, True)
        requests = {name: _compiled(model, name == "carried").create_infer_request() for name in ("after", "carried")}
        rows.append(on_off_row(key, model.feeds, requests, args.runs, clock))
    clock_name = "CPU" if args.cpu_time else "wall"
    print(f"XLA, siblings' bias + activation carried into the merge or not, median ms ({clock_name} time)")
    columns = [("model", "model"), ("after", "after split ms"), ("carried", "carried ms"), ("ratio", "carried/after")]
    print_table([*columns, ("error", "max |diff|")], rows)


if __name__ == "__main__":
    main()
