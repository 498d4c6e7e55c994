"""Collecting each check's outcome: the terminal summary per group and the JSON report."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hetero_sdk import __version__

if TYPE_CHECKING:
    import pytest

__all__ = ["GROUPS", "OUTCOMES", "CheckRecord", "OpCoverage", "Recorder", "op_coverage"]

GROUPS = {
    "test_plugin_core.py": "Plugin and Core",
    "test_ops.py": "Plugin and Core",
    "test_compiled_models.py": "Compiled models",
    "test_infer_requests.py": "Infer requests",
    "test_hetero.py": "HETERO with this device",
    "test_onnx_node.py": "ONNX node tests",
}
"""The check modules and the conformance.md section each belongs to."""

OUTCOMES = ("passed", "failed", "error", "xfailed", "xpassed", "skipped")
"""Outcomes of a check. ``xpassed``: a declared expected failure passed (it fails the run)."""

_ORDER = list(dict.fromkeys(GROUPS.values()))
_OP_CHECK = "test_ops.py::test_claimed_op_matches_template["


@dataclass
class CheckRecord:
    """What the report says about one check."""

    id: str
    group: str
    mandatory: bool
    outcome: str = "skipped"
    message: str = ""
    duration_s: float = 0.0
    reproduction: str | None = None
    details: dict[str, str] = field(default_factory=dict)
    nodeid: str = ""


@dataclass(frozen=True)
class OpCoverage:
    """How well the op checks exercised the device's ops (from their ``drawn``/``claimed`` details).

    :ivar exercised: op type -> (models drawn, models in which the device claimed the op), for every
        op claimed in at least one drawn model.
    :ivar thin: the exercised ops claimed in fewer models than the check's ``enough``.
    :ivar unclaimed: op type -> models drawn, for ops the device claimed in none of them.
    :ivar no_recipe: op types the kit has no cases for: never exercised, whatever the device claims.
    """

    exercised: dict[str, tuple[int, int]]
    thin: list[str]
    unclaimed: dict[str, int]
    no_recipe: list[str]


def op_coverage(records: list[CheckRecord]) -> OpCoverage:
    """The op coverage of a run's records (checks of ops that did not run are left out)."""
    exercised: dict[str, tuple[int, int]] = {}
    unclaimed: dict[str, int] = {}
    thin, no_recipe = [], []
    for record in records:
        if not record.id.startswith(_OP_CHECK):
            continue
        op = record.id[len(_OP_CHECK) : -1]
        if record.outcome == "skipped" and record.message.startswith("no case recipe"):
            no_recipe.append(op)
        elif "drawn" in record.details:
            drawn, claimed = int(record.details["drawn"]), int(record.details["claimed"])
            if claimed:
                exercised[op] = (drawn, claimed)
                if claimed < int(record.details.get("enough", 1)):
                    thin.append(op)
            else:
                unclaimed[op] = drawn
    return OpCoverage(exercised, thin, unclaimed, no_recipe)


