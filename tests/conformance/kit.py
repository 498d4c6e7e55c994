"""Running the conformance kit in a subprocess, as a plugin author does, and reading its JSON report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PLUGINS = "tests.conformance.bad_plugins"


@dataclass
class KitRun:
    """One finished run: exit code, output and the parsed report."""

    returncode: int
    output: str
    report: dict[str, Any]
    directory: Path
    checks: dict[str, dict[str, Any]] = field(init=False)

    def __post_init__(self) -> None:
        self.checks = {c["id"]: c for c in self.report.get("checks", [])}

    def outcome(self, check: str) -> str:
        """The outcome of one check (KeyError naming the checks that ran)."""
        if check not in self.checks:
            raise KeyError(f"{check} did not run; ran: {sorted(self.checks)}\n{self.output[-3000:]}")
        return str(self.checks[check]["outcome"])

    def failing(self) -> dict[str, str]:
        """Every check that failed (failed, error or xpassed), with its message."""
        return {k: c["message"] for k, c in self.checks.items() if c["outcome"] in ("failed", "error", "xpassed")}


def kit_command(device: str, directory: Path, plugin: str | None = None, args: Sequence[str] = ()) -> list[str]:
    """The command line running the kit on ``device`` with its report in ``directory``; ``plugin`` is a
    class of ``bad_plugins`` or a ``module:attr`` spec."""
    command = [sys.executable, "-m", "pytest", "--pyargs", "hetero_sdk.conformance", "--device", device]
    command += ["-p", "no:cacheprovider", "-q", "--conformance-report", str(directory / "report.json")]
    if plugin is not None:
        command += ["--conformance-plugin", plugin if ":" in plugin else f"{PLUGINS}:{plugin}"]
    return command + list(args)


def run_kit(
    device: str, directory: Path, plugin: str | None = None, args: Sequence[str] = (), timeout: float = 600
) -> KitRun:
    """Runs the kit in a subprocess and waits for it."""
    directory.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        kit_command(device, directory, plugin, args),
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    path = directory / "report.json"
    report = json.loads(path.read_text()) if path.exists() else {}
    return KitRun(done.returncode, done.stdout + done.stderr, report, directory)


FAST = ("--conformance-max-examples", "5")
XFAILS = Path(__file__).resolve().parent / "xfails"

RUNS: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    "template": ("TEMPLATE", None, FAST),
    "hetero": ("HETERO:TEMPLATE", None, FAST),
    "auto": ("AUTO:TEMPLATE", None, FAST),
    "mini": ("MINI", "MiniDevice", FAST),
    "wrong_relu": ("WRONG_RELU", "WrongRelu", ("-k", "claimed_op and (Relu or Abs)")),
    "wrong_vector_matmul": ("WRONG_MATMUL", "WrongVectorMatMul", ("-k", "claimed_op and (MatMul or Relu)")),
    "claims_sigmoid": (
        "CLAIMS_SIGMOID",
        "ClaimsSigmoid",
        ("-k", "claimed_op and ((Sigmoid and not HardSigmoid) or (Tanh and not Atanh))"),
    ),
    "no_perf_count": ("NO_PERF", "IgnoresPerfCount", ("-k", "profiling or compile_create")),
    "lax_keys": ("LAX_KEYS", "AcceptsUnknownKeys", ("-k", "unknown_and_read_only or wrong_values")),
    "bad_blobs": ("BAD_BLOBS", "CorruptsBlobs", ("-k", "export_import or corrupted_blob or compile_create")),
    "crasher": (
        "CRASHER",
        "CrashesOnSigmoid",
        ("-k", "claimed_op and ((Sigmoid and not HardSigmoid) or (Tanh and not Atanh))"),
    ),
    "hanger": (
        "HANGER",
        "HangsOnExp",
        ("-k", "claimed_op and (Exp or (Tanh and not Atanh))", "--conformance-timeout", "15"),
    ),
    "declared": (
        "WRONG_RELU",
        "WrongRelu",
        ("-k", "claimed_op and (Relu or Abs)", "--conformance-xfails", str(XFAILS / "WRONG_RELU.txt")),
    ),
    "declared_crash": (
        "CRASHER",
        "CrashesOnSigmoid",
        ("-k", "claimed_op and Sigmoid", "--conformance-xfails", str(XFAILS / "CRASHER.txt")),
    ),
}
"""Kit runs the tests read: name -> (device, plugin class in bad_plugins or None, extra arguments)."""


class KitRuns:
    """Kit runs started together, two at a time (the machine has two cores), awaited by name."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self._pool = ThreadPoolExecutor(2)
        self._runs: dict[str, Future[KitRun]] = {}

    def start(self, name: str, device: str, plugin: str | None = None, args: Sequence[str] = ()) -> None:
        """Starts a run named ``name`` (once)."""
        if name not in self._runs:
            self._runs[name] = self._pool.submit(run_kit, device, self.base / name, plugin, args)

    def __getitem__(self, name: str) -> KitRun:
        if name not in self._runs:
            self.start(name, *RUNS[name])
        return self._runs[name].result()

    def close(self) -> None:
        """Waits for every run."""
        self._pool.shutdown(wait=True)
