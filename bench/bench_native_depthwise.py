"""The XLA device's depthwise convolutions at the PP-OCR models' layers: the native kernel
(``hetero_sdk_depthwise_conv``) against XLA's own fused loop, in one process, interleaved, one CPU.

Usage::

    python bench/bench_native_depthwise.py --model ppocr-rec --runs 200 --cpu-time [--baseline main]

Each layer is ``depthwise_conv`` (as the lowering calls it, channels-last f32), then the bias add and
hardswish that follow it in the models: XLA fuses those into its own loop, while the native kernel's
result is read again by a separate XLA loop, so the comparison includes that cost. The table gives
each median in microseconds and native / XLA; the last row sums the layers as the model has them.
Layers the kernel does not take (fewer than ``kernels.depthwise.MIN_CHANNELS``) run XLA's loop in the
"native" column. The "fused" column is the kernel with the bias and hardswish applied before each store
(what :class:`~hetero_sdk_jax.depthwise_fusion.DepthwiseBiasActivationFusion` makes of these layers),
called on every layer whatever its channels. ``--baseline REV`` adds a "baseline" column: the fused kernel
as its source stood at git revision ``REV`` (built into a library of its own and registered under another
target), so an old and a new kernel are compared in one process.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from hetero_sdk_jax import native
from hetero_sdk_jax.lowering.convolution import depthwise_conv
from hetero_sdk_jax.lowering.kernels.depthwise import ACTIVATIONS, FUSED_TARGET, TARGET, native_depthwise
from hetero_sdk_jax.native.build import build
from timing import measure, print_table

# (channels, height, width, kernel, (stride_h, stride_w), count in the model) at the sizes
LAYERS = {
    "ppocr-rec": [
        (16, 24, 160, 3, (1, 1), 1), (32, 24, 160, 3, (1, 1), 1), (64, 24, 160, 3, (1, 1), 1),
        (64, 24, 160, 3, (2, 1), 1), (128, 12, 160, 3, (1, 1), 1), (128, 12, 160, 3, (1, 2), 1),
        (240, 12, 80, 5, (1, 1), 4), (240, 12, 80, 5, (2, 1), 1), (480, 6, 80, 5, (1, 1), 1),
        (480, 6, 80, 5, (2, 1), 1), (480, 3, 80, 5, (1, 1), 1),
    ],
    "ppocr-cls": [
        (8, 24, 96, 3, (2, 1), 1), (24, 12, 96, 3, (2, 1), 1), (32, 6, 96, 3, (1, 1), 1),
        (32, 6, 96, 5, (2, 1), 1), (88, 3, 96, 5, (1, 1), 2), (40, 3, 96, 5, (1, 1), 1),
        (48, 3, 96, 5, (1, 1), 1), (104, 3, 96, 5, (2, 1), 1), (200, 2, 96, 5, (1, 1), 2),
    ],
    "ppocr-det": [
        (16, 160, 160, 3, (1, 1), 1), (32, 160, 160, 3, (2, 2), 1), (48, 80, 80, 3, (1, 1), 1),
        (48, 80, 80, 3, (2, 2), 1), (96, 40, 40, 3, (1, 1), 1), (96, 40, 40, 3, (2, 2), 1),
        (192, 20, 20, 5, (1, 1), 4), (192, 20, 20, 5, (2, 2), 1), (384, 10, 10, 5, (1, 1), 3),
    ],
}  # fmt: skip


def _layer(kernel: int, strides: tuple[int, int], on: bool):  # type: ignore[no-untyped-def]
    pad = kernel // 2

    def f(x: jax.Array, w: jax.Array, bias: jax.Array) -> jax.Array:
        with native.native_scope("cpu", on):
            y = depthwise_conv(x, w, strides, [(pad, pad)] * 2, [1, 1], True) + bias
        return y * jnp.clip(y + 3, 0, 6) / 6

    return jax.jit(f)


def _fused_layer(kernel: int, strides: tuple[int, int]):  # type: ignore[no-untyped-def]
    pad = kernel // 2

    def f(x: jax.Array, w: jax.Array, bias: jax.Array) -> jax.Array:
        return native_depthwise(x, w, strides, [(pad, pad)] * 2, [1, 1], bias, "hswish")

    return jax.jit(f)


_BASELINE_TARGET = "hetero_sdk_depthwise_conv_bias_baseline"
_SOURCES = Path("plugins/jax/hetero_sdk_jax/native/src")


def _register_baseline(revision: str) -> None:
    """Builds ``depthwise_conv.cc`` (and the headers beside it) as they are at git ``revision`` and registers
    its fused handler as :data:`_BASELINE_TARGET`."""
    root = Path(__file__).resolve().parent.parent
    folder = Path(tempfile.mkdtemp(prefix="depthwise-baseline-"))

    def show(name: str) -> bytes:
        return subprocess.run(
            ["git", "show", f"{revision}:{_SOURCES / name}"], cwd=root, capture_output=True, check=True
        ).stdout

    listing = subprocess.run(
        ["git", "ls-tree", "--name-only", revision, f"{_SOURCES}/"], cwd=root, capture_output=True, text=True
    ).stdout.split()
    for header in (Path(name).name for name in listing if name.endswith(".h")):
        (folder / header).write_bytes(show(header))
    source = folder / "depthwise_conv_baseline.cc"  # its own stem: the current kernel's cached builds stay
    source.write_bytes(show("depthwise_conv.cc"))
    library = ctypes.cdll.LoadLibrary(str(build(source)))
    jax.ffi.register_ffi_target(_BASELINE_TARGET, jax.ffi.pycapsule(library.HeteroSdkDepthwiseConvBias), platform="cpu")
    _BASELINE_LIBRARIES.append(library)


_BASELINE_LIBRARIES: list[ctypes.CDLL] = []


def _baseline_layer(kernel: int, strides: tuple[int, int]):  # type: ignore[no-untyped-def]
    pad = kernel // 2

    def f(x: jax.Array, w: jax.Array, bias: jax.Array) -> jax.Array:
        out_h, out_w = [(size + 2 * pad - kernel) // s + 1 for size, s in zip(x.shape[1:3], strides)]
        result = jax.ShapeDtypeStruct((x.shape[0], out_h, out_w, x.shape[3]), jnp.float32)
        window = {"stride_h": np.int64(strides[0]), "stride_w": np.int64(strides[1]), "pad_top": np.int64(pad),
                  "pad_left": np.int64(pad), "dilation_h": np.int64(1), "dilation_w": np.int64(1)}  # fmt: skip
        return jax.ffi.ffi_call(_BASELINE_TARGET, result)(
            x, w, bias, **window, activation=np.int64(ACTIVATIONS["hswish"])
        )

    return jax.jit(f)


def _timed(call: Callable[..., jax.Array], *args: jax.Array) -> Callable[[], object]:
    return lambda: call(*args).block_until_ready()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(LAYERS), default="ppocr-rec")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--cpu-time", action="store_true", help="time by the process's CPU time")
    parser.add_argument("--baseline", metavar="REV", help="also time the fused kernel's source at git revision REV")
    args = parser.parse_args()
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one CPU (before XLA sizes its thread pool)
    for target in (TARGET, FUSED_TARGET):
        if not native.available(target):
            raise SystemExit(f"the native kernel {target} did not build here (see the log)")
    if args.baseline:
        _register_baseline(args.baseline)
    clock = time.process_time if args.cpu_time else time.perf_counter
    rng = np.random.default_rng(0)
    rows, totals = [], {"XLA": 0.0, "native": 0.0, "fused": 0.0}
    if args.baseline:
        totals["baseline"] = 0.0
    for channels, height, width, kernel, strides, count in LAYERS[args.model]:
        x = jnp.asarray(rng.standard_normal((1, height, width, channels), np.float32))
        w = jnp.asarray(rng.standard_normal((kernel, kernel, 1, channels), np.float32))
        bias = jnp.asarray(rng.standard_normal(channels, np.float32))
        calls = {name: _layer(kernel, strides, name == "native") for name in ("XLA", "native")}
        calls["fused"] = _fused_layer(kernel, strides)
        if args.baseline:
            calls["baseline"] = _baseline_layer(kernel, strides)
        for name in calls.keys() - {"XLA"}:
            np.testing.assert_allclose(calls[name](x, w, bias), calls["XLA"](x, w, bias), rtol=1e-4, atol=1e-4)
        times = measure({name: _timed(call, x, w, bias) for name, call in calls.items()}, args.runs, 5, clock=clock)
        medians = {name: float(np.median(t)) * 1e6 for name, t in times.items()}
        for name in totals:
            totals[name] += medians[name] * count
        layer = f"{channels}x{height}x{width} {kernel}x{kernel} /{strides[0]},{strides[1]} x{count}"
        rows.append(_row(layer, medians))
    rows.append(_row("model total", totals))
    print(f"{args.model}: depthwise + bias + hardswish, median us ({'CPU' if args.cpu_time else 'wall'} time)")
    columns = [("layer", "layer"), ("XLA", "XLA us"), ("native", "native us"), ("fused", "fused us")]
    columns += [("ratio", "native/XLA"), ("fused_ratio", "fused/XLA")]
    if args.baseline:
        columns += [("baseline", f"{args.baseline} fused us"), ("against_baseline", f"fused/{args.baseline}")]
    print_table(columns, rows)


def _row(layer: str, medians: dict[str, float]) -> dict[str, object]:
    row: dict[str, object] = {"layer": layer, **medians, "ratio": medians["native"] / medians["XLA"],
                              "fused_ratio": medians["fused"] / medians["XLA"]}  # fmt: skip
    if "baseline" in medians:
        row["against_baseline"] = medians["fused"] / medians["baseline"]
    return row


if __name__ == "__main__":
    main()
