"""The results check: a device's outputs against the numpy reference evaluator, output by output."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetero_sdk.errors import HeteroSDKError
from hetero_sdk.graph import Model
from hetero_sdk.reference import evaluate

__all__ = ["CheckResult", "OutputCheck", "check_results"]


@dataclass(frozen=True)
class OutputCheck:
    """One output compared: its name, whether it matches, and how far off it is."""

    name: str
    ok: bool
    dtype: str
    shape: list[int]
    expected_dtype: str
    expected_shape: list[int]
    max_abs_diff: float | None
    detail: str


@dataclass(frozen=True)
class CheckResult:
    """The verdict over all outputs: ``PASS``, ``FAIL`` or ``SKIPPED`` (the reference could not run)."""

    status: str
    rtol: float
    atol: float
    outputs: list[OutputCheck] = field(default_factory=list)
    reason: str = ""

    @property
    def ok(self) -> bool:
        """False only for ``FAIL``."""
        return self.status != "FAIL"

    def summary(self) -> str:
        """One line for the terminal."""
        if self.status == "SKIPPED":
            return f"results not checked: {self.reason}"
        if self.status == "PASS":
            return (
                f"{len(self.outputs)} output(s) equal hetero_sdk.reference.evaluate "
                f"within rtol={self.rtol:g}, atol={self.atol:g}"
            )
        bad = [o for o in self.outputs if not o.ok]
        return "; ".join(f"{o.name}: {o.detail}" for o in bad)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "status": self.status,
            "rtol": self.rtol,
            "atol": self.atol,
            "reason": self.reason,
            "outputs": [vars(o) for o in self.outputs],
        }


def check_results(
    model: Model,
    inputs: Mapping[str, np.ndarray],
    actual: Sequence[Any],
    rtol: float,
    atol: float,
) -> CheckResult:
    """Compares ``actual`` (one array per model output) with the reference evaluation of ``model``.

    Integer and boolean outputs must be equal; floating-point ones equal within ``rtol``/``atol``
    (NaNs in the same places). Shapes and element types must match exactly.
    """
    try:
        expected = evaluate(model, inputs)
    except HeteroSDKError as exc:
        return CheckResult("SKIPPED", rtol, atol, reason=f"the reference evaluator failed: {exc}")
    names = [port.any_name for port in model.outputs]
    outputs = [_compare(name, np.asarray(a), np.asarray(e), rtol, atol) for name, a, e in zip(names, actual, expected)]
    if len(actual) != len(expected):
        return CheckResult("FAIL", rtol, atol, outputs, f"{len(actual)} outputs for {len(expected)} expected")
    return CheckResult("PASS" if all(o.ok for o in outputs) else "FAIL", rtol, atol, outputs)


def _compare(name: str, actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> OutputCheck:
    def verdict(ok: bool, diff: float | None, detail: str) -> OutputCheck:
        return OutputCheck(
            name, ok, str(actual.dtype), list(actual.shape), str(expected.dtype), list(expected.shape), diff, detail
        )

    if actual.dtype != expected.dtype:
        return verdict(False, None, f"element type {actual.dtype}, expected {expected.dtype}")
    if actual.shape != expected.shape:
        return verdict(False, None, f"shape {list(actual.shape)}, expected {list(expected.shape)}")
    if actual.size == 0:
        return verdict(True, 0.0, "empty, as expected")
    exact = not np.issubdtype(actual.dtype, np.inexact)
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    gaps = np.abs(a - e)
    gaps[np.isnan(a) & np.isnan(e)] = 0.0
    largest = float(np.max(np.nan_to_num(gaps, nan=np.inf)))
    diff = largest if np.isfinite(largest) else None
    if exact:
        mismatches = int(np.count_nonzero(actual != expected))
        return verdict(mismatches == 0, diff, "equal" if not mismatches else f"{mismatches} element(s) differ")
    close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    far = int(close.size - np.count_nonzero(close))
    detail = f"max |diff| {largest:.3g}" if not far else f"{far} element(s) off, max |diff| {largest:.3g}"
    return verdict(far == 0, diff, detail)
