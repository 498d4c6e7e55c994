"""``hetero-sdk new-extension NAME [--dir PATH]``: scaffold an op extension package whose one op (a
kernel and an ONNX rule) passes the package's own tests as generated."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from string import Template

import click

from hetero_sdk import __version__
from hetero_sdk.cli.output import Printer
from hetero_sdk.errors import PathExistsError, PluginValidationError

__all__ = ["EXTENSION_FILES", "ExtensionNames", "extension_names", "new_extension", "render_extension"]

EXTENSION_FILES: dict[str, str] = {
    "pyproject.toml.tmpl": "pyproject.toml",
    "README.md.tmpl": "README.md",
    "gitignore.tmpl": ".gitignore",
    "extension.py.tmpl": "{package}/__init__.py",
    "test_extension.py.tmpl": "tests/test_{name}_extension.py",
}
"""Each template (``hetero_sdk/cli/templates/extension/``) and the path it is written to."""

_NAME = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")


@dataclass(frozen=True)
class ExtensionNames:
    """One name in its places: ``myops`` is distribution ``hetero-sdk-myops``, package
    ``hetero_sdk_myops``, entry point ``myops``, op ``MyopsSoftsign`` of ONNX domain ``com.example.myops``."""

    name: str
    distribution: str
    package: str
    op_type: str
    domain: str
    sdk_version: str


def extension_names(name: str, sdk_version: str = "0.1.0") -> ExtensionNames:
    """The names an extension called ``name`` gets.

    :raises PluginValidationError: for a name that is not lower case words joined by ``-`` or ``_``.
    """
    if not _NAME.match(name):
        hint = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        suggestion = f"; did you mean {hint!r}?" if _NAME.match(hint) else ""
        raise PluginValidationError(
            f"{name!r} is not an extension name: use lower case letters and digits, words joined by '-' or '_' "
            f"(myops, my-ops); it becomes the distribution hetero-sdk-NAME{suggestion}"
        )
    snake = name.replace("-", "_")
    return ExtensionNames(
        name=snake,
        distribution=f"hetero-sdk-{snake.replace('_', '-')}",
        package=f"hetero_sdk_{snake}",
        op_type="".join(part.capitalize() for part in snake.split("_")) + "Softsign",
        domain=f"com.example.{snake}",
        sdk_version=sdk_version,
    )


def render_extension(names: ExtensionNames) -> dict[str, str]:
    """Every file of the scaffold, ``{relative path: text}``, rendered from the packaged templates."""
    fields = asdict(names)
    folder = resources.files("hetero_sdk.cli").joinpath("templates", "extension")
    return {
        path.format(**fields): Template(folder.joinpath(template).read_text(encoding="utf-8")).substitute(fields)
        for template, path in EXTENSION_FILES.items()
    }


@click.command("new-extension", short_help="Scaffold an op extension package.")
@click.argument("name")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False),
    help="The package folder to create (it must not exist); default ./hetero-sdk-NAME.",
)
def new_extension(name: str, directory: str | None) -> None:
    """Scaffold the extension package hetero-sdk-NAME: one op (its definition, a numpy reference kernel
    and an array-API kernel) with the ONNX rule that reads it, its tests and a README."""
    names = extension_names(name, sdk_version=__version__)
    target = Path(directory) if directory is not None else Path(names.distribution)
    if target.exists():
        raise PathExistsError(
            f"{target} already exists; new-extension writes only into a new folder: remove it or choose another --dir"
        )
    printer = Printer()
    printer.line(f"created {names.distribution} (op {names.op_type}, ONNX domain {names.domain}) in {target}")
    for relative, text in render_extension(names).items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        printer.line(f"  {relative}")
    printer.line()
    printer.line("next:")
    printer.line(f"  cd {target} && pip install -e '.[testing]' && pytest")
    printer.line("  hetero-sdk extensions")
