"""Latency measurement shared by the benchmarks: interleaved rounds, medians and p90s, a plain table.

Candidates are timed in interleaved rounds, so load from outside the benchmark (shared machines) falls
on all of them alike and ratios stay meaningful (see :func:`measure`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "THREAD_VARIABLES", "environment", "jax_environment", "measure", "on_off_row", "one_cpu_clock", "paired_overhead",
    "pass_off", "peak_rss_bytes", "percentile", "print_table", "summary",
]  # fmt: skip

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
"""The variables each benchmark sets to 1 before numpy loads its BLAS."""


def measure(
    candidates: Mapping[str, Callable[[], Any]],
    runs: int,
    warmup: int,
    block: int = 10,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, list[float]]:
    """Seconds per call of each candidate: ``runs`` timed calls each, after ``warmup`` untimed ones,
    on ``clock`` (wall time by default; ``time.process_time``, the CPU time of every thread of the
    process, leaves out the time a loaded machine keeps the process waiting for a core).

    The calls come in rounds; in each round every candidate, in a rotating order, makes one untimed
    call and then up to ``block`` timed ones back to back. The untimed call absorbs the cost of
    switching runtimes (caches, and thread pools that another runtime's spinning workers kept off
    the CPU or that went to sleep), so the figures are back-to-back latencies, as OpenVINO's
    benchmark_app measures them.
    """
    names = list(candidates)
    times: dict[str, list[float]] = {name: [] for name in names}
    for name in names:
        for _ in range(warmup):
            candidates[name]()
    round_ = 0
    while any(len(t) < runs for t in times.values()):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            call, timed = candidates[name], times[name]
            if len(timed) >= runs:
                continue
            call()
            for _ in range(min(block, runs - len(timed))):
                start = clock()
                call()
                timed.append(clock() - start)
        round_ += 1
    return times


def paired_overhead(
    candidates: Mapping[str, Callable[[], Any]],
    reference: str,
    runs: int,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """Median microseconds each candidate takes over ``reference``, from ``runs`` rounds in which every
    candidate makes one call, in an order shuffled each round (seeded), and each call is paired with
    the reference's call of the same round.

    The host's drift between rounds (another tenant, clocks) falls on both calls of a pair and cancels in
    their difference, where the medians of separate blocks (:func:`measure`) keep it: on a shared or
    virtualised host a wrapper's few microseconds over what it wraps are only seen this way.
    """
    names = list(candidates)
    order, shuffle = names[:], random.Random(0).shuffle
    took: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(runs):
        shuffle(order)
        for name in order:
            call = candidates[name]
            start = clock()
            call()
            took[name].append(clock() - start)
    base = took[reference]
    return {
        name: statistics.median(t - b for t, b in zip(took[name], base)) * 1e6 for name in names if name != reference
    }


@contextlib.contextmanager
def pass_off(pass_class: type) -> Iterator[None]:
    """``pass_class`` (a graph pass) matches nothing inside: a model compiled there lacks that one change, so a
    bench times a whole model with and without it in one process (``apply`` is looked up when passes run)."""
    saved = pass_class.apply  # type: ignore[attr-defined]
    pass_class.apply = lambda self, model, node, users: False  # type: ignore[attr-defined]
    try:
        yield
    finally:
        pass_class.apply = saved  # type: ignore[attr-defined]


def one_cpu_clock(cpu_time: bool) -> Callable[[], float]:
    """Pins this process to its first CPU (call it before XLA sizes its thread pool: before the first compile)
    and returns the clock to time by: the process's CPU time with ``cpu_time``, else wall time."""
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    return time.process_time if cpu_time else time.perf_counter


def on_off_row(label: str, feeds: Mapping[str, Any], requests: Mapping[str, Any], runs: int,
               clock: Callable[[], float]) -> dict[str, Any]:  # fmt: skip
    """One table row comparing two infer requests of one model, ``{"off": ..., "on": ...}`` by any two names
    (the first the baseline): each one's median ms over ``runs`` interleaved calls on ``feeds``, the second's
    over the first's, and the largest difference between their outputs."""
    (off, off_request), (on, on_request) = requests.items()
    got = [[np.asarray(v) for v in r.infer(feeds).values()] for r in (off_request, on_request)]
    error = max(float(np.abs(a - b).max()) for a, b in zip(*got))
    calls = {name: (lambda r=request: r.infer(feeds)) for name, request in requests.items()}
    medians = {name: float(np.median(t)) * 1e3 for name, t in measure(calls, runs, 5, clock=clock).items()}
    shape = "x".join(str(d) for d in next(iter(feeds.values())).shape)
    return {"model": f"{label} {shape}", **medians, "ratio": medians[on] / medians[off], "error": error}


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) by linear interpolation, as numpy's default."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summary(values: Sequence[float]) -> dict[str, float]:
    """Median and p90 in microseconds."""
    return {"median_us": statistics.median(values) * 1e6, "p90_us": percentile(values, 90) * 1e6}


