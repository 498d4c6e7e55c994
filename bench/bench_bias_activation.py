"""The bias + SiLU after a convolution left on XLA's own convolution: XLA's loop against the native in-place
pass (``hetero_sdk_bias_activation``), at YOLOv8n's and YOLOX's layers, in one process, one thread.

Usage::

    python bench/bench_bias_activation.py --cpu-time
    python bench/bench_bias_activation.py --layers 1,48,32,80,1 3,24,48,208,2 --runs 60
    python bench/bench_bias_activation.py --models yolov8n yolox --cpu-time   # whole models, pass on / off

A layer is ``k,Cin,Cout,size,stride``: a square ``size x size`` channels-last input, a ``k x k`` kernel (pads
``k // 2``; 1x1 layers are the ``[H * W, Cin] x [Cin, Cout]`` product the lowering computes), timed: the
convolution alone (``conv``), with the bias and SiLU as XLA's loop after it (the form the lowering emits
without the kernel), with the native pass after it in place and not in place, and each epilogue alone on
an input array (XLA's loop, the pass writing a new array). The two epilogues are checked against each
other first. Interleaved rounds, medians; ``loop us`` and ``native pass us`` are each epilogue's time over
the convolution alone (noisy: a difference of two medians).

With ``--models``, whole real models (``real_models.ISSUE_MODELS``, at the issue's sizes) compiled on XLA
twice in the process, the kernel's route taken and not taken (:func:`bias_activation.runs_natively` says
no inside the second compilation), timed interleaved.
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
from collections.abc import Iterator  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from timing import measure, print_table  # noqa: E402

LAYERS = (
    "3,16,32,160,2", "1,48,32,80,1", "3,32,32,40,1", "1,64,128,40,1", "3,64,64,40,1", "1,128,192,20,1",
    "3,12,24,208,1", "3,24,48,208,2", "1,24,24,104,1", "3,24,24,104,1", "1,48,48,104,1", "1,96,96,52,1",
    "3,48,48,52,1", "1,192,192,26,1", "1,384,384,13,1",
)  # fmt: skip
"""YOLOv8n's (320x320) and YOLOX's (416x416) layers whose bias and SiLU ran as XLA's loop on main."""


