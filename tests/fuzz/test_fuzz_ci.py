"""The fuzz invariant on a bounded, derandomized set of mutated files (the CI run of the fuzzer; long
runs: ``python -m hetero_sdk.conformance.fuzz``, see docs/fuzzing.md).

Every mutated ONNX model, OpenVINO IR file, native-format model and exported blob must end in a ``HeteroSDKError`` or a
result (for ONNX, equal to ONNX Runtime's where it accepts the model) within the time bound, and
loading must run no code. Each case runs in a worker process, so a hang or a crash fails the test
instead of stopping it. Findings are saved (model bytes and outcome) under pytest's temporary folder,
whose path the failure message gives.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetero_sdk.conformance.fuzz import (
    CI_NODE_TESTS,
    Case,
    CaseRunner,
    Tally,
    blob_cases,
    blob_seeds,
    built_seeds,
    native_cases,
    native_seeds,
    node_test_seeds,
    onnx_cases,
    save_finding,
)
from hetero_sdk.conformance.fuzz.ir import ir_cases, ir_seeds

TIME_LIMIT_S = 10.0
"""Per case, on a slow shared machine; the cases here take well under a second each."""


def _ci(examples: int):  # type: ignore[no-untyped-def]
    return settings(
        max_examples=examples, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )


@pytest.fixture(scope="module")
def runner() -> Iterator[CaseRunner]:
    with CaseRunner(TIME_LIMIT_S) as supervised:
        yield supervised


def _run(strategy: st.SearchStrategy[Case], examples: int, runner: CaseRunner, folder: Path) -> Tally:
    tally = Tally()
    saved: list[str] = []

    @_ci(examples)
    @given(strategy)
    def one(case: Case) -> None:
        outcome = runner.run(case)
        tally.add(outcome)
        if outcome.is_finding:
            saved.append(
                f"{outcome.kind}: {outcome.detail[:300]} [{case.label}] -> {save_finding(case, outcome, folder)}"
            )

    one()
    assert not saved, f"{len(saved)} findings:\n" + "\n".join(saved)
    return tally


def test_mutated_onnx_models_give_a_typed_error_or_onnx_runtimes_result(
    runner: CaseRunner, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tally = _run(
        onnx_cases(node_test_seeds(CI_NODE_TESTS) + built_seeds()),
        160,
        runner,
        tmp_path_factory.mktemp("onnx_findings"),
    )
    # not every mutation is fatal: a share of the cases runs and is compared with ONNX Runtime
    assert tally.kinds["equal"] >= 10, tally.report()


def test_mutated_native_models_give_a_typed_error_or_run(
    runner: CaseRunner, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tally = _run(native_cases(native_seeds()), 60, runner, tmp_path_factory.mktemp("native_findings"))
    assert tally.kinds["typed_error"] > 0, tally.report()


def test_mutated_blobs_give_a_typed_error_or_run(runner: CaseRunner, tmp_path_factory: pytest.TempPathFactory) -> None:
    tally = _run(blob_cases(blob_seeds()), 60, runner, tmp_path_factory.mktemp("blob_findings"))
    assert tally.kinds["typed_error"] > 0, tally.report()


def test_mutated_ir_files_give_a_typed_error_or_run(
    runner: CaseRunner, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tally = _run(ir_cases(ir_seeds()), 80, runner, tmp_path_factory.mktemp("ir_findings"))
    assert tally.kinds["typed_error"] > 0 and tally.kinds["ran"] > 0, tally.report()
