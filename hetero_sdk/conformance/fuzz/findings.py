"""Keeping what a fuzz run found: each finding's reproduction in a folder, and the run's counts."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from hetero_sdk.conformance.fuzz.outcome import Case, Outcome

__all__ = ["Tally", "save_finding"]


def save_finding(case: Case, outcome: Outcome, folder: str | Path) -> Path:
    """Writes the case (its model file or blob, its other files) and the outcome under
    ``folder/<kind>-<digest>/``; returns that folder. The same case found twice is written once."""
    digest = hashlib.sha256(case.data + b"".join(d for _, d in case.files)).hexdigest()[:12]
    where = Path(folder) / f"{outcome.kind}-{case.target}-{digest}"
    where.mkdir(parents=True, exist_ok=True)
    name = {"onnx": "model.onnx", "native": "model.hsm", "blob": "compiled.blob"}[case.target]
    (where / name).write_bytes(case.data)
    for file_name, data in case.files:
        (where / Path(file_name).name).write_bytes(data)
    summary = {"target": case.target, "device": case.device, "label": case.label, "kind": outcome.kind,
               "detail": outcome.detail, **outcome.extra}  # fmt: skip
    (where / "outcome.json").write_text(json.dumps(summary, indent=1))
    return where


class Tally:
    """Counts of outcomes by kind, and findings by kind and first line of their detail."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self.findings: Counter[tuple[str, str]] = Counter()

    def add(self, outcome: Outcome) -> None:
        """Counts one outcome."""
        self.kinds[outcome.kind] += 1
        if outcome.is_finding:
            self.findings[(outcome.kind, outcome.detail.splitlines()[0][:160] if outcome.detail else "")] += 1

    @property
    def cases(self) -> int:
        """How many outcomes were counted."""
        return sum(self.kinds.values())

    def report(self) -> str:
        """The counts as text: cases, outcomes by kind, then each distinct finding with its count."""
        lines = [f"cases: {self.cases}"] + [f"  {kind}: {n}" for kind, n in sorted(self.kinds.items())]
        if self.findings:
            lines.append("findings:")
            lines += [f"  {n:5d}  {kind}: {detail}" for (kind, detail), n in self.findings.most_common()]
        return "\n".join(lines)
