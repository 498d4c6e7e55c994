"""The fuzz harness sees each kind of finding: a hang and a crash in its worker (and tells ONNX
Runtime's own from ours), an untyped exception, a result that differs from ONNX Runtime's, and code
run while a file is read; and a valid model's result equals ONNX Runtime's."""

from __future__ import annotations

import pickle
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from fuzz_helpers import crashes, hangs, hangs_in_reference

import hetero_sdk.conformance.fuzz.evaluation as evaluate_module
from hetero_sdk import Type
from hetero_sdk.conformance.fuzz import Case, CaseRunner, Outcome, Tally, built_seeds, evaluate, save_finding
from hetero_sdk.conformance.fuzz.evaluation import make_inputs
from hetero_sdk.errors import ModelFormatError
from hetero_sdk.shape import PartialShape


def _dense() -> Case:
    return Case("onnx", built_seeds()[0].model.SerializeToString(), label="built_dense")


def test_a_hang_is_reported_within_the_bound_and_the_next_case_runs() -> None:
    with CaseRunner(time_limit_s=2.0, evaluator=hangs) as runner:
        started = time.monotonic()
        outcome = runner.run(Case("onnx", b"", label="hang"))
        assert outcome.kind == "hang" and outcome.is_finding
        assert "phase ours" in outcome.detail
        assert time.monotonic() - started < 30
        assert runner.run(Case("onnx", b"", label="ok")).kind == "typed_error"  # a new worker


def test_a_crash_is_reported_with_the_exit_code() -> None:
    with CaseRunner(time_limit_s=30.0, evaluator=crashes) as runner:
        outcome = runner.run(Case("onnx", b""))
    assert outcome.kind == "crash" and outcome.is_finding
    assert "exit code 3" in outcome.detail


def test_onnx_runtime_hanging_is_not_our_finding() -> None:
    with CaseRunner(time_limit_s=2.0, evaluator=hangs_in_reference) as runner:
        outcome = runner.run(Case("onnx", b""))
    assert outcome.kind == "reference_failed" and not outcome.is_finding


def test_a_valid_model_equals_onnx_runtime() -> None:
    assert evaluate(_dense()).kind == "equal"


def test_a_result_unlike_onnx_runtimes_is_a_mismatch(monkeypatch: pytest.MonkeyPatch) -> None:
    real = evaluate_module._onnxruntime

    def off_by_one(path: str, inputs: dict[str, np.ndarray]) -> Any:
        return [value + 1 for value in real(path, inputs) or []]

    monkeypatch.setattr(evaluate_module, "_onnxruntime", off_by_one)
    monkeypatch.setattr(evaluate_module, "_onnx_reference", off_by_one)  # both references agree, not us
    outcome = evaluate(_dense())
    assert outcome.kind == "mismatch" and outcome.is_finding


def test_onnx_runtime_alone_differing_from_onnx_reference_and_us_is_not_a_finding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = evaluate_module._onnxruntime
    monkeypatch.setattr(evaluate_module, "_onnxruntime", lambda path, inputs: [v + 1 for v in real(path, inputs) or []])
    outcome = evaluate(_dense())
    assert outcome.kind == "references_disagree" and not outcome.is_finding


def test_exceptions_are_typed_errors_or_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    def raising(error: Exception) -> Any:
        def ours(case: Case, folder: Path) -> Any:
            raise error

        return ours

    monkeypatch.setattr(evaluate_module, "_ours", raising(ModelFormatError("bad file")))
    assert evaluate(_dense()).kind == "typed_error"
    monkeypatch.setattr(evaluate_module, "_ours", raising(KeyError("op")))
    outcome = evaluate(_dense())
    assert outcome.kind == "untyped_exception" and "KeyError" in outcome.detail
    assert "Traceback" in outcome.extra["traceback"]


def test_unpickling_while_reading_is_code_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def unpickles(case: Case, folder: Path) -> Any:
        pickle.loads(pickle.dumps(Path("x")))  # what a file must never make the reader do
        raise ModelFormatError("refused afterwards")

    monkeypatch.setattr(evaluate_module, "_ours", unpickles)
    outcome = evaluate(_dense())
    assert outcome.kind == "code_run" and "pickle.find_class" in outcome.detail


def test_a_finding_is_saved_with_its_files_and_counted(tmp_path: Path) -> None:
    case = Case("onnx", b"model", (("weights.bin", b"w"),), label="seed flip1")
    outcome = Outcome("hang", "no answer")
    where = save_finding(case, outcome, tmp_path)
    assert (where / "model.onnx").read_bytes() == b"model"
    assert (where / "weights.bin").read_bytes() == b"w"
    assert '"label": "seed flip1"' in (where / "outcome.json").read_text()
    tally = Tally()
    tally.add(outcome)
    tally.add(Outcome("equal"))
    assert tally.cases == 2 and "hang: no answer" in tally.report()


@pytest.mark.parametrize(("dims", "made"), [((2, -1), True), ((0, 2**62), False), ((2048, 1024), False)])
def test_inputs_too_large_to_make_are_not_made(dims: tuple[int, ...], made: bool) -> None:
    port = SimpleNamespace(partial_shape=PartialShape(dims), element_type=Type.boolean, names={"x"}, any_name="x")
    inputs = make_inputs(SimpleNamespace(inputs=[port]))
    assert (inputs is not None) == made
    if inputs is not None:
        assert inputs["x"].shape == (2, 2) and inputs["x"].dtype == np.bool_  # a dynamic dimension is 2


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ([sys.executable, "-c", "pass"], "code_run"),  # a program started while a file is read
        ([sys.executable, "-m", "hetero_sdk_jax.stablehlo_check"], "typed_error"),  # XLA's own reader helper
    ],
)
def test_starting_a_program_while_reading_is_code_run_unless_it_is_a_devices_helper(
    monkeypatch: pytest.MonkeyPatch, command: list[str], kind: str
) -> None:
    def starts(case: Case, folder: Path) -> Any:
        subprocess.run(command, stdin=subprocess.DEVNULL, check=False)
        raise ModelFormatError("refused afterwards")

    monkeypatch.setattr(evaluate_module, "_ours", starts)
    assert evaluate(_dense()).kind == kind