def main() -> None:
    """Times every layer four ways (or whole models on / off) and prints the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", nargs="+", default=list(LAYERS), help="k,Cin,Cout,size,stride each")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--cpu-time", action="store_true", help="time the process's CPU time, not wall time")
    parser.add_argument("--models", nargs="+", help="whole models of real_models.ISSUE_MODELS instead of layers")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # XLA:CPU sizes its pool by these
    if args.models:
        compare_models(args)
        return
    compare_layers(args)


def compare_layers(args: argparse.Namespace) -> None:
    """The table of layers."""
    import jax
    from hetero_sdk_jax.lowering.convolution import conv, pointwise_conv
    from hetero_sdk_jax.lowering.kernels.bias_activation import TARGET, native_bias_activation
    from hetero_sdk_jax.native import register

    register(TARGET)
    rng = np.random.default_rng(0)
    calls, names = {}, []
    for layer in args.layers:
        k, cin, cout, size, stride = (int(v) for v in layer.split(","))
        x = rng.standard_normal((1, size, size, cin), np.float32)
        w = rng.standard_normal((k, k, cin, cout), np.float32) / np.sqrt(k * k * cin)
        bias = rng.standard_normal(cout, np.float32)

        def product(x: Any, w: Any, k: int = k, s: int = stride) -> Any:
            if k == 1:  # [H * W, Cout]: the kernel's operand is then the product's own buffer, as in the lowering
                return pointwise_conv(x[:, ::s, ::s].reshape(-1, x.shape[-1]), w, ())
            return conv(x, w, (s, s), [(k // 2, k // 2)] * 2, (1, 1), channels_last=True)

        alone = jax.jit(product)
        looped = jax.jit(lambda x, w, b, f=product: _xla_silu(f(x, w) + b))
        native = jax.jit(lambda x, w, b, f=product: native_bias_activation(f(x, w), b, "silu"))
        fresh = jax.jit(lambda x, w, b, f=product: native_bias_activation(f(x, w), b, "silu", in_place=False))
        loop_alone = jax.jit(lambda y, b: _xla_silu(y + b))
        pass_alone = jax.jit(lambda y, b: native_bias_activation(y, b, "silu", in_place=False))
        y = np.asarray(alone(x, w))
        a, e = np.asarray(native(x, w, bias)), np.asarray(looped(x, w, bias))
        if a.shape != e.shape or np.max(np.abs(a - e)) > 1e-5 * max(1.0, float(np.max(np.abs(e)))):
            raise SystemExit(f"{layer}: the native pass differs from XLA's loop")
        name = f"{k}x{k} {cin}->{cout} {size}x{size} s{stride}"
        names.append((name, y.size))
        calls[f"{name} conv"] = lambda f=alone, a=(x, w): f(*a).block_until_ready()
        calls[f"{name} loop"] = lambda f=looped, a=(x, w, bias): f(*a).block_until_ready()
        calls[f"{name} native"] = lambda f=native, a=(x, w, bias): f(*a).block_until_ready()
        calls[f"{name} fresh"] = lambda f=fresh, a=(x, w, bias): f(*a).block_until_ready()
        calls[f"{name} loop alone"] = lambda f=loop_alone, a=(y, bias): f(*a).block_until_ready()
        calls[f"{name} pass alone"] = lambda f=pass_alone, a=(y, bias): f(*a).block_until_ready()
    clock = time.process_time if args.cpu_time else time.perf_counter
    times = measure(calls, args.runs, args.warmup, clock=clock)
    rows = []
    for name, size in names:
        ways = ("conv", "loop", "native", "fresh", "loop alone", "pass alone")
        median = {way: statistics.median(times[f"{name} {way}"]) * 1e6 for way in ways}
        loop, native_pass = median["loop"] - median["conv"], median["native"] - median["conv"]
        rows.append({
            "layer": name, "values": size, "conv_us": median["conv"], "loop_total_us": median["loop"],
            "native_total_us": median["native"], "loop_us": loop, "native_us": native_pass,
            "fresh_us": median["fresh"] - median["conv"],
            "ratio": median["native"] / median["loop"], "loop_alone_us": median["loop alone"],
            "pass_alone_us": median["pass alone"], "alone": median["pass alone"] / median["loop alone"],
        })  # fmt: skip
    print(f"one thread, {'CPU' if args.cpu_time else 'wall'} time, load {os.getloadavg()[0]:.1f}")
    columns = [("layer", "layer"), ("values", "values"), ("conv_us", "conv us"), ("loop_total_us", "+ XLA loop us")]
    columns += [("native_total_us", "+ native us"), ("ratio", "native / loop (total)"), ("loop_us", "loop us")]
    columns += [("native_us", "native pass us"), ("fresh_us", "not in place us"), ("loop_alone_us", "loop alone us")]
    columns += [("pass_alone_us", "pass alone us"), ("alone", "pass / loop alone")]
    print_table(columns, rows)


def _xla_silu(y: Any) -> Any:
    """SiLU as the XLA device lowers the fused convolution's activation (``biased_activation``)."""
    import jax.numpy as jnp

    return y * (0.5 + 0.5 * jnp.tanh(0.5 * y))


@contextlib.contextmanager
def _kernel_off() -> Iterator[None]:
    """Lowerings traced inside do not take the native bias + activation pass."""
    from hetero_sdk_jax.lowering.kernels import bias_activation

    saved = bias_activation.runs_natively
    bias_activation.runs_natively = lambda y, activation: False  # type: ignore[assignment]
    try:
        yield
    finally:
        bias_activation.runs_natively = saved  # type: ignore[assignment]


def compare_models(args: argparse.Namespace) -> None:
    """Each model on XLA with the pass on and off, in this process, interleaved; the two outputs' largest
    difference is checked first."""
    from real_models import ISSUE_MODELS, fetch

    import hetero_sdk as hs

    core, calls = hs.Core(), {}
    for key in args.models:
        model = ISSUE_MODELS[key]
        path = fetch(model)
        converted = hs.convert_model(path, input=model.input_shapes) if model.input_shapes else hs.convert_model(path)
        results = []
        for on in (True, False):
            with contextlib.nullcontext() if on else _kernel_off():
                request = core.compile_model(converted, "XLA").create_infer_request()
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
    print(f"XLA, one thread, {'CPU' if args.cpu_time else 'wall'} time, load {os.getloadavg()[0]:.1f}")
    print_table([("model", "model"), ("on", "pass on ms"), ("off", "pass off ms"), ("ratio", "on / off")], rows)


if __name__ == "__main__":
    main()
