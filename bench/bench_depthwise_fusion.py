"""The XLA device with and without :class:`~hetero_sdk_jax.depthwise_fusion.DepthwiseBiasActivationFusion`
(a depthwise convolution's bias and activation applied inside the native kernel), whole models compiled
both ways in one process, timed interleaved on one CPU.

Usage::

    python bench/bench_depthwise_fusion.py --models ppocr-rec ppocr-cls ppocr-det --runs 100 --cpu-time

Each row gives the medians in milliseconds, fused / unfused, and the largest difference of the two
outputs (f32 rounding: the bias and activation are the same operations in the same order).
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from bench_onnx_models import model_at
from hetero_sdk_jax.depthwise_fusion import DepthwiseBiasActivationFusion
from real_models import fetch
from timing import on_off_row, one_cpu_clock, pass_off, print_table

import hetero_sdk as hs


def _compiled(path: Any, fused: bool) -> Any:
    """``path`` compiled for XLA, the fusion pass on or off (it is looked up when the passes run)."""
    with contextlib.nullcontext() if fused else pass_off(DepthwiseBiasActivationFusion):
        return hs.Core().compile_model(hs.convert_model(path), "XLA")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["ppocr-rec", "ppocr-cls", "ppocr-det"])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--cpu-time", action="store_true", help="time by the process's CPU time")
    args = parser.parse_args()
    clock = one_cpu_clock(args.cpu_time)
    rows = []
    for key in args.models:
        model = model_at(key, True)
        path = fetch(model)
        requests = {name: _compiled(path, name == "fused").create_infer_request() for name in ("unfused", "fused")}
        rows.append(on_off_row(key, model.feeds, requests, args.runs, clock))
    print(f"XLA, depthwise bias + activation fused or not, median ms ({'CPU' if args.cpu_time else 'wall'} time)")
    columns = [("model", "model"), ("unfused", "unfused ms"), ("fused", "fused ms"), ("ratio", "fused/unfused")]
    print_table([*columns, ("error", "max |diff|")], rows)


if __name__ == "__main__":
    main()
