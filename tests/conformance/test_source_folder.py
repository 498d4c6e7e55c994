"""Running the kit from a plugin's own source folder: a folder named like the plugin's module shadows
the installed package under plain ``python -m pytest`` (the device is then unavailable, and the
message names the file that was imported), while ``hetero-sdk conformance`` (:func:`run`) runs
Python with ``-P`` and checks the installed device."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hetero_sdk.conformance import command_line

from .kit import REPO

CHECK = "test_get_versions_has_one_entry_with_build_number_and_description"


@pytest.fixture
def installed(tmp_path: Path) -> Path:
    """A site folder holding an installed ``shadowdev`` distribution (its entry point SHADOWDEV names the
    tests' MINI device) and, as the working folder, a source checkout whose ``shadowdev`` lacks it."""
    site = tmp_path / "site"
    (site / "shadowdev").mkdir(parents=True)
    (site / "shadowdev" / "__init__.py").write_text("from tests.conformance.bad_plugins import MiniDevice\n")
    info = site / "shadowdev-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shadowdev\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[hetero_sdk.devices]\nSHADOWDEV = shadowdev:MiniDevice\n")
    checkout = tmp_path / "checkout"
    (checkout / "shadowdev").mkdir(parents=True)
    (checkout / "shadowdev" / "__init__.py").write_text("# the source folder, not the installed package\n")
    return site


def _run(command: list[str], site: Path, report: Path) -> tuple[int, str, dict]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    done = subprocess.run(command, cwd=site.parent / "checkout", env=env, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr, json.loads(report.read_text())


def _check(report: dict) -> dict:
    return next(c for c in report["checks"] if c["id"].endswith(CHECK))


def test_plain_pytest_in_the_source_folder_names_the_shadowing_file(installed: Path, tmp_path: Path) -> None:
    report = tmp_path / "plain.json"
    command = [sys.executable, "-m", "pytest", "--pyargs", "hetero_sdk.conformance", "--device", "SHADOWDEV"]
    command += ["-p", "no:cacheprovider", "-q", "-k", CHECK, "--conformance-report", str(report)]
    status, output, data = _run(command, installed, report)
    assert status == 1, output[-3000:]
    check = _check(data)
    assert check["outcome"] in ("error", "failed")  # the device did not load
    shadow = str(tmp_path / "checkout" / "shadowdev" / "__init__.py")
    assert "has no attribute 'MiniDevice'" in check["message"], check["message"]
    assert shadow in check["message"] and "python -P" in check["message"]


def test_the_kit_runner_is_isolated_and_checks_the_installed_device(installed: Path, tmp_path: Path) -> None:
    report = tmp_path / "isolated.json"
    command = command_line("SHADOWDEV", report_json=report, extra_args=["-q", "-k", CHECK])
    assert command[1:3] == ["-P", "-m"]
    status, output, data = _run(command, installed, report)
    assert status == 0, output[-3000:]
    assert _check(data)["outcome"] == "passed"