@dataclass(eq=False)
class Recorder:
    """Turns pytest reports into one record per check (a pytest plugin living in the pytest process)."""

    device: str
    profile: str
    report_path: Path | None
    records: dict[str, CheckRecord] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    unmatched_xfails: list[str] = field(default_factory=list)

    def add_check(self, nodeid: str, check: str, group: str, mandatory: bool) -> None:
        """Registers a collected check."""
        self.records[nodeid] = CheckRecord(check, group, mandatory, nodeid=nodeid)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Folds a setup, call or teardown report into the check's record."""
        record = self.records.get(report.nodeid)
        if record is None:
            return
        record.duration_s += float(getattr(report, "duration", 0.0) or 0.0)
        for key, value in getattr(report, "user_properties", ()) or ():
            if key == "reproduction":
                record.reproduction = str(value)
            else:
                record.details[str(key)] = str(value)
        xfail = getattr(report, "wasxfail", None)
        if report.when == "call" or (report.when == "setup" and not report.passed):
            if report.passed:
                record.outcome, record.message = ("xpassed", str(xfail)) if xfail is not None else ("passed", "")
            elif report.skipped:
                record.outcome = "xfailed" if xfail is not None else "skipped"
                record.message = str(xfail) if xfail is not None else _skip_reason(report)
            else:
                text = _failure_message(report)
                xpassed = "XPASS(strict)" in text
                record.outcome = "xpassed" if xpassed else ("error" if report.when == "setup" else "failed")
                record.message = text
        elif report.when == "teardown" and report.failed and record.outcome in ("passed", "skipped"):
            record.outcome, record.message = "error", _failure_message(report)

    def totals(self) -> dict[str, dict[str, int]]:
        """Per group (in conformance.md order) and ``all``: the count of each outcome, and of
        mandatory failures (failed, error or xpassed mandatory checks)."""
        table: dict[str, dict[str, int]] = {}
        for group in [*_ORDER, "all"]:
            rows = [r for r in self.records.values() if group in ("all", r.group)]
            counts = {outcome: sum(r.outcome == outcome for r in rows) for outcome in OUTCOMES}
            counts["mandatory_failed"] = sum(r.mandatory and r.outcome in ("failed", "error", "xpassed") for r in rows)
            counts["total"] = len(rows)
            table[group] = counts
        return table

    def to_json(self) -> dict[str, Any]:
        """The report: the run, one entry per check, and per-group totals."""
        return {
            "device": self.device,
            "profile": self.profile,
            "hetero_sdk": __version__,
            "duration_s": round(time.time() - self.started, 3),
            "checks": [asdict(r) for r in self.records.values()],
            "groups": self.totals(),
            "op_coverage": asdict(op_coverage(list(self.records.values()))),
            "unmatched_xfails": self.unmatched_xfails,
        }

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Writes the JSON report."""
        if self.report_path is not None:
            self.report_path.parent.mkdir(parents=True, exist_ok=True)
            self.report_path.write_text(json.dumps(self.to_json(), indent=2))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Prints the per-group table and the failed mandatory checks."""
        if not self.records:
            return
        tr = terminalreporter
        tr.write_sep("=", f"hetero-sdk conformance: {self.device} (profile {self.profile})")
        totals = self.totals()
        header = f"{'group':<26}" + "".join(f"{o:>9}" for o in OUTCOMES) + f"{'mandatory failed':>18}"
        tr.write_line(header)
        for group in [*_ORDER, "all"]:
            counts = totals[group]
            if not counts["total"]:
                continue
            line = f"{group:<26}" + "".join(f"{counts[o]:>9}" for o in OUTCOMES)
            tr.write_line(line + f"{counts['mandatory_failed']:>18}", bold=group == "all")
        _write_coverage(tr, op_coverage(list(self.records.values())))
        failed = [r for r in self.records.values() if r.outcome in ("failed", "error", "xpassed")]
        for record in failed:
            kind = "MANDATORY" if record.mandatory else "optional"
            first = record.message.strip().splitlines()[0] if record.message.strip() else ""
            tr.write_line(f"{kind} {record.outcome.upper()} {record.id}: {first[:200]}", red=record.mandatory)
            if record.details.get("triage"):
                tr.write_line(f"    triage: {record.details['triage']}")
            if record.reproduction:
                tr.write_line(f"    reproduction: {record.reproduction}")
        for line in self.unmatched_xfails:
            tr.write_line(f"expected-failures file: {line}", yellow=True)
        verdict = totals["all"]["mandatory_failed"]
        tr.write_line(
            f"{self.device}: every mandatory check passed"
            if not verdict
            else f"{self.device}: {verdict} mandatory check(s) failed",
            green=not verdict,
            red=bool(verdict),
        )
        if self.report_path is not None:
            tr.write_line(f"JSON report: {self.report_path}")


def _write_coverage(tr: Any, coverage: OpCoverage) -> None:
    """Prints the op coverage: each exercised op as ``op claimed/drawn``, then the thin ones, the ops
    never claimed and those the kit cannot exercise."""
    if not (coverage.exercised or coverage.unclaimed or coverage.no_recipe):
        return
    tr.write_line(
        f"op coverage (models in which the device claimed the op / models drawn): {len(coverage.exercised)} ops"
    )
    cells = [f"{op} {claimed}/{drawn}" for op, (drawn, claimed) in sorted(coverage.exercised.items())]
    for line in _wrap(cells):
        tr.write_line(f"  {line}")
    if coverage.thin:
        thin = ", ".join(
            f"{op} {coverage.exercised[op][1]}/{coverage.exercised[op][0]}" for op in sorted(coverage.thin)
        )
        tr.write_line(f"  THIN, claimed in few drawn models: {thin}", yellow=True)
    if coverage.unclaimed:
        tr.write_line(
            f"  not claimed in any drawn model ({len(coverage.unclaimed)}): {', '.join(sorted(coverage.unclaimed))}"
        )
    if coverage.no_recipe:
        names = ", ".join(sorted(coverage.no_recipe))
        tr.write_line(f"  NEVER EXERCISED, the kit has no cases ({len(coverage.no_recipe)}): {names}", yellow=True)


def _wrap(cells: list[str], width: int = 100) -> list[str]:
    lines: list[str] = []
    for cell in cells:
        if lines and len(lines[-1]) + 2 + len(cell) <= width:
            lines[-1] += f"  {cell}"
        else:
            lines.append(cell)
    return lines


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr or "")


def _failure_message(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = report.longreprtext if hasattr(report, "longreprtext") else str(report.longrepr)
    if crash is not None and getattr(crash, "message", None):
        message = str(crash.message)
        return message if len(message) > 40 or not text else f"{message}\n{text[-3000:]}"
    return text[-4000:]
