"""The ``ci`` profile catches every mutant device of ``mutants.py``: each has one plausible kernel bug, and
the op check meant for it fails (with the triage saying the device is wrong) while a check of an op it
computes right passes. The mutants caught are listed in the docs (docs/conformance.md, "What the ci
profile catches")."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from hetero_sdk.conformance.triage import DEVICE_BUG, NO_SECOND_OPINION

from .kit import KitRuns
from .mutants import MUTANTS, Mutant

OP = "test_ops.py::test_claimed_op_matches_template"

_SIMILAR = {"Softmax": "LogSoftmax", "Convolution": "Group or Deformable or Backprop"}
"""Ops whose names contain the mutated op's (left out of its run: -k matches substrings)."""


def _selection(mutant: Mutant) -> str:
    chosen = f"claimed_op and ({mutant.op_type} or {mutant.control})"
    return f"{chosen} and not ({_SIMILAR[mutant.op_type]})" if mutant.op_type in _SIMILAR else chosen


@pytest.fixture(scope="module")
def mutant_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KitRuns]:
    """One ci run per mutant, started together (two at a time)."""
    runs = KitRuns(tmp_path_factory.mktemp("mutants"))
    for mutant in MUTANTS:
        runs.start(mutant.device, mutant.device, mutant.plugin, ("-k", _selection(mutant)))
    yield runs
    runs.close()


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.device for m in MUTANTS])
def test_the_ci_profile_catches_the_mutant(mutant_runs: KitRuns, mutant: Mutant) -> None:
    run = mutant_runs[mutant.device]
    check = f"{OP}[{mutant.op_type}]"
    assert run.outcome(check) == "failed", f"{mutant.device} ({mutant.bug}) was not caught:\n{run.output[-3000:]}"
    assert run.outcome(f"{OP}[{mutant.control}]") == "passed"
    message = run.checks[check]["message"]
    assert "results differ from the oracle" in message
    assert run.report["profile"] == "ci"
    verdict = run.checks[check]["details"]["triage"]
    if importlib.util.find_spec("onnxruntime") is not None:
        # Interpolate's linear mode (OpenVINO's triangle filter) has no ONNX counterpart: no second opinion
        exported = mutant.op_type != "Interpolate"
        assert verdict == DEVICE_BUG if exported else verdict.startswith(NO_SECOND_OPINION), message
        assert f"triage: {verdict}" in run.output  # the summary says it under the failed check
    else:
        assert "ONNX Runtime is not installed" in verdict
