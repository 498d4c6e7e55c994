"""AUTO's time to first inference, with and without the startup fallback (OpenVINO's accelerated first
inference).

Usage::

    python bench/bench_auto.py                                   # mlp, cnn and transformer, 7 rounds
    python bench/bench_auto.py --models cnn --runs 15 --json bench/results/auto.json
    python bench/bench_auto.py --real ppocr-det --size 320 320 --runs 3 --fps-seconds 3   # a real detector

Each round compiles a fresh model and times ``compile_model`` plus the first inference, five ways:

- ``AUTO``: ``AUTO:XLA,TEMPLATE`` with ``ENABLE_STARTUP_FALLBACK=True`` (the default): TEMPLATE serves
  the first inferences while XLA compiles in a background thread only when AUTO's cost estimate says
  it is clearly quicker (a fresh AUTO each round: its default costs, not ones learnt in earlier
  rounds); ``switch s`` is the time from the start of ``compile_model`` until XLA serves requests;
- ``AUTO learnt``: the same, with one AUTO kept over the rounds (and the warm-up): it decides from the
  compile and inference times it measured before, as a process that compiles several models does;
- ``AUTO always fallback``: the same, with costs that always choose TEMPLATE first (AUTO before it
  chose from costs);
- ``AUTO no fallback``: the same with ``ENABLE_STARTUP_FALLBACK=False``: the first inference waits for
  XLA's compile;
- ``XLA`` and ``TEMPLATE``: each device alone, for reference.

``--real NAME`` benches one of ``bench/real_models.py``'s ONNX models instead (``--size H W`` sets its
image size); its first result is checked against ONNX Runtime's. ``--fps-seconds T`` also counts the
inferences run in the T seconds after ``compile_model`` returns (a short ``hetero-sdk benchmark -t T``).

Every first result is checked against the numpy forward pass. Medians and p90s over the rounds, in
milliseconds; one CPU thread for compute (XLA's Eigen pool off, BLAS variables at
1, TEMPLATE with ``INFERENCE_NUM_THREADS=1``); XLA's compile runs in its own thread beside it. The
modes alternate within a round, and each round waits for every background compile to end first.
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
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402
from hetero_sdk_jax import XlaPlugin  # noqa: E402
from models import MODELS, BenchModel  # noqa: E402
from real_models import MODELS as REAL_MODELS  # noqa: E402
from real_models import fetch, onnx_runtime_outputs  # noqa: E402
from timing import bench_arguments, jax_environment, percentile, print_table, write_report  # noqa: E402

import hetero_sdk as hs  # noqa: E402
from hetero_sdk.auto import AutoCompiledModel, AutoPlugin  # noqa: E402
from hetero_sdk.auto.priorities import DeviceKind  # noqa: E402
from hetero_sdk.auto.startup import DEFAULT_COSTS, CostBook, DeviceCosts  # noqa: E402
from template_plugin import TemplatePlugin  # noqa: E402

TEMPLATE_CONFIG = {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY"}
ALWAYS_FALLBACK = {
    **DEFAULT_COSTS,
    DeviceKind.HOST: DeviceCosts(1e6, 0.0, 1e10),
    DeviceKind.ACCELERATOR: DeviceCosts(1e6, 0.0, 1e12),
}
"""Costs under which the chosen device always looks slower to compile than TEMPLATE to run."""
MODES: dict[str, tuple[str, dict[str, Any]]] = {
    "AUTO": ("AUTO:XLA,TEMPLATE", {"ENABLE_STARTUP_FALLBACK": True}),
    "AUTO learnt": ("LEARNT:XLA,TEMPLATE", {"ENABLE_STARTUP_FALLBACK": True}),
    "AUTO always fallback": ("ALWAYS:XLA,TEMPLATE", {"ENABLE_STARTUP_FALLBACK": True}),
    "AUTO no fallback": ("AUTO:XLA,TEMPLATE", {"ENABLE_STARTUP_FALLBACK": False}),
    "XLA": ("XLA", {}),
    "TEMPLATE": ("TEMPLATE", TEMPLATE_CONFIG),
}
"""Mode name -> (device, compile config)."""


class RealBench:
    """A real ONNX model of ``bench/real_models.py`` behind :class:`BenchModel`'s interface, checked
    against ONNX Runtime (the reference, in the bench only)."""

    def __init__(self, name: str, size: list[int] | None) -> None:
        real = REAL_MODELS[name]
        self.name = name
        self.path = fetch(real)
        self.input_name, value = next(iter(real.feeds.items()))
        shape = value.shape if size is None else (*value.shape[:-2], *size)
        self.x = np.random.default_rng(1).random(shape).astype(value.dtype)
        self.expected = next(iter(onnx_runtime_outputs(self.path, {self.input_name: self.x}).values()))

    def sample_input(self) -> np.ndarray:
        """The input every round uses."""
        return self.x

    def build(self) -> hs.Model:
        """The model converted afresh, its input frozen at the bench's shape."""
        return hs.convert_model(self.path, input={self.input_name: list(self.x.shape)})

    def numpy(self, x: np.ndarray) -> np.ndarray:
        """ONNX Runtime's first output."""
        return self.expected


LEARNT = AutoPlugin()
"""The AUTO of the ``AUTO learnt`` mode, kept over the rounds."""


