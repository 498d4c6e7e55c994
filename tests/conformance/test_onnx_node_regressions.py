"""No ONNX backend node test regresses on TEMPLATE or XLA: every case that does not pass is listed in
the device's shipped expected-failures file (``hetero_sdk/conformance/onnx_node/expected/``).

TEMPLATE runs all 1,884 cases (about 35 s with two workers); XLA, which compiles every case, runs a
fixed quarter of them (every fourth case by name, about a minute). The full runs are one command each:
``hetero-sdk onnx-tests TEMPLATE`` and ``hetero-sdk onnx-tests XLA``.
"""

from __future__ import annotations

import warnings

import pytest

from hetero_sdk.conformance.onnx_node import judge, read, run_node_tests, shipped_file
from hetero_sdk.plugin.discovery import discover

SAMPLES = {"TEMPLATE": None, "XLA": (1, 4)}
"""The cases each device runs here: all, or ``(i, n)``: the i-th of every n by name."""


@pytest.mark.parametrize("device", sorted(SAMPLES))
def test_no_node_test_regresses(device: str) -> None:
    if device not in discover():
        pytest.skip(f"{device} is not installed")
    path = shipped_file(device)
    assert path is not None, f"no expected-failures file ships for {device}"
    run = run_node_tests(device, shard=SAMPLES[device], jobs=2)
    verdict = judge(run.results, read(path))
    if verdict.unexpected_passes:
        passing = verdict.unexpected_passes
        warnings.warn(
            f"{device}: {len(passing)} listed node test(s) now pass ({', '.join(passing[:10])}...): "
            f"remove them with 'hetero-sdk onnx-tests {device} --update-expected'",
            stacklevel=1,
        )
    regressions = [f"{name}: {run.results[name].status}: {run.results[name].reason}" for name in verdict.regressions]
    assert not regressions, f"{device}: node tests that no longer pass (not listed in {path}):\n" + "\n".join(
        regressions
    )
