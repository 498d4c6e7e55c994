"""The kit's plumbing: the pytest plugin stays inert without --device, the Python entry point, the
report's totals, and the comparison helpers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hetero_sdk.conformance as kit
from hetero_sdk.conformance.compare import mismatches, tolerance
from hetero_sdk.conformance.report import Recorder

from .kit import REPO


def _pytest(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )


def test_the_plugin_does_nothing_in_other_test_runs(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("def test_one():\n    assert True\n")
    done = _pytest(["-q", str(tmp_path / "test_plain.py")], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "conformance" not in done.stdout
    assert "--device=DEVICE" in _pytest(["--help"], tmp_path).stdout


def test_the_kit_without_a_device_skips_every_check_and_says_why(tmp_path: Path) -> None:
    done = _pytest(["--pyargs", "hetero_sdk.conformance", "-q", "-rs", "-k", "versions or Relu"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 skipped" in done.stdout and "needs a device" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--device", "TEMPLAT"], "no device 'TEMPLAT' is installed (installed: "),
        (["--device", "template"], "must be an UPPER_CASE name"),
        (["--device", "HETERO:TEMPLATE,NOPE"], "no device 'NOPE' is installed"),
        (["--device", "TEMPLATE", "--device-config", "[1]"], "--device-config must be a JSON object"),
        (["--device", "TEMPLATE", "--conformance-max-examples", "0"], "must be >= 1"),
    ],
)
def test_usage_errors_are_reported_before_anything_runs(tmp_path: Path, args: list[str], message: str) -> None:
    done = _pytest(["--pyargs", "hetero_sdk.conformance", *args], tmp_path)
    assert done.returncode == 4, done.stdout + done.stderr
    assert message in done.stderr


def test_run_passes_options_and_returns_the_exit_code(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.json"
    status = kit.run("TEMPLATE", extra_args=["-k", "get_versions or Relu"], report_json=report, profile="ci")
    assert status == 0, capfd.readouterr().out[-3000:]
    data = json.loads(report.read_text())
    assert data["device"] == "TEMPLATE" and data["profile"] == "ci"
    assert sorted(c["id"] for c in data["checks"]) == [
        "test_ops.py::test_claimed_op_matches_template[Relu]",
        "test_plugin_core.py::test_get_versions_has_one_entry_with_build_number_and_description",
    ]
    assert all(c["outcome"] == "passed" for c in data["checks"])
    with pytest.raises(ValueError, match="ci, thorough"):
        kit.run("TEMPLATE", profile="fastest")


def test_command_line_spells_every_option(tmp_path: Path) -> None:
    command = kit.command_line(
        "XLA",
        extra_args=["-x"],
        xfail_file="x.txt",
        report_json="r.json",
        profile="thorough",
        device_config={"PERF_COUNT": True},
    )
    assert command[1:] == [
        "-P", "-m", "pytest", "--pyargs", "hetero_sdk.conformance", "--device", "XLA",
        "--conformance-profile", "thorough", "-p", "no:cacheprovider",
        "--conformance-xfails", "x.txt", "--conformance-report", "r.json",
        "--device-config", '{"PERF_COUNT": true}', "-x",
    ]  # fmt: skip


def _report(nodeid: str, when: Any, outcome: Any, longrepr: Any = None, **extra: Any) -> pytest.TestReport:
    report = pytest.TestReport(nodeid, ("f.py", 1, "t"), {}, outcome, longrepr, when)
    for key, value in extra.items():
        setattr(report, key, value)
    return report


def test_recorder_folds_phases_into_one_outcome_per_check() -> None:
    recorder = Recorder("DEV", "ci", None)
    cases: dict[str, list[tuple[str, str, Any, dict[str, Any]]]] = {
        "a": [("setup", "passed", None, {}), ("call", "passed", None, {}), ("teardown", "passed", None, {})],
        "b": [("setup", "passed", None, {}), ("call", "failed", "AssertionError: boom", {})],
        "c": [("setup", "failed", "fixture broke", {})],
        "d": [("setup", "skipped", ("f.py", 1, "Skipped: no case recipe for X"), {})],
        "e": [("call", "skipped", ("f.py", 1, "x"), {"wasxfail": "known"})],
        "f": [("call", "failed", "[XPASS(strict)] now passes: remove it from the file", {})],
        "g": [("call", "passed", None, {}), ("teardown", "failed", "teardown broke", {})],
    }
    for name, phases in cases.items():
        recorder.add_check(name, name, "Plugin and Core" if name < "d" else "Infer requests", mandatory=name != "b")
        for when, outcome, longrepr, extra in phases:
            recorder.pytest_runtest_logreport(_report(name, when, outcome, longrepr, **extra))
    outcomes = {k: (r.outcome, r.message) for k, r in recorder.records.items()}
    assert outcomes == {
        "a": ("passed", ""),
        "b": ("failed", "AssertionError: boom"),
        "c": ("error", "fixture broke"),
        "d": ("skipped", "no case recipe for X"),
        "e": ("xfailed", "known"),
        "f": ("xpassed", "[XPASS(strict)] now passes: remove it from the file"),
        "g": ("error", "teardown broke"),
    }
    totals = recorder.totals()
    assert totals["Plugin and Core"] == {
        "passed": 1, "failed": 1, "error": 1, "xfailed": 0, "xpassed": 0, "skipped": 0,
        "mandatory_failed": 1, "total": 3,
    }  # fmt: skip
    assert totals["all"]["mandatory_failed"] == 3 and totals["all"]["total"] == 7
    assert totals["HETERO with this device"]["total"] == 0


def test_tolerances_and_mismatches() -> None:
    assert tolerance("f32") == (1e-5, 1e-6)
    assert tolerance(np.int32, "transcendental") == (0.0, 0.0)
    assert tolerance("f32", "accumulate", 100)[0] == pytest.approx(1e-5 * 10 * 10)
    want = [np.array([1.0, 2.0], np.float32), np.array([1, 2], np.int32)]
    assert mismatches([np.array([1.0, 2.0000001], np.float32), np.array([1, 2], np.int32)], want, 1e-5, 1e-6) == []
    problems = mismatches([np.array([1.0, 2.1], np.float32), np.array([1, 3], np.int32)], want, 1e-5, 1e-6)
    assert len(problems) == 2 and "first at [1]" in problems[0] and "got 3, expected 2" in problems[1]
    assert "shape [1]" in mismatches([np.array([1.0], np.float32), want[1]], want, 1e-5, 1e-6)[0]
    assert "element type float64" in mismatches([want[0].astype(np.float64), want[1]], want, 1e-5, 1e-6)[0]
    assert "returned 1 outputs" in mismatches([want[0]], want, 1e-5, 1e-6)[0]
