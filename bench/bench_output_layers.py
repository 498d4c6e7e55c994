"""The XLA device with and without one change to output layers, whole models compiled both ways in one
process, timed interleaved on one CPU.

Usage::

    python bench/bench_output_layers.py --change matmul-bias --models ppocr-rec crnn-lstm --runs 100 --cpu-time
    python bench/bench_output_layers.py --change softmax --models ppocr-rec --runs 100 --cpu-time

Changes: ``matmul-bias`` is :class:`~hetero_sdk_jax.matmul_bias.MatMulBiasFusion` (a MatMul by a constant and
its per-column bias Add as one op, the bias added in the native GEMM kernel's epilogue); ``softmax`` is the
native Softmax kernel (:mod:`hetero_sdk_jax.lowering.kernels.softmax`). Each row gives the medians in
milliseconds, on / off, how many ops the change touches, and the largest difference of each way's outputs
from ONNX Runtime's (one thread) on the same input.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
from bench_onnx_models import model_at
from hetero_sdk_jax.lowering.kernels import softmax as softmax_kernel
from hetero_sdk_jax.matmul_bias import MATMUL_BIAS, MatMulBiasFusion
from hetero_sdk_jax.transformations import transform_model
from real_models import fetch, onnx_runtime_outputs
from timing import measure, one_cpu_clock, pass_off, print_table

import hetero_sdk as hs


@contextlib.contextmanager
def _softmax_kernel_off() -> Iterator[None]:
    """The native Softmax kernel refused inside (its rule is looked up when a model is lowered)."""
    saved = softmax_kernel.runs_natively
    softmax_kernel.runs_natively = lambda x, axis: False
    try:
        yield
    finally:
        softmax_kernel.runs_natively = saved


def _off(change: str) -> contextlib.AbstractContextManager[None]:
    """``change`` turned off inside."""
    return pass_off(MatMulBiasFusion) if change == "matmul-bias" else _softmax_kernel_off()


def _touched(path: Any, change: str) -> int:
    """How many ops of the model the change applies to (fused ops, or Softmax nodes)."""
    model = hs.convert_model(path)
    transform_model(model)
    kind = MATMUL_BIAS if change == "matmul-bias" else "Softmax"
    return sum(op.type_name == kind for op in model.get_ops())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--change", choices=["matmul-bias", "softmax"], default="matmul-bias")
    parser.add_argument("--models", nargs="+", default=["ppocr-rec", "crnn-lstm"])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--cpu-time", action="store_true", help="time by the process's CPU time")
    args = parser.parse_args()
    clock = one_cpu_clock(args.cpu_time)
    rows = []
    for key in args.models:
        model = model_at(key, True)
        path = fetch(model)
        reference = onnx_runtime_outputs(path, model.feeds)
        requests, errors = {}, {}
        for name in ("off", "on"):
            with _off(args.change) if name == "off" else contextlib.nullcontext():
                request = hs.Core().compile_model(hs.convert_model(path), "XLA").create_infer_request()
                got = request.infer(model.feeds)  # a dynamic model compiles for these shapes here
            requests[name] = request
            errors[name] = max(float(np.abs(np.asarray(got[k]) - v).max()) for k, v in reference.items())
        calls = {name: (lambda r=request, f=model.feeds: r.infer(f)) for name, request in requests.items()}
        times = measure(calls, args.runs, 5, clock=clock)
        medians = {name: float(np.median(t)) * 1e3 for name, t in times.items()}
        shape = "x".join(str(d) for d in next(iter(model.feeds.values())).shape)
        error = f"{errors['off']:.2g} / {errors['on']:.2g}"
        ratio = medians["on"] / medians["off"]
        rows.append({"model": f"{key} {shape}", **medians, "ratio": ratio, "ops": _touched(path, args.change),
                     "error": error})  # fmt: skip
    print(f"XLA, {args.change} on or off, median ms ({'CPU' if args.cpu_time else 'wall'} time)")
    columns = [("model", "model"), ("off", "off ms"), ("on", "on ms"), ("ratio", "on/off")]
    print_table([*columns, ("ops", "ops"), ("error", "max |diff| from ORT off / on")], rows)


if __name__ == "__main__":
    main()
