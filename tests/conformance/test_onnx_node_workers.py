"""The node test workers: each sets :data:`WORKER_ENVIRONMENT` before building its runner (so that
workers sharing a GPU do not each take most of its memory), and leaves a value the user set alone."""

from __future__ import annotations

import functools
import os

import pytest

from hetero_sdk.conformance.onnx_node import run_node_tests
from hetero_sdk.conformance.onnx_node.execute import DeviceRunner
from hetero_sdk.conformance.onnx_node.pool import WORKER_ENVIRONMENT

VARIABLE = "XLA_PYTHON_CLIENT_PREALLOCATE"


def runner_expecting(value: str) -> DeviceRunner:
    """A TEMPLATE runner, built only in a worker whose environment holds ``VARIABLE=value`` (otherwise
    the worker dies and its case is an error)."""
    found = os.environ.get(VARIABLE)
    if found != value:
        raise RuntimeError(f"{VARIABLE} is {found!r} in the worker, not {value!r}")
    return DeviceRunner("TEMPLATE")


@pytest.mark.parametrize("users", [None, "true"], ids=["unset", "set-by-the-user"])
def test_workers_keep_accelerator_memory_for_each_other(monkeypatch: pytest.MonkeyPatch, users: str | None) -> None:
    if users is None:
        monkeypatch.delenv(VARIABLE, raising=False)
    else:
        monkeypatch.setenv(VARIABLE, users)
    expected = users or WORKER_ENVIRONMENT[VARIABLE]
    run = run_node_tests("TEMPLATE", include="^test_abs$", factory=functools.partial(runner_expecting, expected))
    assert {name: result.status for name, result in run.results.items()} == {"test_abs": "passed"}
