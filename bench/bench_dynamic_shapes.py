"""Dynamic input shapes on XLA: executables compiled and time to serve a stream of input sizes, per
``XLA_SHAPE_BUCKETS`` policy, on the real PP-OCR models (dynamic batch, height and width).

Usage::

    python bench/bench_dynamic_shapes.py                          # ppocr-rec, ppocr-cls, ppocr-det
    python bench/bench_dynamic_shapes.py --models ppocr-rec --json bench/results/dynamic_shapes.json

Each model serves, in one fresh compiled model per policy, a stream of inputs: batches 1 to 8 at one
size, then three other widths (the recogniser's text-line widths 320, 256, 192 and 288 at height 48;
the classifier's 192, 160, 128, 224 at 48; the detector's 320x320, then 256, 192, 288 wide). ``POW2``
pads a dimension the graph proves independent to the next power of two (here the batch: the width is
mixed by convolutions) and compiles one executable per bucket; ``EXACT`` compiles one per shape. The
table gives the executables compiled (``compile_count``), the stream's wall and CPU seconds (compiles
included), and the median steady-state ms of the last size, once compiled, per policy. Every output of
the stream is checked against ONNX Runtime's (``rtol`` 1e-3, ``atol`` 1e-4) before anything is reported.

One thread: BLAS variables at 1, XLA's Eigen pool off, the process pinned to one CPU.
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS
os.environ["XLA_FLAGS"] = " ".join(
    [os.environ.get("XLA_FLAGS", ""), "--xla_cpu_multi_thread_eigen=false"]
).strip()  # before jax starts its backend

import statistics  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from hetero_sdk_jax import XlaPlugin  # noqa: E402
from real_models import MODELS, fetch, onnx_runtime_outputs  # noqa: E402
from timing import bench_arguments, environment, print_table, write_report  # noqa: E402

import hetero_sdk as hs  # noqa: E402

STREAMS = {
    "ppocr-rec": [(b, 48, 320) for b in range(1, 9)] + [(1, 48, w) for w in (256, 192, 288)],
    "ppocr-cls": [(b, 48, 192) for b in range(1, 9)] + [(1, 48, w) for w in (160, 128, 224)],
    "ppocr-det": [(b, 320, 320) for b in range(1, 5)] + [(1, 320, w) for w in (256, 192, 288)],
}
"""Per model: the (batch, height, width) of each input of the stream, in order."""
POLICIES = ("POW2", "EXACT")


def serve(path: str, stream: list[tuple[int, int, int]], policy: str, steady: int) -> dict[str, Any]:
    """Serves ``stream`` on a fresh XLA compiled model under ``policy``, checking every output against
    ONNX Runtime's; the executables compiled, the stream's seconds and the last size's steady ms."""
    core = hs.Core(plugins={"XLA": XlaPlugin}, autoload=False)
    config = {"XLA_SHAPE_BUCKETS": policy, "XLA_SHAPE_CACHE_SIZE": 16}
    compiled = core.compile_model(core.read_model(path), "XLA", config)
    request = compiled.create_infer_request()
    rng = np.random.default_rng(0)
    inputs = [rng.random((b, 3, h, w), np.float32) for b, h, w in stream]
    wall, cpu = time.perf_counter(), time.process_time()
    outputs = [[np.array(o) for o in request.infer({"x": x}).to_tuple()] for x in inputs]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    for x, got in zip(inputs, outputs):
        expected = list(onnx_runtime_outputs(path, {"x": x}).values())
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-4, err_msg=f"{policy} {x.shape}")
    times = []
    for _ in range(steady):
        start = time.perf_counter()
        request.infer({"x": inputs[-1]})
        times.append(time.perf_counter() - start)
    return {
        "compiles": compiled.compile_count,
        "stream_s": wall,
        "stream_cpu_s": cpu,
        "steady_ms": statistics.median(times) * 1e3,
        "kept": len(compiled.cached_shapes),
    }


def main() -> None:
    parser = bench_arguments(__doc__.splitlines()[0], list(STREAMS), runs=10)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    rows = []
    for name in args.models:
        path = str(fetch(MODELS[name]))
        stream = STREAMS[name]
        shapes = len(set(stream))
        for policy in POLICIES:
            result = serve(path, stream, policy, args.runs)
            rows.append({"model": name, "policy": policy, "inputs": len(stream), "shapes": shapes, **result})
            print(f"  {name} {policy}: {result}", flush=True)
    columns = [
        ("model", "model"), ("policy", "XLA_SHAPE_BUCKETS"), ("inputs", "inputs"), ("shapes", "distinct shapes"),
        ("compiles", "executables compiled"), ("stream_s", "stream s"), ("stream_cpu_s", "(CPU s)"),
        ("steady_ms", "last size ms"),
    ]  # fmt: skip
    print_table(columns, rows)
    write_report(args.json, args, environment(), rows=rows)


if __name__ == "__main__":
    main()
