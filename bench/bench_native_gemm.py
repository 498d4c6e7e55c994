"""Single f32 matrix products by a constant matrix: XLA's native GEMM kernel (``hetero_sdk_gemm_f32``, the
matrix packed at compile time) beside XLA's own dot and ONNX Runtime's MatMul (its weight pre-packed by
MLAS), in one process, one thread.

Usage::

    python bench/bench_native_gemm.py --cpu-time
    python bench/bench_native_gemm.py --shapes 20,1024,8210 40,120,360 --runs 40
    python bench/bench_native_gemm.py --models crnn-lstm ppocr-rec --cpu-time   # whole models, kernel / XLA's dot
    python bench/bench_native_gemm.py --fused --cpu-time   # the in-place path with bias + activation
    python bench/bench_native_gemm.py --fused --models ppocr-rec yolov8n yolox --cpu-time   # whole models, on / off
    python bench/bench_native_gemm.py --fused --take-all --models yolov8n yolox --cpu-time   # every shape / the rule

A shape is ``M,K,N`` (``[M, K]`` by a constant ``[K, N]``), or ``M,K,N,t`` (the constant stored ``[N, K]``,
as a Gemm with ``transB`` has it: XLA's dot and ONNX Runtime's Gemm read it so). Each way is checked against numpy (f64,
1e-5 of the range) before it is timed; interleaved rounds, medians, the ratios native / XLA and
native / ONNX Runtime per shape. With ``--fused``, the in-place path with its bias and activation
(``hetero_sdk_gemm_f32_fused``) at the 1x1 convolutions of PP-OCRv4 rec, YOLOv8n and YOLOX
(:data:`FUSED_SHAPES`, ``M,K,N,activation``) against XLA's dot followed by the bias and activation as the
lowering writes them (the real alternative: XLA runs them as a loop of its own after YNNPACK's dot) and
against XLA's dot alone. With ``--models``, whole real models (``real_models.BENCH_MODELS``, at the issue's
sizes) compiled on XLA twice in the process, the GEMM kernel taken by its rule (with ``--fused``: the in-place
path's) and nowhere (every other native kernel on both times), timed interleaved; with ``--take-all`` as well,
the in-place path at every shape it takes against its rule (a wider rule measured before it is written).
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

FUSED_SHAPES = (
    "3840,16,32,hswish", "3840,32,64,hswish", "3840,64,64,hswish", "1920,64,128,hswish",  # PP-OCRv4 rec, 48x320
    "1920,128,128,hswish", "960,128,240,hswish", "960,240,240,hswish", "480,240,480,hswish",
    "480,480,480,hswish", "240,480,480,hswish", "40,120,480,none", "40,60,120,none", "1,480,120,relu",
    "1,120,480,none",
    "6400,32,32,silu", "6400,48,32,silu", "1600,64,64,silu", "1600,128,64,silu", "1600,192,64,silu",  # YOLOv8n 320
    "1600,64,64,none", "400,128,128,silu", "400,192,128,silu", "400,384,128,silu", "100,256,128,silu",
    "100,384,256,silu", "100,512,256,silu",
    "10816,24,24,silu", "10816,48,48,silu", "2704,48,48,silu", "2704,96,96,silu", "676,96,96,silu",  # YOLOX 416
    "676,192,96,silu", "676,192,192,silu", "169,384,192,silu", "169,384,384,silu", "169,768,384,silu",
    "2704,192,96,silu", "676,384,192,silu",  # YOLOX's sibling pairs (two 1x1 layers of one input as one product)
)  # fmt: skip
"""1x1 convolutions (``M`` pixels by ``K`` input channels by ``N`` output channels) with their bias and activation
in the issue's models at the issue's sizes."""


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
    parser.add_argument("--fused", action="store_true", help="the in-place path with bias + activation")
    parser.add_argument(
        "--take-all", action="store_true", help="with --fused --models: every shape taken against the rule"
    )
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # XLA:CPU sizes its pool by these
    if args.models:
        compare_models(args)
        return
    if args.fused:
        compare_fused(args)
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


def _xla_epilogue(y: Any, bias: Any, activation: str) -> Any:
    """``activation(y + bias)`` as the convolution lowering writes it after XLA's product."""
    import jax.numpy as jnp

    y = y + bias
    if activation == "relu":
        return jnp.maximum(y, 0)
    if activation == "silu":
        return y * (0.5 + 0.5 * jnp.tanh(0.5 * y))
    if activation == "hswish":
        return y * jnp.clip(y / 6 + 0.5, 0, 1)
    return y


def _numpy_activation(y: np.ndarray, activation: str) -> np.ndarray:
    if activation == "relu":
        return np.maximum(y, 0)
    if activation == "silu":
        return y / (1 + np.exp(-y))
    if activation == "hswish":
        return y * np.clip(y + 3, 0, 6) / 6
    return y


