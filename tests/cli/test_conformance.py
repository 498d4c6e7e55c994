"""``hetero-sdk conformance DEVICE``: a thin pass-through to the conformance kit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import hetero_sdk.conformance as kit

from .helpers import Invoke, assert_one_line_error


def test_arguments_pass_through_and_the_kit_status_is_the_exit_status(
    invoke: Invoke, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []

    def run(device: str, **kwargs: Any) -> int:
        calls.append((device, kwargs))
        return 3

    monkeypatch.setattr(kit, "run", run, raising=False)
    xfails = tmp_path / "xfails.txt"
    xfails.write_text("test_conv  # not yet\n")
    result = invoke(
        "conformance", "ACCEL", "--xfail-file", str(xfails), "--report-json", "out.json", "--profile", "thorough",
        "-k", "conv", "-x",
    )  # fmt: skip
    assert result.exit_code == 3, result.output
    assert calls == [
        ("ACCEL", {"extra_args": ("-k", "conv", "-x"), "xfail_file": str(xfails), "report_json": "out.json",
                 "profile": "thorough"}),
    ]  # fmt: skip


def test_defaults_are_the_ci_profile_and_no_extra_arguments(invoke: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    monkeypatch.setattr(kit, "run", lambda device, **kwargs: seen.update(kwargs, device=device) or 0, raising=False)
    result = invoke("conformance", "TEMPLATE")
    assert result.exit_code == 0, result.output
    assert seen == {"device": "TEMPLATE", "extra_args": (), "xfail_file": None, "report_json": None, "profile": "ci"}


def test_missing_testing_extra_says_how_to_install_it(invoke: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    def run(device: str, **kwargs: Any) -> int:
        raise ModuleNotFoundError("No module named 'hypothesis'", name="hypothesis")

    monkeypatch.setattr(kit, "run", run, raising=False)
    assert_one_line_error(invoke("conformance", "TEMPLATE"), "hypothesis", "hetero-sdk[testing]", exit_code=2)


def test_a_kit_without_a_runner_is_one_line(invoke: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(kit, "run", raising=False)
    assert_one_line_error(invoke("conformance", "TEMPLATE"), "no conformance kit runner", exit_code=2)


def test_malformed_device_is_a_usage_error(invoke: Invoke) -> None:
    assert_one_line_error(invoke("conformance", "template"), "UPPER_CASE", exit_code=2)


def test_an_unknown_device_is_one_line_in_the_clis_voice(invoke: Invoke) -> None:
    result = invoke("conformance", "TEMPLAT")
    assert_one_line_error(result, "DeviceNotFoundError: no device 'TEMPLAT'", "did you mean TEMPLATE?", exit_code=1)
    result = invoke("conformance", "HETERO:TEMPLATE,ACCEL.4")
    assert_one_line_error(result, "DeviceNotFoundError: device 'ACCEL.4' does not exist")


def test_a_device_the_kit_registers_itself_is_not_checked_first(
    invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kit, "run", lambda device, **kwargs: 0, raising=False)
    result = invoke("conformance", "WRONG_RELU", "--conformance-plugin", "tests.conformance.bad_plugins:WrongRelu")
    assert result.exit_code == 0, result.output


def test_onnx_node_tests_options_reach_the_kit(invoke: Invoke, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: dict[str, Any] = {}
    monkeypatch.setattr(kit, "run", lambda device, **kwargs: seen.update(kwargs) or 0, raising=False)
    expected = tmp_path / "node-xfails.txt"
    expected.write_text("test_abs  failed  why\n")
    assert invoke("conformance", "TEMPLATE", "--onnx-node-tests").exit_code == 0
    assert seen["onnx_node_tests"] is True and seen["onnx_node_expected"] is None
    assert invoke("conformance", "TEMPLATE", "--onnx-node-expected", str(expected)).exit_code == 0
    assert seen["onnx_node_tests"] is True and seen["onnx_node_expected"] == str(expected)


def test_the_kit_command_line_carries_the_onnx_node_test_options() -> None:
    command = kit.command_line("XLA", onnx_node_tests=True, onnx_node_expected="mine.txt")
    assert command[-3:] == ["--onnx-node-tests", "--onnx-node-expected", "mine.txt"]