def fresh_core() -> hs.Core:
    """A Core whose AUTO has learnt nothing yet (as in a new process), and the kept ``LEARNT`` one."""
    return hs.Core(
        plugins={
            "XLA": XlaPlugin,
            "TEMPLATE": TemplatePlugin,
            "AUTO": AutoPlugin,
            "ALWAYS": lambda: AutoPlugin(CostBook(ALWAYS_FALLBACK)),
            "LEARNT": lambda: LEARNT,
        },
        autoload=False,
    )


def first_inference(
    bench_model: BenchModel | RealBench, device: str, config: dict[str, Any], fps_seconds: float = 0.0
) -> dict[str, Any]:
    """Compiles a fresh model, runs one inference and checks it, then infers for ``fps_seconds``; the
    times in seconds."""
    core = fresh_core()
    x = bench_model.sample_input()
    if not device.startswith(("XLA", "TEMPLATE")):
        config = {**config, "DEVICE_PROPERTIES": {"TEMPLATE": TEMPLATE_CONFIG}}
    model = bench_model.build()
    start = time.perf_counter()
    compiled = core.compile_model(model, device, config)
    compiled_at = time.perf_counter()
    result = compiled({bench_model.input_name: x})[0]
    first_at = time.perf_counter()
    served_by = ",".join(compiled.get_property("EXECUTION_DEVICES"))
    inferences = 1
    while time.perf_counter() < compiled_at + fps_seconds:
        compiled({bench_model.input_name: x})
        inferences += 1
    fps = inferences / (time.perf_counter() - compiled_at) if fps_seconds else None
    switch = None
    summary = None
    if isinstance(compiled, AutoCompiledModel):
        summary = compiled.get_property("AUTO_SERVING_SUMMARY")
        compiled.wait_for_selected_device()
        switch = time.perf_counter() - start
    np.testing.assert_allclose(result, bench_model.numpy(x), rtol=1e-3, atol=1e-3, err_msg=f"{bench_model.name}")
    compiled.release()
    return {
        "ttfi": first_at - start,
        "compile": compiled_at - start,
        "switch": switch,
        "served_by": served_by,
        "fps": fps,
        "summary": summary,
    }


def bench(
    models: list[str], rounds: int, real: str | None = None, size: list[int] | None = None, fps_seconds: float = 0.0
) -> list[dict[str, Any]]:
    """``rounds`` fresh compiles per (model, mode); one row per (model, mode)."""
    rows: list[dict[str, Any]] = []
    benches: list[BenchModel | RealBench] = [RealBench(real, size)] if real else [MODELS[n]() for n in models]
    for bench_model in benches:
        name = bench_model.name
        for device, config in MODES.values():  # warm up: imports, kernels, first traces
            first_inference(bench_model, device, config)
        samples: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
        for round_ in range(rounds):
            order = list(MODES)
            shift = round_ % len(order)
            for mode in order[shift:] + order[:shift]:
                samples[mode].append(first_inference(bench_model, *MODES[mode], fps_seconds))
        for mode, runs in samples.items():
            rows.append({"model": name, "mode": mode, **_stats(runs)})
        baseline = next(r for r in rows if r["model"] == name and r["mode"] == "AUTO no fallback")["ttfi_ms"]
        for row in rows:
            if row["model"] == name:
                row["speedup"] = baseline / row["ttfi_ms"]
    return rows


def _stats(runs: list[dict[str, Any]]) -> dict[str, Any]:
    def ms(values: list[float], how: Callable[[list[float]], float]) -> float:
        return how(values) * 1e3

    ttfi = [r["ttfi"] for r in runs]
    switches = [r["switch"] for r in runs if r["switch"] is not None]
    return {
        "ttfi_ms": ms(ttfi, statistics.median),
        "ttfi_p90_ms": ms(ttfi, lambda v: percentile(v, 90)),
        "compile_ms": ms([r["compile"] for r in runs], statistics.median),
        "switch_ms": ms(switches, statistics.median) if switches else None,
        "served_by": "/".join(sorted({r["served_by"] for r in runs})),
        "fps": statistics.median(fps) if (fps := [r["fps"] for r in runs if r["fps"] is not None]) else None,
        "fps_range": f"{min(fps):.1f}-{max(fps):.1f}" if fps else None,
        "summaries": [r["summary"] for r in runs if r["summary"]],
    }


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = bench_arguments(__doc__.splitlines()[0], MODELS, runs=7)
    parser.add_argument("--real", choices=list(REAL_MODELS), help="bench this real ONNX model instead")
    parser.add_argument("--size", nargs=2, type=int, metavar=("H", "W"), help="the real model's image size")
    parser.add_argument("--fps-seconds", type=float, default=0.0, help="also count inferences for T seconds")
    args = parser.parse_args(argv)  # --runs: fresh compiles per model and mode
    rows = bench(args.models, args.runs, args.real, args.size, args.fps_seconds)
    columns = [
        ("model", "model"),
        ("mode", "mode"),
        ("served_by", "first served by"),
        ("ttfi_ms", "first inference ms"),
        ("ttfi_p90_ms", "p90 ms"),
        ("compile_ms", "compile_model ms"),
        ("switch_ms", "switch ms"),
        ("speedup", "x faster"),
        ("fps", "FPS"),
        ("fps_range", "FPS range"),
    ]
    device = f"{jax.devices()[0].device_kind} ({jax.default_backend()})"
    print(f"device: {device}, jax {jax.__version__}, {args.runs} fresh compiles per mode")
    print_table(columns, rows)
    for row in rows:
        for summary in sorted(set(row["summaries"])):
            print(f"{row['model']} / {row['mode']}: {summary}")
    write_report(args.json, args, jax_environment(), rows=rows)


if __name__ == "__main__":
    main()
