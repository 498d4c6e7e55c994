"""What the ``hetero-sdk`` commands share: exit statuses, the one-line error, and the Core."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from hetero_sdk.core import Core
from hetero_sdk.device_name import parse_device_name

__all__ = ["EXIT_FAILURE", "EXIT_USAGE", "LOAD_CONFIG", "CLIError", "apply_config_file", "check_installed", "get_core"]

EXIT_FAILURE = 1
"""A device, model or file problem, or a failed results check."""
EXIT_USAGE = 2
"""A wrong command line, or a missing tool the command needs (as click uses it)."""


class CLIError(click.ClickException):
    """A one-line error with its exit status."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]


def get_core(ctx: click.Context) -> Core:
    """The Core the commands share: ``obj["core"]`` when the caller passed one (tests, embedding
    applications: ``cli.main(args, obj={"core": core})``), else a new ``Core()`` finding the installed
    devices."""
    obj = ctx.find_root().ensure_object(dict)
    if obj.get("core") is None:
        obj["core"] = Core()
    return obj["core"]


def check_installed(core: Core, device: str) -> None:
    """Raises the Core's typed error (one CLI error line) for a device, id or target not installed."""
    parsed = parse_device_name(device)
    for name in [device if not parsed.targets else parsed.name, *parsed.targets]:
        core.get_property(name, "SUPPORTED_PROPERTIES")


LOAD_CONFIG = click.option(
    "-load_config",
    "--load-config",
    "config_file",
    type=click.Path(dir_okay=False),
    help='Properties from a JSON file, as benchmark_app: {"DEVICE": {"PROPERTY": value}}.',
)
"""The ``-load_config FILE`` option of the commands that compile (read with :func:`apply_config_file`)."""


def apply_config_file(core: Core, path: str | None, device: str) -> dict[str, Any]:
    """Reads a ``-load_config`` file as OpenVINO's benchmark_app does (``{"DEVICE": {"KEY": value}}``):
    the entry of ``device``'s own name becomes the compile config (returned), the others are set on
    their devices with ``core.set_property``.

    :raises OSError: for a missing or unreadable file.
    :raises CLIError: for bad JSON, or an entry that is not an object of properties.
    """
    if path is None:
        return {}
    text = Path(path).read_text()  # a missing file is an OSError: FileNotFoundError, exit 1
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise CLIError(f"-load_config {path}: cannot read it as JSON: {exc}", EXIT_USAGE) from None
    if not isinstance(document, dict) or not all(isinstance(v, dict) for v in document.values()):
        raise CLIError(
            f'-load_config {path}: expected {{"DEVICE": {{"PROPERTY": value}}}}, as benchmark_app reads', EXIT_USAGE
        )
    own = parse_device_name(device).name
    for name, properties in document.items():
        if name != own:
            core.set_property(name, properties)
    return dict(document.get(own, {}))
