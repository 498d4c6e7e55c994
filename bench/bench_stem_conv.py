"""The few-channel stems of YOLOv8n and YOLOX on XLA: the native stem kernel (``hetero_sdk_stem_conv``) and the
Focus rewrite (:mod:`hetero_sdk_jax.focus_convolution`) against the pure-XLA routes, one process, one thread.

Usage::

    python bench/bench_stem_conv.py --cpu-time --runs 100          # the two stems, layer by layer
    python bench/bench_stem_conv.py --models yolox yolov8n --cpu-time --runs 40   # whole models, on / off

Per layer (the image ``[1, 3, S, S]`` in, ``[1, OH, OW, O]`` channels-last out, the bias and SiLU applied, as the
models run them), each checked against the first (1e-4 of the range) before it is timed, interleaved, medians:

- ``native``: the kernel, the bias and SiLU in its registers (whether or not its rule takes the layer);
- ``few-channel loop``: :func:`~hetero_sdk_jax.lowering.convolution.few_channel_conv` (shifted multiply-adds, one
  XLA loop) then the bias and SiLU loop, the route YOLOv8n's stem took before;
- ``XLA conv``: ``lax.conv_general_dilated`` on the image moved channels-last, then the loop;
- for YOLOX, ``Focus + XLA conv``: the four strided slices concatenated and moved channels-last, the 3x3
  convolution of 12 channels by XLA and the loop, the graph's form before the rewrite.

With ``--models``, whole models (``real_models.ISSUE_MODELS`` at the issue's sizes) compiled twice in the process,
with the rewrite and the kernel and without either (the pass matching nothing, the kernel's rule saying no),
timed interleaved (``timing.on_off_row``).
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS

import argparse  # noqa: E402
import contextlib  # noqa: E402
import statistics  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from timing import measure, on_off_row, one_cpu_clock, pass_off, print_table  # noqa: E402

STEMS: dict[str, tuple[int, ...]] = {
    "yolov8n 3->16 3x3/2 320": (3, 16, 320, 3, 2, 1, False),
    "yolox Focus 12->24 3x3 208 (6x6/2 416)": (3, 24, 416, 3, 1, 1, True),
}
"""name: (image channels, outputs, image size, kernel, stride, pad, Focus in front)."""


def _silu(y: Any) -> Any:
    """SiLU as the XLA device lowers ``y * Sigmoid(y)``."""
    import jax.numpy as jnp

    return y * (0.5 + 0.5 * jnp.tanh(0.5 * y))


def _candidates(spec: tuple[int, ...], rng: np.random.Generator) -> tuple[Any, dict[str, Any]]:
    """The image and the jitted candidates of one stem."""
    import jax
    import jax.numpy as jnp
    from hetero_sdk_jax.focus_convolution import focus_filters
    from hetero_sdk_jax.lowering.convolution import few_channel_conv
    from hetero_sdk_jax.lowering.kernels import stem_conv
    from hetero_sdk_jax.native import available

    channels, outputs, size, kernel, stride, pad, focus = spec
    x = rng.standard_normal((1, channels, size, size)).astype(np.float32)
    bias = rng.standard_normal(outputs).astype(np.float32)
    lax_dims = ("NHWC", "HWIO", "NHWC")
    if focus:  # the graph's 12-channel filter over the Focus, and its 6x6 stride-2 form over the image
        order = [(c, dy, dx) for dy, dx in ((0, 0), (1, 0), (0, 1), (1, 1)) for c in range(channels)]
        small = rng.standard_normal((outputs, 4 * channels, kernel, kernel)).astype(np.float32) * 0.2
        oihw = focus_filters(small, 2, order, channels)
        strides = (2 * stride, 2 * stride)
        pads = [(2 * pad, 2 * pad)] * 2
    else:
        oihw = rng.standard_normal((outputs, channels, kernel, kernel)).astype(np.float32) * 0.2
        strides, pads = (stride, stride), [(pad, pad)] * 2
    w = np.ascontiguousarray(oihw.transpose(2, 3, 1, 0))  # [KH, KW, C, O]

    def native(x: Any, w: Any, b: Any) -> Any:
        return stem_conv.native_stem_conv(x, w, strides, pads, b, "silu")

    def loop(x: Any, w: Any, b: Any) -> Any:
        return _silu(few_channel_conv(x, w, strides, pads, (1, 1)) + b)

    def xla(x: Any, w: Any, b: Any) -> Any:
        moved = jnp.transpose(x, (0, 2, 3, 1))
        y = jax.lax.conv_general_dilated(moved, w, strides, pads, dimension_numbers=lax_dims)
        return _silu(y + b)

    if not available(stem_conv.TARGET):  # the kernel itself, whatever its rule says of this layer
        raise SystemExit("the native stem kernel cannot run here (no compiler or AVX-512)")
    calls = {"native": jax.jit(native)}
    calls["few-channel loop"] = jax.jit(loop)
    calls["XLA conv"] = jax.jit(xla)
    if focus:
        w12 = jnp.asarray(small.transpose(2, 3, 1, 0))

        def focus_xla(x: Any, _w: Any, b: Any) -> Any:
            parts = [x[:, :, dy::2, dx::2] for dy, dx in ((0, 0), (1, 0), (0, 1), (1, 1))]
            moved = jnp.transpose(jnp.concatenate(parts, axis=1), (0, 2, 3, 1))
            y = jax.lax.conv_general_dilated(moved, w12, (stride, stride), [(pad, pad)] * 2, dimension_numbers=lax_dims)
            return _silu(y + b)

        calls["Focus + XLA conv"] = jax.jit(focus_xla)
    args = (jnp.asarray(x), jnp.asarray(w), jnp.asarray(bias))
    return args, calls


def compare_layers(args: argparse.Namespace, clock: Callable[[], float]) -> None:
    """Each stem's candidates, checked then timed interleaved."""
    rng = np.random.default_rng(0)
    rows = []
    for name, spec in STEMS.items():
        inputs, calls = _candidates(spec, rng)
        expected = np.asarray(calls["native"](*inputs))
        for label, call in calls.items():
            got = np.asarray(call(*inputs))
            scale = max(1.0, float(np.max(np.abs(expected))))
            if got.shape != expected.shape or np.max(np.abs(got - expected)) > 1e-4 * scale:
                raise SystemExit(f"{name}: {label} differs from the native kernel")
        timed = {label: (lambda c=call, i=inputs: c(*i).block_until_ready()) for label, call in calls.items()}
        times = measure(timed, args.runs, 5, clock=clock)
        medians = {label: statistics.median(t) * 1e6 for label, t in times.items()}
        row: dict[str, Any] = {"layer": name, **{label: f"{us:.0f}" for label, us in medians.items()}}
        best = min(us for label, us in medians.items() if label != "native")
        row["ratio"] = medians["native"] / best
        rows.append(row)
    print(f"one thread, {'CPU' if args.cpu_time else 'wall'} time, medians in us, load {os.getloadavg()[0]:.1f}")
    labels = ["native", "few-channel loop", "XLA conv", "Focus + XLA conv"]
    print_table([("layer", "layer"), *((k, k) for k in labels), ("ratio", "native / best other")], rows)


