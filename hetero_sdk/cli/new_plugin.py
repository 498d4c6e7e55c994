"""``hetero-sdk new-plugin NAME [--dir PATH]``: scaffold a device package that passes the conformance kit
as generated (see :mod:`hetero_sdk.cli.scaffold`)."""

from __future__ import annotations

from pathlib import Path

import click

from hetero_sdk import __version__
from hetero_sdk.cli.output import Printer
from hetero_sdk.cli.scaffold import plugin_names, write_scaffold

__all__ = ["new_plugin"]


@click.command("new-plugin", short_help="Scaffold a device plugin package.")
@click.argument("name")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False),
    help="The package folder to create (it must not exist); default ./hetero-sdk-NAME.",
)
def new_plugin(name: str, directory: str | None) -> None:
    """Scaffold the device package hetero-sdk-NAME: device NAME in upper case with numpy kernels for Add
    and Relu (its KERNELS table), its tests running the conformance kit, a GitHub Actions workflow and a
    README."""
    names = plugin_names(name, sdk_version=__version__)
    target = Path(directory) if directory is not None else Path(names.distribution)
    written = write_scaffold(names, target)
    printer = Printer()
    printer.line(f"created {names.distribution} (device {names.device}) in {target}")
    for path in written:
        printer.line(f"  {path.relative_to(target).as_posix()}")
    printer.line()
    printer.line("next:")
    printer.line(f"  cd {target} && pip install -e '.[testing]' && pytest")
    printer.line(f"  hetero-sdk conformance {names.device}")