def device_peak_bytes(compiled: Any, shapes: Sequence[Sequence[int]] | None = None) -> int | None:
    """The memory a compiled model reports for one inference, or None when it reports none: TEMPLATE's
    ``TEMPLATE_PEAK_MEMORY`` (inputs and intermediates alive at once, last inference), the XLA
    executable's arguments + outputs + temporaries (XLA's buffer assignment, for input ``shapes``)."""
    reported = compiled.get_property_or("TEMPLATE_PEAK_MEMORY", None)
    if reported is not None:
        return int(reported)
    executable = getattr(compiled, "jax_executable", None)
    if executable is None:
        return None
    stats = executable(shapes).memory_analysis()
    if stats is None:
        return None
    return int(stats.argument_size_in_bytes + stats.output_size_in_bytes + stats.temp_size_in_bytes)


def environment() -> dict[str, Any]:
    """What the figures depend on: versions, CPU count, the thread variables, and the BLAS kernels numpy runs."""
    import numpy as np

    from template_plugin.blas import describe as describe_blas

    info: dict[str, Any] = {
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "threads": {v: os.environ.get(v) for v in THREAD_VARIABLES},
        # OpenBLAS runs the kernels OPENBLAS_CORETYPE names instead of the detected CPU's (some machines
        # set Haswell for older builds): TEMPLATE's and numpy's figures depend on them, the others' do not
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "blas": describe_blas(),
    }
    for module in ("onnxruntime", "openvino"):
        try:
            info[module] = __import__(module).__version__
        except ImportError:
            info[module] = None
    return info


def jax_environment() -> dict[str, Any]:
    """What a JAX benchmark's figures depend on: versions, the JAX device, CPU count and the thread
    variables with ``XLA_FLAGS`` (without importing OpenVINO, whose exit hook forks under JAX's threads)."""
    import jax
    import numpy as np

    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "jax": jax.__version__,
        "device": f"{jax.devices()[0].device_kind} ({jax.default_backend()})",
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "threads": {v: os.environ.get(v) for v in (*THREAD_VARIABLES, "XLA_FLAGS")},
    }


def peak_rss_bytes() -> int:
    """This process's peak resident bytes: Linux's ``VmHWM``, which starts afresh at ``exec`` (its
    ``ru_maxrss`` keeps the parent's peak across ``exec``, so a child started by a large parent would
    report the parent's figure); elsewhere ``ru_maxrss``."""
    status = "/proc/self/status"
    if os.path.exists(status):
        with open(status) as lines:
            for line in lines:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)  # bytes on macOS, KiB elsewhere


def print_table(columns: Sequence[tuple[str, str]], rows: Sequence[Mapping[str, Any]]) -> None:
    """Prints ``rows`` under ``columns`` (key, heading): text left-aligned, numbers right-aligned; floats
    whose key ends in ``_us`` without decimals, sizes whose key ends in ``_bytes`` in MiB with one,
    others (ratios) with two."""

    def cell(key: str, value: Any) -> str:
        if value is None:
            return "-"
        if key.endswith("_bytes") and isinstance(value, (int, float)):
            return f"{value / 2**20:.1f}"
        if isinstance(value, float):
            return f"{value:.0f}" if key.endswith("_us") else f"{value:.2f}" if value >= 0.01 else f"{value:.1e}"
        return str(value)

    text = [[cell(key, row.get(key)) for key, _ in columns] for row in rows]
    widths = [max([len(head), *(len(r[i]) for r in text)]) for i, (_, head) in enumerate(columns)]
    left = [bool(rows) and isinstance(rows[0].get(key), str) for key, _ in columns]
    for line in [[head for _, head in columns], *text]:
        print("  ".join(c.ljust(w) if lj else c.rjust(w) for c, w, lj in zip(line, widths, left)).rstrip())


def bench_arguments(description: str, models: Sequence[str], runs: int) -> argparse.ArgumentParser:
    """The options every benchmark takes: ``--models``, ``--runs``, ``--warmup`` and ``--json``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--models", nargs="+", choices=list(models), default=list(models))
    parser.add_argument("--runs", type=int, default=runs, help="timed calls per candidate (median is reported)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed calls per candidate first")
    parser.add_argument("--json", help="also write the rows as JSON to this file")
    return parser


def write_report(path: str | None, args: argparse.Namespace, env: Mapping[str, Any], **sections: Any) -> None:
    """Writes the environment, the arguments and ``sections`` as JSON to ``path`` (nothing when None)."""
    if path:
        with open(path, "w") as f:
            json.dump({"environment": dict(env), "args": vars(args), **sections}, f, indent=2)
