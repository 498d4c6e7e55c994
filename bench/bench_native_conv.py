"""Single dense f32 convolutions (channels-last, 3x3): XLA's native direct-convolution kernel
(``hetero_sdk_conv2d``) beside XLA's own ``lax.conv_general_dilated``, in one process, one thread.

Usage::

    python bench/bench_native_conv.py --cpu-time
    python bench/bench_native_conv.py --layers 16,16,80,1 96,96,26,1 --runs 40
    python bench/bench_native_conv.py --models yolov8n yolox --cpu-time   # whole models, native on / off
    python bench/bench_native_conv.py --models yolov8n yolox --fusion --cpu-time   # fused / unfused
    python bench/bench_native_conv.py --models yolov8n yolox --narrow 96 --cpu-time   # the class / 96+ only

A layer is ``Cin,Cout,size,stride`` (a square ``size x size`` input, 3x3 kernel, pads 1), run three ways:
the kernel given the filter blocked at compile time (``native``, what a model with a Constant filter runs),
the kernel blocking a filter computed at run time on each call (``per call``), and XLA's convolution. Each is
checked against XLA's (f32, 1e-4 of the range) before it is timed; interleaved rounds, medians, the ratios
native / XLA and native / per call per layer. Two more ways give the layer as a YOLO model has it, with a
per-channel bias and SiLU: the kernel applying them before its stores (``fused``, the
``hetero_sdk_conv2d_bias`` target) against XLA's convolution and its loop of the bias and SiLU after it
(``XLA + loop``, what such a layer costs on XLA's convolution), and against XLA's convolution alone.
With ``--models``, whole real models (``real_models.ISSUE_MODELS``, at the issue's sizes) compiled on XLA
twice in the process,
``XLA_NATIVE_KERNELS`` on and off, timed interleaved; with ``--fusion`` as well, native kernels on both
times, with and without :class:`~hetero_sdk_jax.convolution_fusion.ConvolutionBiasActivationFusion` (the
bias and activation in the kernel's epilogue, or a loop of XLA's after it); with ``--narrow N`` instead,
native kernels on both times, the conv2d kernel's class as it is (``faster_natively``) and cut to layers
of ``N`` or more input channels (and stride 1 with at most 16 outputs), the class before it was widened.
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS

import argparse  # noqa: E402
import contextlib  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator, Sequence  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from timing import measure, print_table  # noqa: E402

LAYERS = (
    "16,16,80,1", "16,32,160,2", "32,32,40,1", "32,64,80,2", "64,64,20,1", "64,64,40,1", "64,64,40,2",
    "64,128,40,2", "128,128,20,1", "24,24,104,1", "24,48,208,2", "48,48,52,1", "48,96,104,2", "96,96,26,1",
    "96,96,52,1", "96,192,52,2", "192,192,13,1", "192,384,26,2",
)  # fmt: skip
"""YOLOv8n's (the first nine) and YOLOX's 3x3 layers at the issue's sizes (320x320, 416x416)."""

PADS = [(1, 1), (1, 1)]


