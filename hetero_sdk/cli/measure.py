"""Timing loops and their statistics, as OpenVINO's benchmark_app measures: sync (one request, one
inference after another) or async (several requests in flight), stopped by iterations or time."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetero_sdk.cli.output import Progress
from hetero_sdk.runtime import AsyncInferQueue, CompiledModel, InferRequest, ProfilingInfo

__all__ = ["Timing", "perf_counters", "run_async", "run_sync"]

PERCENTILES = (90, 99)


@dataclass(frozen=True)
class Timing:
    """What a timing loop measured.

    :ivar latencies_ms: each inference's latency (start to completion), in completion order.
    :ivar duration_s: from the first start to the last completion.
    :ivar requests: the requests used (their profiling info is the last inference's).
    :ivar interrupted: Ctrl-C stopped the loop early; the figures cover the inferences done by then.
    """

    api: str
    nireq: int
    latencies_ms: list[float]
    duration_s: float
    requests: list[InferRequest]
    interrupted: bool = False

    @property
    def iterations(self) -> int:
        """The number of inferences that completed."""
        return len(self.latencies_ms)

    @property
    def throughput_fps(self) -> float:
        """Inferences per second over the whole run."""
        return self.iterations / self.duration_s if self.duration_s > 0 else 0.0

    def latency_stats(self) -> dict[str, float]:
        """``median``, ``average``, ``min``, ``max`` and ``p90``/``p99`` latencies in milliseconds."""
        values = np.asarray(self.latencies_ms, dtype=np.float64)
        if values.size == 0:
            return {}
        stats = {
            "median": float(np.median(values)),
            "average": float(values.mean()),
            "min": float(values.min()),
            "max": float(values.max()),
        }
        stats.update({f"p{p}": float(np.percentile(values, p)) for p in PERCENTILES})
        return stats


def _feed(inputs: Mapping[str, np.ndarray]) -> dict[Any, Any]:
    return dict(inputs)


def _keep_going(started: int, niter: int | None, deadline: float | None) -> bool:
    if niter is not None and started >= niter:
        return False
    return deadline is None or time.perf_counter() < deadline


def run_sync(
    compiled: CompiledModel,
    inputs: Mapping[str, np.ndarray],
    niter: int | None,
    time_limit: float | None,
    bar: Progress,
) -> Timing:
    """Runs inferences one after another on one request until ``niter`` or ``time_limit`` (the
    first reached; at least one inference)."""
    request = compiled.create_infer_request()
    request.set_input_tensors(_feed(inputs))
    latencies: list[float] = []
    begin = time.perf_counter()
    deadline = None if time_limit is None else begin + time_limit
    interrupted = False
    try:
        while not latencies or _keep_going(len(latencies), niter, deadline):
            started = time.perf_counter()
            request.infer()
            latencies.append((time.perf_counter() - started) * 1e3)
            bar.advance()
    except KeyboardInterrupt:  # Ctrl-C: report what was measured, as benchmark_app does
        interrupted = True
    return Timing("sync", 1, latencies, time.perf_counter() - begin, [request], interrupted)


def run_async(
    compiled: CompiledModel,
    input_sets: Sequence[Mapping[str, np.ndarray]],
    nireq: int,
    niter: int | None,
    time_limit: float | None,
    bar: Progress,
) -> Timing:
    """Keeps ``nireq`` requests in flight through an :class:`~hetero_sdk.AsyncInferQueue` until
    ``niter`` inferences have started or ``time_limit`` has passed, then waits for all of them.
    Request ``k`` is fed ``input_sets[k % len(input_sets)]`` once, as benchmark_app fills its requests."""
    queue = AsyncInferQueue(compiled, nireq)
    for k, request in enumerate(queue):
        request.set_input_tensors(_feed(input_sets[k % len(input_sets)]))
    latencies: list[float] = []
    lock = threading.Lock()

    def done(request: InferRequest, started: float) -> None:
        latency = (time.perf_counter() - started) * 1e3
        with lock:
            latencies.append(latency)

    queue.set_callback(done)
    begin = time.perf_counter()
    deadline = None if time_limit is None else begin + time_limit
    started = 0
    interrupted = False
    try:
        while not started or _keep_going(started, niter, deadline):
            queue.start_async(userdata=time.perf_counter())
            started += 1
            bar.advance()
    except KeyboardInterrupt:  # Ctrl-C: let the requests in flight finish, then report
        interrupted = True
    queue.wait_all()
    return Timing("async", len(queue), latencies, time.perf_counter() - begin, list(queue), interrupted)


def perf_counters(requests: Sequence[InferRequest]) -> dict[str, list[dict[str, Any]]]:
    """The ``PERF_COUNT`` rows of each request's last inference, averaged over the requests.

    :returns: ``subgraphs`` (HETERO's per-subgraph totals) and ``ops`` (every
        other row), each row with ``name``, ``type``, ``exec_type``, ``status``, ``real_time_ms``,
        ``cpu_time_ms`` and ``count`` (how many requests reported it), in first-seen order.
    """
    merged: dict[str, list[ProfilingInfo]] = {}
    for request in requests:
        for row in request.get_profiling_info():
            merged.setdefault(row.node_name, []).append(row)
    result: dict[str, list[dict[str, Any]]] = {"subgraphs": [], "ops": []}
    for name, rows in merged.items():
        first = rows[0]
        entry = {
            "name": name,
            "type": first.node_type,
            "exec_type": first.exec_type,
            "status": str(first.status),
            "real_time_ms": sum(r.real_time.total_seconds() for r in rows) * 1e3 / len(rows),
            "cpu_time_ms": sum(r.cpu_time.total_seconds() for r in rows) * 1e3 / len(rows),
            "count": len(rows),
        }
        result["subgraphs" if first.node_type == "Subgraph" else "ops"].append(entry)
    return result