def compare_fused(args: argparse.Namespace) -> None:
    """Times each ``M,K,N,activation`` three ways: the in-place kernel with its epilogue, XLA's dot with the bias
    and activation after it, XLA's dot alone."""
    import jax
    import jax.numpy as jnp
    from hetero_sdk_jax.lowering.kernels.gemm import FUSED_TARGET, native_fused_matmul, packed_b
    from hetero_sdk_jax.native import register

    register(FUSED_TARGET)
    rng = np.random.default_rng(0)
    calls: dict[str, Any] = {}
    names: list[str] = []
    shapes = args.shapes if args.shapes != list(SHAPES) else list(FUSED_SHAPES)
    precision = jax.lax.Precision.HIGHEST
    for shape in shapes:
        m_, k_, n_, activation = shape.split(",")
        m, k, n = int(m_), int(k_), int(n_)
        a = rng.standard_normal((m, k), np.float32)
        b = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
        bias = rng.standard_normal(n).astype(np.float32)
        packed = jax.device_put(packed_b(b))
        ours = jax.jit(lambda a, p, c, n=n, act=activation: native_fused_matmul(a, p, n, c, act))
        full = jax.jit(lambda a, b, c, act=activation: _xla_epilogue(jnp.matmul(a, b, precision=precision), c, act))
        dot = jax.jit(lambda a, b: jnp.matmul(a, b, precision=precision))
        b_device, bias_device = jax.device_put(b), jax.device_put(bias)
        expected = _numpy_activation(a.astype(np.float64) @ b + bias, activation)
        for way, got in (("native", ours(a, packed, bias_device)), ("XLA", full(a, b_device, bias_device))):
            if np.max(np.abs(np.asarray(got) - expected)) > 1e-5 * max(1.0, np.max(np.abs(expected))) * np.sqrt(k):
                raise SystemExit(f"{shape}: {way} differs from numpy")
        name = f"{m}x{k} by {k}x{n} {activation}"
        names.append(name)
        calls[f"{name} native"] = lambda f=ours, a=a, p=packed, c=bias_device: f(a, p, c).block_until_ready()
        calls[f"{name} XLA"] = lambda f=full, a=a, b=b_device, c=bias_device: f(a, b, c).block_until_ready()
        calls[f"{name} dot"] = lambda f=dot, a=a, b=b_device: f(a, b).block_until_ready()
    clock = time.process_time if args.cpu_time else time.perf_counter
    times = measure(calls, args.runs, args.warmup, clock=clock)
    rows = []
    for name in names:
        mine, xla_s, dot_s = (statistics.median(times[f"{name} {way}"]) for way in ("native", "XLA", "dot"))
        rows.append({
            "shape": name, "native": mine * 1e6, "xla": xla_s * 1e6, "dot": dot_s * 1e6,
            "vs_xla": mine / xla_s, "vs_dot": mine / dot_s,
        })  # fmt: skip
    print(f"one thread, {'CPU' if args.cpu_time else 'wall'} time, load {os.getloadavg()[0]:.1f}")
    columns = [("shape", "product"), ("native", "native us"), ("xla", "XLA dot+loop us"), ("dot", "XLA dot us")]
    print_table([*columns, ("vs_xla", "native / dot+loop"), ("vs_dot", "native / dot")], rows)


def compare_models(args: argparse.Namespace) -> None:
    """Each model on XLA with the GEMM kernel where its rule takes it and nowhere, in this process, interleaved
    (with ``--fused``: the in-place path's rule, :func:`~hetero_sdk_jax.lowering.kernels.gemm.faster_in_place`)."""
    from bench_onnx_models import ISSUE_SIZES
    from hetero_sdk_jax.lowering.kernels import gemm
    from real_models import BENCH_MODELS, fetch

    import hetero_sdk as hs

    name = "faster_in_place" if args.fused else "faster_natively"  # the rule switched: the in-place path's or not
    rule, core, calls = getattr(gemm, name), hs.Core(), {}
    on_rule, off_rule = rule, lambda *shape: False
    if args.take_all and args.fused:
        on_rule, off_rule = _every_shape, rule
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
            setattr(gemm, name, on_rule if on else off_rule)  # read when XLA compiles: the first call
            try:
                request = core.compile_model(converted, "XLA").create_infer_request()
                request.infer(feeds)
            finally:
                setattr(gemm, name, rule)
            calls[f"{key} {'on' if on else 'off'}"] = lambda r=request, f=feeds: r.infer(f)
    clock = time.process_time if args.cpu_time else time.perf_counter
    times = measure(calls, args.runs, args.warmup, clock=clock)
    rows = []
    for key in args.models:
        with_, without = statistics.median(times[f"{key} on"]), statistics.median(times[f"{key} off"])
        rows.append({"model": key, "on": with_ * 1e3, "off": without * 1e3, "ratio": with_ / without})
    print(f"XLA, one thread, {'CPU' if args.cpu_time else 'wall'} time, load {os.getloadavg()[0]:.1f}")
    if args.take_all and args.fused:
        labels = [("on", "every shape ms"), ("off", "the rule ms"), ("ratio", "every shape / rule")]
    else:
        labels = [("on", "GEMM kernel ms"), ("off", "XLA's dot ms"), ("ratio", "kernel / dot")]
    print_table([("model", "model"), *labels], rows)


def _every_shape(rows: int, depth: int, columns: int, activation: str) -> bool:
    """The in-place path at every product it can compute (the rule's own limits without its measured class)."""
    from hetero_sdk_jax.lowering.kernels.gemm import ACTIVATIONS, MAX_DEPTH

    return rows >= 1 and 1 <= depth <= MAX_DEPTH and columns >= 1 and activation in ACTIVATIONS


if __name__ == "__main__":
    main()
