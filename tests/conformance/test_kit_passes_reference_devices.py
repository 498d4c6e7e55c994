"""TEMPLATE, HETERO, AUTO and a small third-party device pass every mandatory check of the kit (HETERO with
its declared expected failures); XLA too when it is installed (slow)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hetero_sdk.plugin.discovery import discover

from .kit import KitRun, KitRuns, run_kit

GROUPS = ("Plugin and Core", "Compiled models", "Infer requests", "HETERO with this device")


def assert_passes_everything_mandatory(run: KitRun) -> None:
    assert run.returncode == 0, run.output[-4000:]
    assert not run.failing(), run.failing()
    assert run.report["groups"]["all"]["mandatory_failed"] == 0
    for check in run.checks.values():
        if check["mandatory"] and check["outcome"] == "skipped":
            assert check["message"].startswith(("no case recipe for", "does not list EXPORT_IMPORT")) or (
                "does not claim" in check["message"]
            ), check
    for group in GROUPS:
        counts = run.report["groups"][group]
        assert counts["total"] > 0
        assert counts["total"] == sum(counts[o] for o in ("passed", "failed", "error", "xfailed", "xpassed", "skipped"))


@pytest.mark.parametrize("name", ["template", "mini"])
def test_plain_devices_pass_every_check(kit_runs: KitRuns, name: str) -> None:
    run = kit_runs[name]
    assert_passes_everything_mandatory(run)
    hetero = [c for c in run.checks.values() if c["group"] == "HETERO with this device"]
    assert hetero and all(c["outcome"] == "passed" for c in hetero), hetero
    ops = [c for c in run.checks.values() if c["id"].startswith("test_ops.py::")]
    assert sum(c["outcome"] == "passed" for c in ops) >= 60
    assert f"{run.report['device']}: every mandatory check passed" in run.output


def test_hetero_passes_every_mandatory_check_without_expected_failures(kit_runs: KitRuns) -> None:
    run = kit_runs["hetero"]
    assert_passes_everything_mandatory(run)
    assert not [k for k, c in run.checks.items() if c["outcome"] in ("xfailed", "failed")]
    skipped = [c for c in run.checks.values() if c["group"] == "HETERO with this device"]
    assert all(c["outcome"] == "skipped" and "meta-device" in c["message"] for c in skipped)


def test_auto_passes_every_mandatory_check(kit_runs: KitRuns) -> None:
    run = kit_runs["auto"]
    assert_passes_everything_mandatory(run)
    assert not [k for k, c in run.checks.items() if c["outcome"] in ("xfailed", "failed")]
    ops = [c for c in run.checks.values() if c["id"].startswith("test_ops.py::")]
    assert sum(c["outcome"] == "passed" for c in ops) >= 60


@pytest.mark.slow
def test_xla_passes_every_mandatory_check(tmp_path: Path) -> None:
    if "XLA" not in discover():
        pytest.skip("hetero-sdk-jax (the XLA device) is not installed")
    assert_passes_everything_mandatory(run_kit("XLA", tmp_path, args=("--conformance-max-examples", "5")))
