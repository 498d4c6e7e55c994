"""The library's error messages speak in library terms (``Core``, properties); the command line adds
its own advice (``hetero-sdk devices``, ``-hint``) to the errors it prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from architecture import code_strings

import hetero_sdk as hs
from hetero_sdk.auto.plugin import AutoPlugin
from hetero_sdk.cli import cli
from hetero_sdk.errors import DeviceNotFoundError

from .helpers import Invoke, assert_one_line_error, make_core

_SDK = Path(hs.__file__).parent
_TITLES = {"hetero-sdk conformance", "hetero-sdk conformance kit (active with --device)", "hetero-sdk conformance: "}
"""Strings naming a command as a title (the conformance kit's pytest option group and report header),
not advising one."""


def test_library_messages_never_advise_a_command() -> None:
    command = re.compile(rf"hetero-sdk ({'|'.join(map(re.escape, cli.commands))})\b")
    advising = [
        f"{path.relative_to(_SDK)}:{line}: {text!r}"
        for path in sorted(_SDK.rglob("*.py"))
        if "cli" not in path.relative_to(_SDK).parts
        for line, text in code_strings(path)
        if command.search(text) and text not in _TITLES
    ]
    assert not advising, advising


def test_the_library_error_for_an_unknown_device_names_core_calls_not_commands() -> None:
    core = hs.Core(plugins={"BROKEN": _BrokenDevice}, autoload=False)  # registered, never loaded
    with pytest.raises(DeviceNotFoundError) as caught:
        core.compile_model(_model(), "NPU")
    assert caught.value.device == "NPU"
    assert "core.available_devices" in str(caught.value)
    assert "hetero-sdk" not in str(caught.value)


def test_the_command_line_adds_hetero_sdk_devices_to_an_unknown_device(invoke: Invoke) -> None:
    result = invoke("query", "mlp", "-d", "ACCELL")
    assert_one_line_error(
        result, "no device 'ACCELL'", "did you mean ACCEL?", "`hetero-sdk devices` lists the devices", exit_code=1
    )


def test_the_command_line_adds_its_options_to_multi(invoke: Invoke) -> None:
    core = make_core(extra={"AUTO": AutoPlugin()})
    result = invoke("benchmark", "mlp", "-niter", "1", "-d", "MULTI:ACCEL,TEMPLATE", core=core)
    assert_one_line_error(
        result,
        "MULTI is AUTO with PERFORMANCE_HINT=CUMULATIVE_THROUGHPUT",
        "core.compile_model(model, 'AUTO:XLA,TEMPLATE', {'PERFORMANCE_HINT': 'CUMULATIVE_THROUGHPUT'})",
        "on the command line: -d AUTO:XLA,TEMPLATE -hint cumulative_throughput",
        exit_code=1,
    )
    assert "hetero-sdk devices" not in result.stderr


class _BrokenDevice:
    """A plugin class whose construction fails, as one whose hardware is absent."""

    def __init__(self) -> None:
        raise RuntimeError("no hardware")


def _model() -> hs.Model:
    x = hs.opset.parameter([2], hs.Type.f32, name="x")
    return hs.Model([hs.opset.relu(x)], [x], "relu")