def main() -> None:
    """Times every layer both ways and prints the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", nargs="+", default=list(LAYERS), help="Cin,Cout,size,stride each")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--cpu-time", action="store_true", help="time the process's CPU time, not wall time")
    parser.add_argument("--models", nargs="+", help="whole models of real_models.ISSUE_MODELS instead of layers")
    parser.add_argument("--fusion", action="store_true", help="with --models: the bias fusion on / off")
    parser.add_argument("--narrow", type=int, help="with --models: the conv2d class / N+ input channels only")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # XLA:CPU sizes its pool by these
    if args.models:
        compare_models(args)
        return
    import jax
    from hetero_sdk_jax.lowering.convolution import conv
    from hetero_sdk_jax.lowering.kernels.conv2d import FUSED_TARGET, TARGET, blocked_filter, native_conv2d
    from hetero_sdk_jax.native import register

    register(TARGET)
    register(FUSED_TARGET)
    rng = np.random.default_rng(0)
    calls, shapes = {}, {}
    for layer in args.layers:
        cin, cout, size, stride = (int(v) for v in layer.split(","))
        # on the device before timing: the kernel's time, not the input's copy into XLA on each call
        x = jax.device_put(rng.standard_normal((1, size, size, cin), np.float32))
        w = jax.device_put(rng.standard_normal((3, 3, cin, cout), np.float32))
        bias = jax.device_put(rng.standard_normal(cout, np.float32))
        blocked = jax.device_put(blocked_filter(np.transpose(np.asarray(w), (3, 2, 0, 1))))
        ours = jax.jit(lambda x, b, s=stride, o=cout: native_conv2d(x, b, (s, s), PADS, o))
        per_call = jax.jit(lambda x, w, s=stride: native_conv2d(x, w, (s, s), PADS))
        xla = jax.jit(lambda x, w, s=stride: conv(x, w, (s, s), PADS, (1, 1), channels_last=True))
        fused = jax.jit(lambda x, b, c, s=stride, o=cout: native_conv2d(x, b, (s, s), PADS, o, c, "silu"))
        looped = jax.jit(lambda x, w, c, s=stride: _silu(conv(x, w, (s, s), PADS, (1, 1), channels_last=True) + c))
        b, d = np.asarray(xla(x, w)), np.asarray(looped(x, w, bias))
        for a, e in ((ours(x, blocked), b), (per_call(x, w), b), (fused(x, blocked, bias), d)):
            if a.shape != e.shape or np.max(np.abs(np.asarray(a) - e)) > 1e-4 * np.max(np.abs(e)):
                raise SystemExit(f"{layer}: the native kernel differs from XLA's convolution")
        name = f"3x3 {cin}->{cout} {size}x{size} s{stride}"
        shapes[name] = (ours, xla)
        calls[f"{name} native"] = lambda f=ours, x=x, b=blocked: f(x, b).block_until_ready()
        calls[f"{name} per call"] = lambda f=per_call, x=x, w=w: f(x, w).block_until_ready()
        calls[f"{name} XLA"] = lambda f=xla, x=x, w=w: f(x, w).block_until_ready()
        calls[f"{name} fused"] = lambda f=fused, x=x, a=(blocked, bias): f(x, *a).block_until_ready()
        calls[f"{name} looped"] = lambda f=looped, x=x, a=(w, bias): f(x, *a).block_until_ready()
    clock = time.process_time if args.cpu_time else time.perf_counter
    times = measure(calls, args.runs, args.warmup, clock=clock)
    rows = []
    for name in shapes:
        mine, theirs = statistics.median(times[f"{name} native"]), statistics.median(times[f"{name} XLA"])
        copying = statistics.median(times[f"{name} per call"])
        fused_time, looped_time = statistics.median(times[f"{name} fused"]), statistics.median(times[f"{name} looped"])
        rows.append({
            "layer": name, "native": mine * 1e6, "per_call": copying * 1e6, "xla": theirs * 1e6,
            "ratio": mine / theirs, "blocking": mine / copying, "fused": fused_time * 1e6,
            "looped": looped_time * 1e6, "fused_ratio": fused_time / looped_time, "fused_xla": fused_time / theirs,
        })  # fmt: skip
    print(f"one thread, {'CPU' if args.cpu_time else 'wall'} time, load {os.getloadavg()[0]:.1f}")
    columns = [("layer", "layer"), ("native", "native us"), ("per_call", "per call us"), ("xla", "XLA us")]
    columns += [("ratio", "native / XLA"), ("blocking", "native / per call"), ("fused", "fused us")]
    columns += [("looped", "XLA + loop us"), ("fused_ratio", "fused / XLA + loop"), ("fused_xla", "fused / XLA")]
    print_table(columns, rows)


def _silu(y: Any) -> Any:
    """SiLU as the XLA device lowers ``y * Sigmoid(y)`` (``hetero_sdk_jax.lowering.elementwise.multiply``)."""
    import jax.numpy as jnp

    return y * (0.5 + 0.5 * jnp.tanh(0.5 * y))


def _compiled(core: Any, model: Any, on: bool, fusion: bool, narrow: int | None = None) -> Any:
    """``model`` compiled for XLA: with ``fusion``, native kernels on and the bias fusion pass on or off (it
    is looked up when the passes run); with ``narrow``, native kernels on and the conv2d class as it is or
    cut to ``narrow`` or more input channels; otherwise native kernels on or off."""
    from hetero_sdk_jax.convolution_fusion import ConvolutionBiasActivationFusion
    from timing import pass_off

    if narrow is not None:
        with contextlib.nullcontext() if on else _narrowed(narrow):
            return core.compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": True})
    if not fusion:
        return core.compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": on})
    with contextlib.nullcontext() if on else pass_off(ConvolutionBiasActivationFusion):
        return core.compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": True})


@contextlib.contextmanager
def _narrowed(inputs: int) -> Iterator[None]:
    """The conv2d kernel's class (``faster_natively``, looked up when a model compiles) cut to layers of
    ``inputs`` or more input channels, or stride 1 with at most 16 outputs."""
    from hetero_sdk_jax.lowering.kernels import conv2d

    saved = conv2d.faster_natively

    def narrowed(cin: int, cout: int, kernel_h: int, kernel_w: int, strides: Sequence[int]) -> bool:
        few = tuple(strides) == (1, 1) and cout <= 16
        return saved(cin, cout, kernel_h, kernel_w, strides) and (cin >= inputs or few)

    conv2d.faster_natively = narrowed
    try:
        yield
    finally:
        conv2d.faster_natively = saved


def compare_models(args: argparse.Namespace) -> None:
    """Each model on XLA with native kernels (or, with ``--fusion``, the bias fusion; with ``--narrow``, the
    conv2d class as it is) on and off, in this process, interleaved; the two outputs' largest difference
    is checked first."""
    from real_models import ISSUE_MODELS, fetch, read

    import hetero_sdk as hs

    core, calls = hs.Core(), {}
    for key in args.models:
        model = ISSUE_MODELS[key]
        path = fetch(model)
        converted = read(model, path)
        results = []
        for on in (True, False):
            request = _compiled(core, converted, on, args.fusion, args.narrow).create_infer_request()
            results.append([np.asarray(v) for v in request.infer(model.feeds).values()])
            calls[f"{key} {'on' if on else 'off'}"] = lambda r=request, f=model.feeds: r.infer(f)
        for a, b in zip(*results):
            if a.shape != b.shape or np.max(np.abs(a - b)) > 1e-3 * max(1.0, float(np.max(np.abs(b)))):
                raise SystemExit(f"{key}: the two compilations' outputs differ")
    clock = time.process_time if args.cpu_time else time.perf_counter
    times = measure(calls, args.runs, args.warmup, clock=clock)
    rows = []
    for key in args.models:
        with_, without = statistics.median(times[f"{key} on"]), statistics.median(times[f"{key} off"])
        rows.append({"model": key, "on": with_ * 1e3, "off": without * 1e3, "ratio": with_ / without})
    what = f"class / {args.narrow}+:" if args.narrow is not None else "bias fusion" if args.fusion else "native"
    print(f"XLA, one thread, {'CPU' if args.cpu_time else 'wall'} time, load {os.getloadavg()[0]:.1f}")
    columns = [("model", "model"), ("on", f"{what} on ms"), ("off", f"{what} off ms"), ("ratio", "on / off")]
    print_table(columns, rows)


if __name__ == "__main__":
    main()
