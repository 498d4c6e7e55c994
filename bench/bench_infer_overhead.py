"""What an XLA inference costs outside its executable, on issue 31's models (one thread, CPU time).

Per model, the paired median (``timing.paired_overhead``: the host's drift cancels in each pair) of
what each way of running the model takes over its XLA executable called on device-resident inputs:
``exec np in`` (the same executable on the numpy input: XLA's copy of it to the device),
``exec+asarray`` (that, outputs read as numpy arrays), ``infer()`` (an infer request, the path
``bench_onnx_models.py`` times) and ``bench call`` (``infer()`` and the results dict it builds). Then
what the parts cost alone, in microseconds (medians of back-to-back calls): a trivial executable
(JAX's dispatch floor), the model's input handed over 64-byte aligned (XLA:CPU then reads it in place)
and as numpy allocates it (16-byte aligned: XLA copies it first).
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS

import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402
from bench_onnx_models import model_at, pin_to_one_cpu, sdk_candidates  # noqa: E402
from real_models import fetch  # noqa: E402
from timing import bench_arguments, paired_overhead  # noqa: E402

import hetero_sdk as hs  # noqa: E402
from hetero_sdk import Model, Type, opset  # noqa: E402

MODELS = ("ppocr-cls", "ppocr-rec", "yolov8n")


def back_to_back_us(call: Callable[[], Any], runs: int = 1000) -> float:
    """Median CPU microseconds of ``call`` over ``runs`` calls in a row."""
    for _ in range(20):
        call()
    took = []
    for _ in range(runs):
        start = time.process_time()
        call()
        took.append(time.process_time() - start)
    return statistics.median(took) * 1e6


def aligned_copy(array: np.ndarray, alignment: int = 64) -> np.ndarray:
    """``array`` copied into memory that starts on an ``alignment``-byte boundary."""
    raw = np.empty(array.nbytes + alignment, np.uint8)
    start = -raw.ctypes.data % alignment
    out = raw[start : start + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    return out


def python_path_us(batch: int, runs: int) -> float:
    """Paired median microseconds ``infer()`` takes over the executable it runs, both on the same numpy
    array, for a one-Add model at cls's input size whose batch is ``batch`` (-1: dynamic)."""
    x = opset.parameter([batch, 3, 48, 192], Type.f32, name="x")
    model = Model([opset.add(x, np.ones((3, 48, 192), np.float32), name="y")], [x], name="one_add")
    compiled: Any = hs.Core().compile_model(model, "XLA")  # (an XlaCompiledModel: jax_executable)
    request, array = compiled.create_infer_request(), np.ones((1, 3, 48, 192), np.float32)
    executable = compiled.jax_executable([array.shape])
    candidates = {
        "executable": lambda: [np.asarray(o) for o in executable(array)],
        "infer()": lambda: request.infer({"x": array}),
    }
    for _ in range(200):
        for call in candidates.values():
            call()
    return paired_overhead(candidates, "executable", runs, clock=time.perf_counter)["infer()"]


def report(key: str, runs: int) -> None:
    """Prints model ``key``'s paired overheads and the cost of handing its input over."""
    model = model_at(key, issue_sizes=True)
    calls, compiled = sdk_candidates(model, fetch(model), ("XLA",))
    xla, feeds = compiled["XLA"], model.feeds
    request = xla.create_infer_request()
    host = [feeds[port.any_name] for port in xla.inputs]
    executable = xla.jax_executable([a.shape for a in host])
    on_device = [jax.device_put(a) for a in host]
    in_place = [aligned_copy(a) for a in host]
    candidates = {
        "exec dev in": lambda: jax.block_until_ready(executable(*on_device)),
        "exec np in": lambda: jax.block_until_ready(executable(*host)),
        "exec+asarray": lambda: [np.asarray(o) for o in executable(*host)],
        "infer()": lambda: request.infer(feeds),
        "bench call": calls["XLA"],
    }
    for call in candidates.values():
        call()
    over = paired_overhead(candidates, "exec dev in", runs, clock=time.process_time)
    whole = back_to_back_us(candidates["bench call"], 100)
    weights = len(getattr(executable, "weights", ()))
    print(f"{key}: inputs {[a.shape for a in host]}, {weights} weights, bench call {whole:.0f} us")
    print("  paired over 'exec dev in' (us): " + ", ".join(f"{name} {us:+.1f}" for name, us in over.items()))
    part = jax.jit(lambda *xs: [x.ravel()[:4] for x in xs]).lower(*host).compile()
    aligned = back_to_back_us(lambda: jax.block_until_ready(part(*in_place)))
    given = back_to_back_us(lambda: jax.block_until_ready(part(*host)))
    offsets = [a.ctypes.data % 64 for a in host]
    print(f"  input hand-over (us): 64-byte aligned {aligned:.1f}, as given (address % 64 = {offsets}) {given:.1f}")


def main() -> None:
    parser = bench_arguments(__doc__.splitlines()[0], list(MODELS), runs=300)
    args = parser.parse_args()
    pin_to_one_cpu()
    one = np.zeros((1,), np.float32)
    floor = jax.jit(lambda x: x + 1).lower(one).compile()
    floor_us = back_to_back_us(lambda: np.asarray(floor(one)))
    print(f"JAX dispatch floor (a trivial executable, numpy in and out): {floor_us:.1f} us")
    static, dynamic = python_path_us(1, 20 * args.runs), python_path_us(-1, 20 * args.runs)
    print(f"request + plugin Python path (a one-Add model): static {static:.1f} us, dynamic {dynamic:.1f} us")
    for key in args.models:
        report(key, args.runs)


if __name__ == "__main__":
    main()
