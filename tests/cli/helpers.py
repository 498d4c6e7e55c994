"""Helpers of the CLI tests: in-process devices (no installed plugin is needed), Cores built from
them, and checks on command results."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from click.testing import Result

import hetero_sdk as hs
from hetero_sdk.errors import DeviceUnavailableError
from hetero_sdk.hetero.plugin import HeteroPlugin
from hetero_sdk.plugin import hookimpl
from template_plugin import TemplatePlugin


class RefusingDevice(TemplatePlugin):
    """A TEMPLATE that refuses the ops of type :attr:`refused`."""

    refused = "NonMaxSuppression"

    @hookimpl
    def query_model(
        self, model: hs.Model, properties: dict[str, Any], device_name: str, core: hs.Core
    ) -> dict[str, str]:
        answer = TemplatePlugin.query_model(self, model, properties, device_name, core)
        refused = {n.friendly_name for n in model.get_ops() if n.type_name == self.refused}
        return {op: device for op, device in answer.items() if op not in refused}


class NoNmsDevice(RefusingDevice):
    """A TEMPLATE that refuses NonMaxSuppression, as XLA does: HETERO must split the detection sample."""


class AbsentHardwareDevice(TemplatePlugin):
    """A plugin that loads but finds no hardware."""

    @hookimpl
    def get_property(self, name: str, arguments: dict[str, Any], device_name: str, core: hs.Core) -> Any:
        if name == "AVAILABLE_DEVICES":
            raise DeviceUnavailableError("no NPU found: the npu driver is not loaded")
        return TemplatePlugin.get_property(self, name, arguments, device_name, core)


def make_core(accelerator: str = "ACCEL", template_ids: int = 1, extra: dict[str, Any] | None = None) -> hs.Core:
    """TEMPLATE, HETERO and an NMS-refusing accelerator named ``accelerator``, in process."""
    plugins = {
        "TEMPLATE": TemplatePlugin(num_devices=template_ids),
        accelerator: NoNmsDevice(),
        "HETERO": HeteroPlugin(),
        **(extra or {}),
    }
    return hs.Core(plugins=plugins, autoload=False)


Invoke = Callable[..., Result]
"""The ``invoke`` fixture: ``invoke(*args, core=None) -> Result``."""


def parse_json(result: Result) -> Any:
    """The command's stdout as JSON, after checking that it succeeded."""
    assert result.exit_code == 0, (result.exit_code, result.output, result.exception)
    return json.loads(result.stdout)


def assert_one_line_error(result: Result, *fragments: str, exit_code: int | None = None) -> None:
    """The command failed with exactly one line on stderr containing ``fragments``, and no traceback."""
    assert result.exit_code != 0, result.output
    if exit_code is not None:
        assert result.exit_code == exit_code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("hetero-sdk: error: ")
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)


def op_devices(report: dict[str, Any]) -> dict[str, str]:
    """``{op: device}`` from a query or partition JSON."""
    return {name: entry["device"] for name, entry in report["placement"].items()}


def names(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The ``name`` of each row."""
    return [row["name"] for row in rows]
