"""The XLA device with and without :class:`~hetero_sdk_jax.matmul_bias.MatMulBiasFusion` (a MatMul by a
constant and its per-column bias Add as one op, the bias added in the native GEMM kernel's epilogue), whole
models compiled both ways in one process, timed interleaved on one CPU.

Usage::

    python bench/bench_matmul_bias.py --models ppocr-rec crnn-lstm --runs 100 --cpu-time

Each row gives the medians in milliseconds, fused / unfused, how many ops the pass made, and the largest
difference of each way's outputs from ONNX Runtime's (one thread) on the same input.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np
from bench_onnx_models import model_at
from hetero_sdk_jax.matmul_bias import MATMUL_BIAS, MatMulBiasFusion
from hetero_sdk_jax.transformations import transform_model
from real_models import fetch, onnx_runtime_outputs
from timing import measure, print_table

import hetero_sdk as hs


def _compiled(path: Any, fused: bool) -> tuple[Any, int]:
    """``path`` compiled for XLA, the fusion pass on or off (it is looked up when the passes run), and the
    number of fused ops in the graph the XLA device's passes make."""
    apply = MatMulBiasFusion.apply
    if not fused:
        MatMulBiasFusion.apply = lambda self, model, node, users: False  # type: ignore[method-assign]
    try:
        compiled = hs.Core().compile_model(hs.convert_model(path), "XLA")
        transformed = hs.convert_model(path)
        transform_model(transformed)
    finally:
        MatMulBiasFusion.apply = apply  # type: ignore[method-assign]
    return compiled, sum(op.type_name == MATMUL_BIAS for op in transformed.get_ops())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["ppocr-rec", "crnn-lstm"])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--cpu-time", action="store_true", help="time by the process's CPU time")
    args = parser.parse_args()
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one CPU (before XLA sizes its thread pool)
    clock = time.process_time if args.cpu_time else time.perf_counter
    rows = []
    for key in args.models:
        model = model_at(key, True)
        path = fetch(model)
        reference = onnx_runtime_outputs(path, model.feeds)
        built = {name: _compiled(path, name == "fused") for name in ("unfused", "fused")}
        requests = {name: compiled.create_infer_request() for name, (compiled, _) in built.items()}
        errors = {}
        for name, request in requests.items():
            got = request.infer(model.feeds)
            errors[name] = max(float(np.abs(np.asarray(got[k]) - v).max()) for k, v in reference.items())
        calls = {name: (lambda r=request, f=model.feeds: r.infer(f)) for name, request in requests.items()}
        times = measure(calls, args.runs, 5, clock=clock)
        medians = {name: float(np.median(t)) * 1e3 for name, t in times.items()}
        shape = "x".join(str(d) for d in next(iter(model.feeds.values())).shape)
        error = f"{errors['unfused']:.2g} / {errors['fused']:.2g}"
        ratio = medians["fused"] / medians["unfused"]
        rows.append({"model": f"{key} {shape}", **medians, "ratio": ratio, "ops": built["fused"][1], "error": error})
    print(f"XLA, MatMul + bias fused or not, median ms ({'CPU' if args.cpu_time else 'wall'} time)")
    columns = [("model", "model"), ("unfused", "unfused ms"), ("fused", "fused ms"), ("ratio", "fused/unfused")]
    print_table([*columns, ("ops", "fused ops"), ("error", "max |diff| from ORT unfused / fused")], rows)


if __name__ == "__main__":
    main()
