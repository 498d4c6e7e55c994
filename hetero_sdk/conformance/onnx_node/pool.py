"""Running many cases in worker processes, so that a case that hangs or crashes its process is
killed and counted as an ``error`` without stopping the run. Workers are spawned (not forked: the
driver may have imported runtimes that started threads) and read each case from the cache by name."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import os
import time
import warnings
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from hetero_sdk.conformance.onnx_node.cases import load_case
from hetero_sdk.conformance.onnx_node.execute import CaseResult, CaseRunner, run_case

__all__ = ["WORKER_ENVIRONMENT", "RunnerFactory", "run_pool"]

RunnerFactory = Callable[[], CaseRunner]
"""Builds a worker's runner; it is pickled to the worker (a module-level function or class, or a
``functools.partial`` of one)."""

STARTUP_S = 120.0
"""Extra seconds a fresh worker's first case gets: the worker imports the SDK and loads the device."""


WORKER_ENVIRONMENT = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
"""Variables each worker sets before it builds its runner, where the user has not set them: the workers
share the machine's accelerators, and JAX's default of taking 75 % of a GPU's memory in every process
leaves the second and later workers none (``onnx-tests XLA --jobs 12`` with JAX's default on an H100:
1,741 of 1,884 cases errored, about all but one worker's share)."""


def _serve(factory: RunnerFactory, folder: Path, conn: Connection) -> None:
    logging.disable(logging.WARNING)
    # The cases' own data sets off warnings (JAX's "overflow encountered in cast" on ONNX's Cast
    # cases...), which would land in the middle of the table; a case's real problems are its result.
    warnings.simplefilter("ignore")
    for variable, value in WORKER_ENVIRONMENT.items():
        os.environ.setdefault(variable, value)
    runner = factory()
    while True:
        name = conn.recv()
        if name is None:
            return
        conn.send(run_case(runner, load_case(name, folder)))


class _Worker:
    def __init__(self, ctx: Any, factory: RunnerFactory, folder: Path) -> None:
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(factory, folder, child), daemon=True)
        self.process.start()
        child.close()
        self.case: str | None = None
        self.started = 0.0
        self.fresh = True

    def give(self, name: str) -> None:
        self.case, self.started = name, time.monotonic()
        self.conn.send(name)

    def stop(self) -> None:
        self.process.kill()
        self.process.join()


def run_pool(
    names: Sequence[str],
    factory: RunnerFactory,
    folder: Path,
    *,
    jobs: int = 1,
    timeout: float = 60.0,
    startup: float = STARTUP_S,
    on_result: Callable[[str, CaseResult], None] | None = None,
) -> dict[str, CaseResult]:
    """Each case's result, run by ``jobs`` worker processes with ``timeout`` seconds per case.

    :param names: the cases to run (in the cache ``folder``).
    :param factory: builds each worker's runner.
    :param on_result: called in this process as each case ends (a progress bar).
    """
    ctx = mp.get_context("spawn")
    pending = list(reversed(names))
    results: dict[str, CaseResult] = {}
    workers = [_Worker(ctx, factory, folder) for _ in range(max(1, min(jobs, len(names))))]
    for worker in workers:
        if pending:
            worker.give(pending.pop())
    try:
        while any(w.case for w in workers):
            wait([w.conn for w in workers if w.case], timeout=1.0)
            for index, worker in enumerate(workers):
                name = worker.case
                if name is None:
                    continue
                result, replace = _poll(worker, timeout, startup if worker.fresh else 0.0)
                if result is None:
                    continue
                results[name] = result
                if replace:
                    worker.stop()
                    worker = workers[index] = _Worker(ctx, factory, folder)
                else:
                    worker.fresh = False
                worker.case = None
                if on_result is not None:
                    on_result(name, result)
                if pending:
                    worker.give(pending.pop())
    finally:
        for worker in workers:
            _close(worker)
    return results


def _poll(worker: _Worker, timeout: float, extra: float) -> tuple[CaseResult | None, bool]:
    """The worker's result if its case ended (and whether the worker must be replaced), else None."""
    if worker.conn.poll():
        try:
            return worker.conn.recv(), False
        except EOFError:
            return CaseResult("error", "the worker died (crash)"), True
    if not worker.process.is_alive():
        return CaseResult("error", f"the worker died (exit {worker.process.exitcode})"), True
    if time.monotonic() - worker.started > timeout + extra:
        return CaseResult("error", f"timed out after {timeout:g} s", seconds=round(timeout, 3)), True
    return None, False


def _close(worker: _Worker) -> None:
    with contextlib.suppress(OSError):  # the worker is gone already
        worker.conn.send(None)
    worker.process.join(timeout=5)
    if worker.process.is_alive():
        worker.stop()
