"""Op coverage: key cases run in every profile, thin coverage draws more, and the summary and the JSON
report say how many drawn models exercised each op."""

from __future__ import annotations

import numpy as np

from hetero_sdk.conformance.op_cases import key_cases
from hetero_sdk.conformance.report import CheckRecord, op_coverage
from hetero_sdk.reference import evaluate

from .kit import KitRuns

OP = "test_ops.py::test_claimed_op_matches_template"


def _record(op: str, outcome: str, message: str = "", **details: int) -> CheckRecord:
    record = CheckRecord(f"{OP}[{op}]", "Plugin and Core", True, outcome, message)
    record.details = {k: str(v) for k, v in details.items()}
    return record


def test_coverage_sorts_ops_into_exercised_thin_unclaimed_and_without_cases() -> None:
    records = [
        _record("Relu", "passed", drawn=25, claimed=25, enough=5),
        _record("MatMul", "passed", drawn=102, claimed=3, enough=5),
        _record("Exp", "skipped", "X does not claim Exp (in 50 drawn models)", drawn=50, claimed=0, enough=5),
        _record("Loop", "skipped", "no case recipe for Loop"),
        CheckRecord("test_compiled_models.py::test_x", "Compiled models", True, "passed"),
    ]
    coverage = op_coverage(records)
    assert coverage.exercised == {"Relu": (25, 25), "MatMul": (102, 3)}
    assert coverage.thin == ["MatMul"]
    assert coverage.unclaimed == {"Exp": 50}
    assert coverage.no_recipe == ["Loop"]


def test_matmul_key_cases_are_a_transposed_a_times_a_vector_and_its_mirror() -> None:
    cases = key_cases("MatMul")
    transposed_a = next(c for c in cases if c.attrs["transpose_a"])
    a, b = transposed_a.inputs["a"], transposed_a.inputs["b"]
    assert b.ndim == 1
    want = np.einsum("nkm,k->nm", a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(evaluate(transposed_a.model, transposed_a.inputs)[0], want, rtol=1e-5)
    mirror = next(c for c in cases if c.attrs["transpose_b"])
    assert mirror.inputs["a"].ndim == 1


def test_the_run_reports_coverage_per_op_with_key_cases_counted(kit_runs: KitRuns) -> None:
    run = kit_runs["mini"]  # 5 examples per op check
    coverage = run.report["op_coverage"]
    assert coverage["exercised"]["Relu"] == [8, 8]  # a key case per element type (f32, f16, i32), then 5 drawn
    assert coverage["exercised"]["MatMul"] == [7, 7]  # 2 key cases, then 5 drawn
    assert coverage["no_recipe"] == []  # every compute op of the opset has cases
    details = run.checks[f"{OP}[MatMul]"]["details"]
    assert details == {"examples": "7 claimed, 0 not claimed", "drawn": "7", "claimed": "7", "enough": "1"}
    assert "op coverage (models in which the device claimed the op / models drawn)" in run.output
    assert "MatMul 7/7" in run.output
    assert "NEVER EXERCISED" not in run.output
