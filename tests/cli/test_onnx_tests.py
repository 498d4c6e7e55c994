"""``hetero-sdk onnx-tests DEVICE``: the per-op table, the exit status against the expected-failures
file, and ``--update-expected``, on two ONNX cases: Abs (TEMPLATE runs it) and ImageDecoder (an op
no frontend rule translates)."""

from __future__ import annotations

import functools
import json
import warnings
from pathlib import Path

import pytest

from hetero_sdk.conformance.onnx_node import run_node_tests
from hetero_sdk.conformance.onnx_node.cases import NodeCase
from hetero_sdk.conformance.onnx_node.execute import CaseResult, DeviceRunner

from .helpers import Invoke, assert_one_line_error

CASES = "^test_(abs|image_decoder_decode_bmp_rgb)$"


def _rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.splitlines()]


def test_the_table_counts_each_op_and_an_unlisted_failure_is_a_regression(invoke: Invoke, tmp_path: Path) -> None:
    expected = tmp_path / "expected.txt"
    expected.write_text("# nothing expected to fail\n")
    report = tmp_path / "report.json"
    result = invoke(
        "onnx-tests", "TEMPLATE", "--include", CASES, "--jobs", "1", "--expected", str(expected), "--json", str(report)
    )
    assert result.exit_code == 1, result.output
    rows = _rows(result.stdout)
    assert ["ONNX", "op", "cases", "passed", "failed", "unsupported", "error"] in rows
    assert ["Abs", "1", "1", "0", "0", "0"] in rows
    assert ["ImageDecoder", "1", "0", "0", "1", "0"] in rows
    assert ["total", "2", "1", "0", "1", "0"] in rows
    assert "regression: test_image_decoder_decode_bmp_rgb: unsupported: UnsupportedOperationError" in result.stdout
    assert "FAIL: TEMPLATE: 1 regression(s)" in result.stdout
    data = json.loads(report.read_text())
    assert {name: case["status"] for name, case in data["cases"].items()} == {
        "test_abs": "passed",
        "test_image_decoder_decode_bmp_rgb": "unsupported",
    }
    assert data["ops"]["Abs"] == {"cases": 1, "passed": 1, "failed": 0, "unsupported": 0, "error": 0}
    assert data["verdict"]["regressions"] == ["test_image_decoder_decode_bmp_rgb"]


def test_update_expected_records_the_failures_and_the_next_run_passes(invoke: Invoke, tmp_path: Path) -> None:
    expected = tmp_path / "mine.txt"
    expected.write_text("test_zzz_not_run  failed  kept as it is\n")
    result = invoke("onnx-tests", "TEMPLATE", "--include", CASES, "--jobs", "1", "--expected", str(expected),
                    "--update-expected")  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = expected.read_text().splitlines()
    assert lines[0].startswith("# ONNX backend node tests (onnx ")
    assert lines[1] == f"# Regenerate: hetero-sdk onnx-tests TEMPLATE --update-expected --expected {expected}"
    assert lines[2].startswith("test_image_decoder_decode_bmp_rgb  unsupported  UnsupportedOperationError: ")
    assert lines[3:] == ["test_zzz_not_run  failed  kept as it is"]
    again = invoke("onnx-tests", "TEMPLATE", "--include", CASES, "--jobs", "1", "--expected", str(expected))
    assert again.exit_code == 0, again.output
    assert "PASS: TEMPLATE: 0 regression(s), 0 unexpected pass(es), 0 changed" in again.stdout


def test_a_listed_case_that_passes_is_reported_and_fails_only_with_strict(invoke: Invoke, tmp_path: Path) -> None:
    expected = tmp_path / "mine.txt"
    expected.write_text("test_abs  failed  was off by one\ntest_image_decoder_decode_bmp_rgb  unsupported  no rule\n")
    args = ["onnx-tests", "TEMPLATE", "--include", CASES, "--jobs", "1", "--expected", str(expected)]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert f"1 listed case(s) now pass: remove them from the file {expected}:" in result.stdout
    assert ["test_abs"] in _rows(result.stdout)
    assert invoke(*args, "--strict").exit_code == 1


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--include", "test_(abs"], ["--include", "is not a regular expression"]),
        (["--shard", "3/2"], ["--shard", "expected I/N"]),
        (["--jobs", "0"], ["--jobs"]),
    ],
)
def test_bad_options_are_one_line_usage_errors(invoke: Invoke, args: list[str], fragments: list[str]) -> None:
    assert_one_line_error(invoke("onnx-tests", "TEMPLATE", *args), *fragments, exit_code=2)


def test_a_malformed_expected_file_is_a_one_line_error(invoke: Invoke, tmp_path: Path) -> None:
    expected = tmp_path / "bad.txt"
    expected.write_text("test_abs  passed  fine\n")
    result = invoke("onnx-tests", "TEMPLATE", "--include", CASES, "--expected", str(expected))
    assert_one_line_error(result, "ExpectedFileError", f"{expected}:1", "not one of", exit_code=2)


def test_update_expected_needs_a_file_for_a_device_without_one(invoke: Invoke) -> None:
    result = invoke("onnx-tests", "HETERO:TEMPLATE", "--include", CASES, "--update-expected")
    assert_one_line_error(result, "no expected-failures file ships for HETERO:TEMPLATE", "--expected FILE", exit_code=2)


def test_an_unknown_device_is_a_one_line_error(invoke: Invoke) -> None:
    assert_one_line_error(invoke("onnx-tests", "NPU", "--include", CASES), "NPU", exit_code=1)


class _WarningRunner(DeviceRunner):
    """TEMPLATE, warning as JAX does on the cases' own data (and failing ``test_abs`` when told to)."""

    def __init__(self, fail: bool = False) -> None:
        super().__init__("TEMPLATE")
        self.fail = fail

    def run(self, case: NodeCase) -> CaseResult:
        warnings.warn("overflow encountered in cast", RuntimeWarning, stacklevel=1)
        warnings.warn("a library's deprecation", DeprecationWarning, stacklevel=1)
        if self.fail:
            raise ValueError("a real error stays in the results")
        return super().run(case)


@pytest.mark.parametrize("fail", [False, True])
def test_workers_keep_warnings_out_of_the_output_and_errors_in_the_results(
    capfd: pytest.CaptureFixture[str], fail: bool
) -> None:
    run = run_node_tests("TEMPLATE", include="^test_abs$", factory=functools.partial(_WarningRunner, fail))
    result = run.results["test_abs"]
    if fail:
        assert result.status == "error" and "ValueError: a real error stays in the results" in result.reason
    else:
        assert result.status == "passed"
    captured = capfd.readouterr()
    assert "Warning" not in captured.err + captured.out, captured.err
