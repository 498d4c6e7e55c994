"""The conformance kit passes on RAY with TEMPLATE behind it, run as a plugin author runs it
(``pytest --pyargs hetero_sdk.conformance --device RAY``, in a subprocess), on the session's Ray."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")

FAST = ("--conformance-max-examples", "5")
"""As the SDK's own kit runs on TEMPLATE, HETERO and AUTO (tests/conformance/kit.py)."""


def test_ray_passes_every_mandatory_check_of_the_kit(ray_session: str, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "pytest", "--pyargs", "hetero_sdk.conformance", "--device", "RAY"]
    command += ["-p", "no:cacheprovider", "-q", "--conformance-report", str(report), *FAST]
    # one process and one Ray connection: faster than a forked worker per check (12 s against 20 s here)
    command += ["--conformance-isolation", "none"]
    env = {**os.environ, "RAY_ADDRESS": ray_session, "HETERO_SDK_RAY_TARGET_DEVICE": "TEMPLATE"}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    checks = json.loads(report.read_text())["checks"]
    assert not [c["id"] for c in checks if c["outcome"] in ("failed", "error", "xpassed")]
    assert sum(c["outcome"] == "passed" for c in checks if c["id"].startswith("test_ops.py::")) >= 60
    hetero = [c for c in checks if c["group"] == "HETERO with this device"]
    assert hetero and all(c["outcome"] == "passed" for c in hetero)
    skipped = [c for c in checks if c["mandatory"] and c["outcome"] == "skipped"]
    assert all(c["message"].startswith("no case recipe for") for c in skipped), skipped
    assert "RAY: every mandatory check passed" in done.stdout
