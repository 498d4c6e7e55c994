"""The kit has teeth: each deliberately wrong plugin of ``bad_plugins`` fails the check meant for it,
while the checks it does not break pass; crashes and hangs fail one check and the run goes on."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hetero_sdk as hs

from . import bad_plugins
from .kit import REPO, KitRuns

OP = "test_ops.py::test_claimed_op_matches_template"

CAUGHT = [
    ("wrong_relu", f"{OP}[Relu]", "results differ from the oracle", [f"{OP}[Abs]"]),
    ("wrong_vector_matmul", f"{OP}[MatMul]", "results differ from the oracle", [f"{OP}[Relu]"]),
    (
        "claims_sigmoid",
        f"{OP}[Sigmoid]",
        "claims Sigmoid in query_model, but compile_model failed: UnsupportedOperationError",
        [f"{OP}[Tanh]"],
    ),
    (
        "no_perf_count",
        "test_infer_requests.py::test_profiling_info_is_not_empty_with_perf_count",
        "get_profiling_info() is empty after a sync infer with PERF_COUNT=True",
        ["test_compiled_models.py::test_compile_create_request_and_infer"],
    ),
    (
        "lax_keys",
        "test_plugin_core.py::test_unknown_and_read_only_keys_raise_unsupported_property_error",
        "set_property(CONFORMANCE_NO_SUCH_PROPERTY) was accepted; expected UnsupportedPropertyError",
        ["test_plugin_core.py::test_wrong_values_raise_property_value_error_and_keep_the_old_value"],
    ),
    (
        "bad_blobs",
        "test_compiled_models.py::test_corrupted_blob_raises_blob_format_error",
        "not BlobFormatError",
        ["test_compiled_models.py::test_compile_create_request_and_infer"],
    ),
    ("crasher", f"{OP}[Sigmoid]", "device crashed the interpreter (exit code 1)", [f"{OP}[Tanh]"]),
    ("hanger", f"{OP}[Exp]", "hung for more than 15 s", [f"{OP}[Tanh]"]),
]


@pytest.mark.parametrize(("run", "check", "message", "passing"), CAUGHT, ids=[c[0] for c in CAUGHT])
def test_each_defect_is_caught_by_the_check_meant_for_it(
    kit_runs: KitRuns, run: str, check: str, message: str, passing: list[str]
) -> None:
    result = kit_runs[run]
    assert result.outcome(check) == "failed", result.output[-3000:]
    assert message in result.checks[check]["message"]
    assert result.checks[check]["mandatory"] is True
    for other in passing:
        assert result.outcome(other) == "passed", result.checks[other]["message"]
    assert result.returncode == 1
    assert result.report["groups"]["all"]["mandatory_failed"] >= 1
    assert f"MANDATORY FAILED {check}" in result.output


def test_corrupted_exports_also_fail_the_export_import_check(kit_runs: KitRuns) -> None:
    result = kit_runs["bad_blobs"]
    check = "test_compiled_models.py::test_export_import_keeps_inputs_outputs_and_results"
    assert result.outcome(check) == "failed"
    assert "the imported model: results differ" in result.checks[check]["message"]


def test_after_a_crash_or_hang_the_run_goes_on_with_a_fresh_worker(kit_runs: KitRuns) -> None:
    for name, broken, after in (("crasher", "Sigmoid", "Tanh"), ("hanger", "Exp", "Tanh")):
        result = kit_runs[name]
        assert list(result.checks) == [f"{OP}[{broken}]", f"{OP}[{after}]"]
        assert result.outcome(f"{OP}[{after}]") == "passed"
    assert kit_runs["hanger"].checks[f"{OP}[Exp]"]["duration_s"] < 60


def test_a_crash_says_how_to_rerun_the_check_alone_and_that_command_crashes_the_same_way(kit_runs: KitRuns) -> None:
    result = kit_runs["crasher"]
    message = result.checks[f"{OP}[Sigmoid]"]["message"]
    command = message.split("to reproduce it: ", 1)[1]
    assert command == (
        "python -X faulthandler -m pytest --pyargs hetero_sdk.conformance --device CRASHER "
        "--conformance-plugin tests.conformance.bad_plugins:CrashesOnSigmoid --conformance-isolation none "
        "-k 'test_claimed_op_matches_template[Sigmoid]'"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = [sys.executable, *shlex.split(command)[1:], "-p", "no:cacheprovider"]
    done = subprocess.run(argv, cwd=result.directory, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1  # the device's os._exit(1), mid-check: pytest never gets to its summary
    assert "passed" not in done.stdout and "failed" not in done.stdout, done.stdout[-2000:]


def test_a_wrong_value_saves_a_reproduction_that_reproduces_it(kit_runs: KitRuns) -> None:
    check = kit_runs["wrong_relu"].checks[f"{OP}[Relu]"]
    assert "reproduce with:" in check["message"]
    folder = Path(check["reproduction"])
    assert {p.name for p in folder.iterdir()} >= {"model.json", "model.bin", "inputs.npz", "repro.py"}
    snippet = (folder / "repro.py").read_text()
    assert len(snippet.strip().splitlines()) == 3
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, str(folder / "repro.py")], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    core = hs.Core(plugins={"WRONG_RELU": bad_plugins.WrongRelu()}, autoload=False)
    model = core.read_model(folder / "model.json")
    inputs = dict(np.load(folder / "inputs.npz"))
    assert [n.type_name for n in model.get_ops()].count("Relu") == 1
    x = inputs["x"]
    got = core.compile_model(model, "WRONG_RELU")(inputs)[0]
    np.testing.assert_allclose(got, np.maximum(x, 0) * 1.01, rtol=1e-6)
    assert np.any(np.maximum(x, 0) > 0), "the saved counterexample must show the defect"
