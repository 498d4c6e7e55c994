"""AUTO's time to first inference, with and without the startup fallback (OpenVINO's accelerated first
inference).

Usage::

    python bench/bench_auto.py                                   # mlp, cnn and transformer, 7 rounds
    python bench/bench_auto.py --models cnn --runs 15 --json bench/results/auto.json

Each round compiles a fresh model and times ``compile_model`` plus the first inference, four ways:

- ``AUTO fallback``: ``AUTO:XLA,TEMPLATE`` with ``ENABLE_STARTUP_FALLBACK=True`` (the default): XLA
  compiles in a background thread while TEMPLATE (which compiles in milliseconds) serves the first
  inference; ``switch s`` is the time from the start of ``compile_model`` until XLA serves requests;
- ``AUTO no fallback``: the same with ``ENABLE_STARTUP_FALLBACK=False``: the first inference waits for
  XLA's compile;
- ``XLA`` and ``TEMPLATE``: each device alone, for reference.

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
from timing import bench_arguments, jax_environment, percentile, print_table, write_report  # noqa: E402

import hetero_sdk as hs  # noqa: E402
from hetero_sdk.auto import AutoCompiledModel, AutoPlugin  # noqa: E402
from template_plugin import TemplatePlugin  # noqa: E402

TEMPLATE_CONFIG = {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY"}
MODES: dict[str, tuple[str, dict[str, Any]]] = {
    "AUTO fallback": ("AUTO:XLA,TEMPLATE", {"ENABLE_STARTUP_FALLBACK": True}),
    "AUTO no fallback": ("AUTO:XLA,TEMPLATE", {"ENABLE_STARTUP_FALLBACK": False}),
    "XLA": ("XLA", {}),
    "TEMPLATE": ("TEMPLATE", TEMPLATE_CONFIG),
}
"""Mode name -> (device, compile config)."""


def first_inference(core: hs.Core, bench_model: BenchModel, device: str, config: dict[str, Any]) -> dict[str, Any]:
    """Compiles a fresh model, runs one inference and checks it; the times in seconds."""
    x = bench_model.sample_input()
    if device.startswith("AUTO"):
        config = {**config, "DEVICE_PROPERTIES": {"TEMPLATE": TEMPLATE_CONFIG}}
    model = bench_model.build()
    start = time.perf_counter()
    compiled = core.compile_model(model, device, config)
    compiled_at = time.perf_counter()
    result = compiled({bench_model.input_name: x})[0]
    first_at = time.perf_counter()
    served_by = ",".join(compiled.get_property("EXECUTION_DEVICES"))
    switch = None
    if isinstance(compiled, AutoCompiledModel):
        compiled.wait_for_selected_device()
        switch = time.perf_counter() - start
    np.testing.assert_allclose(result, bench_model.numpy(x), rtol=1e-4, atol=1e-4, err_msg=f"{bench_model.name}")
    compiled.release()
    return {
        "ttfi": first_at - start,
        "compile": compiled_at - start,
        "switch": switch,
        "served_by": served_by,
    }


def bench(models: list[str], rounds: int) -> list[dict[str, Any]]:
    """``rounds`` fresh compiles per (model, mode); one row per (model, mode)."""
    core = hs.Core(plugins={"XLA": XlaPlugin, "TEMPLATE": TemplatePlugin, "AUTO": AutoPlugin}, autoload=False)
    rows: list[dict[str, Any]] = []
    for name in models:
        bench_model = MODELS[name]()
        for device, config in MODES.values():  # warm up: imports, kernels, first traces
            first_inference(core, bench_model, device, config)
        samples: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
        for round_ in range(rounds):
            order = list(MODES)
            shift = round_ % len(order)
            for mode in order[shift:] + order[:shift]:
                samples[mode].append(first_inference(core, bench_model, *MODES[mode]))
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
    }


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = bench_arguments(__doc__.splitlines()[0], MODELS, runs=7)
    args = parser.parse_args(argv)  # --runs: fresh compiles per model and mode
    rows = bench(args.models, args.runs)
    columns = [
        ("model", "model"),
        ("mode", "mode"),
        ("served_by", "first served by"),
        ("ttfi_ms", "first inference ms"),
        ("ttfi_p90_ms", "p90 ms"),
        ("compile_ms", "compile_model ms"),
        ("switch_ms", "switch ms"),
        ("speedup", "x faster"),
    ]
    device = f"{jax.devices()[0].device_kind} ({jax.default_backend()})"
    print(f"device: {device}, jax {jax.__version__}, {args.runs} fresh compiles per mode")
    print_table(columns, rows)
    write_report(args.json, args, jax_environment(), rows=rows)


if __name__ == "__main__":
    main()
