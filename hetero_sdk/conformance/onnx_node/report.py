"""What a node test run adds up to: counts per ONNX op and in total, the op types most often
unsupported, and the JSON document of ``--json``."""

from __future__ import annotations

import collections
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import onnx

from hetero_sdk.conformance.onnx_node.cases import CaseInfo
from hetero_sdk.conformance.onnx_node.execute import STATUSES, CaseResult
from hetero_sdk.conformance.onnx_node.expected import Verdict

__all__ = ["Counts", "document", "per_op", "totals", "unsupported_ops"]


@dataclass
class Counts:
    """How many cases ended in each status."""

    cases: int = 0
    passed: int = 0
    failed: int = 0
    unsupported: int = 0
    error: int = 0

    def add(self, status: str) -> None:
        """Counts one case of ``status``."""
        self.cases += 1
        setattr(self, status, getattr(self, status) + 1)

    def row(self) -> list[int]:
        """``cases`` then one count per status, in :data:`STATUSES` order."""
        return [self.cases, *(getattr(self, s) for s in STATUSES)]


def per_op(results: Mapping[str, CaseResult], index: Mapping[str, CaseInfo]) -> dict[str, Counts]:
    """The counts of each ONNX op's cases (an ``_expanded`` case counts for its op), sorted by op."""
    counts: dict[str, Counts] = collections.defaultdict(Counts)
    for name, result in results.items():
        info = index.get(name)
        counts[info.op if info else name].add(result.status)
    return dict(sorted(counts.items(), key=lambda item: item[0].lower()))


def totals(results: Mapping[str, CaseResult]) -> Counts:
    """The counts over every case."""
    counts = Counts()
    for result in results.values():
        counts.add(result.status)
    return counts


def unsupported_ops(results: Mapping[str, CaseResult], top: int = 15) -> dict[str, int]:
    """The op types (or element types) most often named by unsupported cases, most common first."""
    named = collections.Counter(op for r in results.values() if r.status == "unsupported" for op in r.ops)
    return dict(named.most_common(top))


def document(
    device: str,
    results: Mapping[str, CaseResult],
    index: Mapping[str, CaseInfo],
    verdict: Verdict | None,
    seconds: float,
) -> dict[str, Any]:
    """The JSON report: the run's settings, totals, counts per op, the verdict and every case's result."""
    return {
        "device": device,
        "onnx": onnx.__version__,
        "seconds": round(seconds, 1),
        "summary": {**asdict(totals(results)), "unsupported_ops": unsupported_ops(results)},
        "ops": {op: asdict(c) for op, c in per_op(results, index).items()},
        "verdict": None if verdict is None else asdict(verdict),
        "cases": {
            name: {"op": index[name].op if name in index else None, **asdict(r)} for name, r in sorted(results.items())
        },
    }