@contextlib.contextmanager
def _without_the_change() -> Iterator[None]:
    """No Focus rewrite and no stem kernel: the pass matches nothing, the kernel's rule says no (both looked up
    when a model compiles)."""
    from hetero_sdk_jax.focus_convolution import FocusConvolution
    from hetero_sdk_jax.lowering.kernels import stem_conv

    saved = stem_conv.faster_natively
    stem_conv.faster_natively = lambda *args: False  # type: ignore[assignment]
    try:
        with pass_off(FocusConvolution):
            yield
    finally:
        stem_conv.faster_natively = saved  # type: ignore[assignment]


def compare_models(args: argparse.Namespace, clock: Callable[[], float]) -> None:
    """Whole models with the change and without it, in this process, interleaved."""
    from bench_onnx_models import model_at
    from real_models import fetch, read

    import hetero_sdk as hs

    rows = []
    for key in args.models:
        model = model_at(key, True)
        path = fetch(model)
        requests = {}
        for name in ("before", "stem"):
            with contextlib.nullcontext() if name == "stem" else _without_the_change():
                converted = read(model, path)
                requests[name] = hs.Core().compile_model(converted, "XLA").create_infer_request()
                requests[name].infer(model.feeds)  # a model with dynamic inputs is lowered on its first call
        rows.append(on_off_row(key, model.feeds, requests, args.runs, clock))
    print(f"XLA, the Focus rewrite and stem kernel off / on, median ms, load {os.getloadavg()[0]:.1f}")
    columns = [("model", "model"), ("before", "before ms"), ("stem", "stem ms"), ("ratio", "stem / before")]
    print_table([*columns, ("error", "max |diff|")], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=None)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--cpu-time", action="store_true", help="time by the process's CPU time")
    args = parser.parse_args()
    clock = one_cpu_clock(args.cpu_time)
    if args.models:
        compare_models(args, clock)
    else:
        compare_layers(args, clock)


if __name__ == "__main__":
    main()
