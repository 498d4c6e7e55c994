"""Every user mistake and device failure is one line on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hetero_sdk.cli import cli
from hetero_sdk.errors import DeviceNotFoundError

from .helpers import Invoke, assert_one_line_error


def test_unknown_device_is_one_line_with_a_suggestion(invoke: Invoke) -> None:
    result = invoke("query", "mlp", "-d", "ACCELL")
    assert_one_line_error(result, "DeviceNotFoundError", "'ACCELL'", "did you mean ACCEL?", exit_code=1)


def test_unknown_device_inside_hetero_priorities_is_one_line(invoke: Invoke) -> None:
    result = invoke("benchmark", "mlp", "-d", "HETERO:NPU,TEMPLATE", "-niter", "1")
    assert_one_line_error(result, "'NPU'")


def test_malformed_device_name_is_a_usage_error(invoke: Invoke) -> None:
    result = invoke("benchmark", "-d", "hetero:xla", "-niter", "1")
    assert_one_line_error(result, "--device", "UPPER_CASE", exit_code=2)


def test_missing_model_file_is_one_line_naming_it(invoke: Invoke) -> None:
    """As benchmark_app, a missing model is an error (exit 1), not a wrong command line."""
    result = invoke("query", "no/such/model.json", "-d", "TEMPLATE")
    assert_one_line_error(
        result, "FileNotFoundError: no such file or directory: no/such/model.json", "detection, mlp", exit_code=1
    )
    for command in (["benchmark", "-niter", "1", "-m"], ["convert"], ["query"]):
        result = invoke(*command, "missing.onnx")
        assert_one_line_error(result, "FileNotFoundError: no such file or directory: missing.onnx", exit_code=1)
    assert_one_line_error(invoke("benchmark", "mpl", "-niter", "1"), "did you mean mlp?", exit_code=1)


def test_missing_load_config_file_is_a_file_not_found_error(invoke: Invoke, tmp_path: Path) -> None:
    result = invoke("benchmark", "mlp", "-niter", "1", "-load_config", str(tmp_path / "nosuch.json"))
    assert_one_line_error(result, "FileNotFoundError: no such file or directory: ", "nosuch.json", exit_code=1)
    result = invoke("query", "mlp", "-load_config", str(tmp_path / "nosuch.json"))
    assert_one_line_error(result, "FileNotFoundError: ", exit_code=1)


def test_malformed_model_file_is_one_line_naming_the_file(invoke: Invoke, tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{ this is not json")
    result = invoke("query", str(broken), "-d", "TEMPLATE")
    assert_one_line_error(result, "ModelFormatError", "broken.json", exit_code=1)


def test_unwritable_report_path_is_one_line(invoke: Invoke, tmp_path: Path) -> None:
    result = invoke("benchmark", "mlp", "-niter", "1", "--report", str(tmp_path / "missing_dir" / "r.json"))
    assert_one_line_error(result, "no such file or directory", "missing_dir", exit_code=1)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["benchmark", "--bogus"], "--bogus"),
        (["benchmark", "--api", "sideways"], "'sideways' is not one of 'sync', 'async'"),
        (["benchmark", "-niter", "0"], "0 is not in the range x>=1"),
        (["benchmark", "mlp", "--api", "sync", "-nireq", "2"], "-nireq applies to --api async"),
        (["quer"], "No such command 'quer'"),
        (["query"], "Missing argument 'MODEL'"),
    ],
)
def test_usage_errors_are_one_line_with_a_help_hint(invoke: Invoke, args: list[str], fragment: str) -> None:
    result = invoke(*args)
    assert_one_line_error(result, fragment, "(see 'hetero-sdk", "--help')", exit_code=2)


def test_debug_shows_the_original_error(accel_core: object) -> None:
    result = CliRunner().invoke(cli, ["--debug", "query", "mlp", "-d", "NOPE"], obj={"core": accel_core})
    assert result.exit_code != 0
    assert isinstance(result.exception, DeviceNotFoundError)


def test_console_script_prints_one_line_without_library_warnings(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hetero_sdk.cli", "query", str(tmp_path / "absent.json"), "-d", "TEMPLATE"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"hetero-sdk: error: FileNotFoundError: no such file or directory: {tmp_path / 'absent.json'}, nor a "
        "built-in sample; built-in samples: detection, mlp"
    ]
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("args", "error_type", "exit_code"),
    [
        (("benchmark", "-apii", "sync"), "UsageError", 2),
        (("benchmark", "-m", "no-such-model"), "FileNotFoundError", 1),
        (("benchmark", "-d", "hetero:xla"), "UsageError", 2),
        (("query", "mlp", "-d", "ACCELL"), "DeviceNotFoundError", 1),
        (("benchmark", "mlp", "-d", "TEMPLATE", "-load_config", "/no/such/config.json"), "FileNotFoundError", 1),
        (("conformance", "TEMPLAT"), "DeviceNotFoundError", 1),
        (("benchmark", "mlp", "-d", "TEMPLATE", "-nstreams", "x"), "UsageError", 2),
    ],
)
def test_every_failure_speaks_in_one_voice(
    invoke: Invoke, args: tuple[str, ...], error_type: str, exit_code: int
) -> None:
    """``hetero-sdk: error: <Type>: <message>``: the type of an SDK error, ``UsageError`` (exit 2) for a
    wrong command line."""
    result = invoke(*args)
    assert_one_line_error(result, f"hetero-sdk: error: {error_type}: ", exit_code=exit_code)
