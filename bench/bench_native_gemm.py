"""Single f32 matrix products by a constant matrix: XLA's native GEMM kernel (``hetero_sdk_gemm_f32``, the
matrix packed at compile time) beside XLA's own dot and ONNX Runtime's MatMul (its weight pre-packed by
MLAS), in one process, one thread.

Usage::

    python bench/bench_native_gemm.py --cpu-time
    python bench/bench_native_gemm.py --shapes 20,1024,8210 40,120,360 --runs 40
    python bench/bench_native_gemm.py --models crnn-lstm ppocr-rec --cpu-time   # whole models, kernel / XLA's dot

A shape is ``M,K,N`` (``[M, K]`` by a constant ``[K, N]``), or ``M,K,N,t`` (the constant stored ``[N, K]``,
as a Gemm with ``transB`` has it: XLA's dot and ONNX Runtime's Gemm read it so). Each way is checked against numpy (f64,
1e-5 of the range) before it is timed; interleaved rounds, medians, the ratios native / XLA and
native / ONNX Runtime per shape. With ``--models``, whole real models (``real_models.BENCH_MODELS``, at
the issue's sizes) compiled on XLA twice in the process, the GEMM kernel taken by its rule and nowhere
(every other native kernel on both times), timed interleaved.
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from timing import measure, print_table  # noqa: E402

SHAPES = (
    "20,1024,8210,t",  # the CRNN's classifier (ddddocr), a Gemm of B transposed
    "20,512,4096",  # the CRNN's LSTM input projection, both directions
    "40,120,360", "40,120,120", "40,120,240", "40,240,120", "40,120,6625",  # PP-OCRv4 rec at 48x320
    "1,512,214",  # magika's last dense layer
)  # fmt: skip
"""The products of constant matrices in the issue's models, at the issue's sizes."""


def _onnx_matmul(b: np.ndarray, transposed: bool) -> Any:
    """An ONNX Runtime session of one MatMul by the initializer ``b`` (a Gemm by ``b.T`` with ``transB``
    when ``transposed``), one thread."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    k, n = b.shape
    node = (
        helper.make_node("Gemm", ["a", "b"], ["y"], transB=1)
        if transposed
        else helper.make_node("MatMul", ["a", "b"], ["y"])
    )
    graph = helper.make_graph(
        [node], "gemm",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [None, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, n])],
        [numpy_helper.from_array(np.ascontiguousarray(b.T) if transposed else b, "b")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return ort.InferenceSession(onnx.ModelProto.SerializeToString(model), options, providers=["CPUExecutionProvider"])


def main() -> None:
    """Times every shape three ways and prints the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES), help="M,K,N each")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--cpu-time", action="store_true", help="time the process's CPU time, not wall time")
    parser.add_argument("--models", nargs="+", help="whole models of real_models.ISSUE_MODELS instead of shapes")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # XLA:CPU sizes its pool by these
    if args.models:
        compare_models(args)
        return
    import jax
    import jax.numpy as jnp
    from hetero_sdk_jax.lowering.kernels.gemm import TARGET, native_matmul, packed_b
    from hetero_sdk_jax.native import register

    register(TARGET)
    rng = np.random.default_rng(0)
    calls: dict[str, Any] = {}
    names: list[str] = []
    for shape in args.shapes:
        m, k, n = (int(v) for v in shape.split(",")[:3])
        transposed = shape.endswith(",t")
        a = rng.standard_normal((m, k), np.float32)
        b = rng.standard_normal((k, n), np.float32)
        packed = jax.device_put(packed_b(b))
        ours = jax.jit(lambda a, p, n=n: native_matmul(a, p, n))
        xla: Any
        if transposed:
            xla = jax.jit(lambda a, bt: jnp.matmul(a, bt.T, precision=jax.lax.Precision.HIGHEST))
        else:
            xla = jax.jit(lambda a, b: jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST))
        session = _onnx_matmul(b, transposed)
        b_device = jax.device_put(np.ascontiguousarray(b.T) if transposed else b)
        expected = a.astype(np.float64) @ b
        results = (np.asarray(ours(a, packed)), np.asarray(xla(a, b_device)), session.run(None, {"a": a})[0])
        for way, got in zip(("native", "XLA", "ONNX Runtime"), results, strict=True):
            if np.max(np.abs(got - expected)) > 1e-5 * np.max(np.abs(expected)) * np.sqrt(k):
                raise SystemExit(f"{shape}: {way} differs from numpy")
        name = f"{m}x{k} by {k}x{n}{' (B^T)' if transposed else ''}"
        names.append(name)
        calls[f"{name} native"] = lambda f=ours, a=a, p=packed: f(a, p).block_until_ready()
        calls[f"{name} XLA"] = lambda f=xla, a=a, b=b_device: f(a, b).block_until_ready()
        calls[f"{name} ORT"] = lambda s=session, a=a: s.run(None, {"a": a})
    clock = time.process_time if args.cpu_time else time.perf_counter
    times = measure(calls, args.runs, args.warmup, clock=clock)
    rows = []
    for name in names:
        mine, xla_s, ort_s = (statistics.median(times[f"{name} {way}"]) for way in ("native", "XLA", "ORT"))
        rows.append({
            "shape": name, "native": mine * 1e6, "xla": xla_s * 1e6, "ort": ort_s * 1e6,
            "vs_xla": mine / xla_s, "vs_ort": mine / ort_s, "xla_ort": xla_s / ort_s,
        })  # fmt: skip
    print(f"one thread, {'CPU' if args.cpu_time else 'wall'} time, load {os.getloadavg()[0]:.1f}")
    columns = [("shape", "product"), ("native", "native us"), ("xla", "XLA us"), ("ort", "ORT us")]
    print_table([*columns, ("vs_xla", "native / XLA"), ("vs_ort", "native / ORT"), ("xla_ort", "XLA / ORT")], rows)


def compare_models(args: argparse.Namespace) -> None:
    """Each model on XLA with the GEMM kernel where its rule takes it and nowhere, in this process, interleaved."""
    from bench_onnx_models import ISSUE_SIZES
    from hetero_sdk_jax.lowering.kernels import gemm
    from real_models import BENCH_MODELS, fetch

    import hetero_sdk as hs

    rule, core, calls = gemm.faster_natively, hs.Core(), {}
    for key in args.models:
        model = BENCH_MODELS[key]
        path, feeds = fetch(model), dict(model.feeds)
        shapes = model.input_shapes
        if key in ISSUE_SIZES:
            name = next(iter(feeds))
            feeds = {name: np.random.default_rng(0).random(ISSUE_SIZES[key], np.float32)}
            shapes = {name: list(ISSUE_SIZES[key])}
        converted = hs.convert_model(path, input=shapes) if shapes else hs.convert_model(path)
        for on in (True, False):
            gemm.faster_natively = rule if on else (lambda rows, depth, columns: False)  # read at compile time
            try:
                request = core.compile_model(converted, "XLA").create_infer_request()
            finally:
                gemm.faster_natively = rule
            calls[f"{key} {'on' if on else 'off'}"] = lambda r=request, f=feeds: r.infer(f)
    clock = time.process_time if args.cpu_time else time.perf_counter
    times = measure(calls, args.runs, args.warmup, clock=clock)
    rows = []
    for key in args.models:
        with_, without = statistics.median(times[f"{key} on"]), statistics.median(times[f"{key} off"])
        rows.append({"model": key, "on": with_ * 1e3, "off": without * 1e3, "ratio": with_ / without})
    print(f"XLA, one thread, {'CPU' if args.cpu_time else 'wall'} time, load {os.getloadavg()[0]:.1f}")
    print_table(
        [("model", "model"), ("on", "GEMM kernel ms"), ("off", "XLA's dot ms"), ("ratio", "kernel / dot")], rows
    )


if __name__ == "__main__":
    main()
