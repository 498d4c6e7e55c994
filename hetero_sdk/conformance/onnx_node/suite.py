"""One node test run: select the cases from the cache, run them in worker processes on a device."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hetero_sdk.conformance.onnx_node.cases import CaseInfo, cache_dir, ensure_cache, select
from hetero_sdk.conformance.onnx_node.execute import CaseResult, DeviceRunner
from hetero_sdk.conformance.onnx_node.pool import RunnerFactory, run_pool

__all__ = ["NodeTestRun", "run_node_tests"]


@dataclass
class NodeTestRun:
    """A finished run.

    :ivar device: the device string the cases ran on.
    :ivar index: every case of the cache (the selection and the rest), with its op.
    :ivar results: each selected case's result.
    :ivar seconds: the run's wall time.
    """

    device: str
    index: dict[str, CaseInfo]
    results: dict[str, CaseResult]
    seconds: float


def run_node_tests(
    device: str,
    *,
    include: str | None = None,
    exclude: str | None = None,
    shard: tuple[int, int] | None = None,
    jobs: int = 1,
    timeout: float = 60.0,
    config: dict[str, Any] | None = None,
    factory: RunnerFactory | None = None,
    folder: Path | None = None,
    on_start: Callable[[int], None] | None = None,
    on_result: Callable[[str, CaseResult], None] | None = None,
) -> NodeTestRun:
    """Runs ONNX's node test cases whose names match ``include`` and not ``exclude`` on ``device``.

    :param device: a hetero-sdk device string (``TEMPLATE``, ``XLA``, ``HETERO:XLA,TEMPLATE``...).
    :param shard: ``(i, n)``: run only the i-th of every n selected cases (see :func:`.cases.select`).
    :param jobs: worker processes.
    :param timeout: seconds per case; a case past it is killed and counted as an ``error``.
    :param config: the compile configuration of every case.
    :param factory: builds each worker's runner, instead of a :class:`DeviceRunner` for ``device``.
    :param folder: the case cache (default: :func:`cache_dir`), generated when missing.
    :param on_start: called with the number of selected cases before they run.
    :param on_result: called as each case ends.
    """
    folder = folder or cache_dir()
    index = ensure_cache(folder)
    names = [info.name for info in select(index, include, exclude, shard)]
    if on_start is not None:
        on_start(len(names))
    start = time.perf_counter()
    factory = factory or functools.partial(DeviceRunner, device, config)
    results = run_pool(names, factory, folder, jobs=jobs, timeout=timeout, on_result=on_result) if names else {}
    return NodeTestRun(device, index, results, time.perf_counter() - start)
