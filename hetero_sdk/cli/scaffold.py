"""What ``hetero-sdk new-plugin NAME`` writes: a device package ``hetero-sdk-<name>`` rendered from the
templates in ``hetero_sdk/cli/templates/plugin/`` (package data, ``string.Template`` placeholders)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from importlib import resources
from importlib.metadata import entry_points
from pathlib import Path
from string import Template

from hetero_sdk.device_name import parse_device_name
from hetero_sdk.errors import DeviceNameError, PathExistsError

__all__ = ["FILES", "PluginNames", "plugin_names", "render", "write_scaffold"]

DEVICE_GROUP = "hetero_sdk.devices"

FILES: dict[str, str] = {
    "pyproject.toml.tmpl": "pyproject.toml",
    "README.md.tmpl": "README.md",
    "gitignore.tmpl": ".gitignore",
    "plugin.py.tmpl": "{package}/__init__.py",
    "test_device.py.tmpl": "tests/test_{name}_device.py",
    "ci.yml.tmpl": ".github/workflows/ci.yml",
}
"""Each template and the path it is written to inside the package folder."""

_NAME = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")


@dataclass(frozen=True)
class PluginNames:
    """One name in its places: ``npu`` is distribution ``hetero-sdk-npu``, package ``hetero_sdk_npu``,
    device ``NPU``, classes ``NpuPlugin`` and ``NpuCompiledModel``."""

    name: str
    distribution: str
    package: str
    device: str
    plugin_class: str
    compiled_class: str
    sdk_version: str


def plugin_names(name: str, sdk_version: str = "0.1.0") -> PluginNames:
    """The names a plugin called ``name`` gets.

    :param name: lower case letters and digits, words joined by single ``-`` or ``_`` (``npu``, ``my-npu``).
    :param sdk_version: the least hetero-sdk version the package depends on.
    :raises DeviceNameError: for a name that is not of that form, or whose device is already installed.
    """
    if not _NAME.match(name):
        hint = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        suggestion = f"; did you mean {hint!r}?" if _NAME.match(hint) else ""
        raise DeviceNameError(
            f"{name!r} is not a plugin name: use lower case letters and digits, words joined by '-' or '_' "
            f"(npu, my-npu); it becomes the distribution hetero-sdk-NAME and the device NAME in upper case"
            f"{suggestion}"
        )
    snake = name.replace("-", "_")
    device = parse_device_name(snake.upper()).name
    installed = {ep.name: ep.value for ep in entry_points(group=DEVICE_GROUP)}
    if device in installed:
        raise DeviceNameError(
            f"device {device} is already installed ({installed[device]}); choose another NAME for new-plugin"
        )
    prefix = "".join(part.capitalize() for part in snake.split("_"))
    return PluginNames(
        name=snake,
        distribution=f"hetero-sdk-{snake.replace('_', '-')}",
        package=f"hetero_sdk_{snake}",
        device=device,
        plugin_class=f"{prefix}Plugin",
        compiled_class=f"{prefix}CompiledModel",
        sdk_version=sdk_version,
    )


def render(names: PluginNames) -> dict[str, str]:
    """Every file of the scaffold, ``{relative path: text}``, rendered from the packaged templates."""
    fields = asdict(names)
    folder = resources.files("hetero_sdk.cli").joinpath("templates", "plugin")
    return {
        path.format(**fields): Template(folder.joinpath(template).read_text(encoding="utf-8")).substitute(fields)
        for template, path in FILES.items()
    }


def write_scaffold(names: PluginNames, target: Path) -> list[Path]:
    """Writes the scaffold into the new folder ``target``; never into an existing path.

    :returns: the files written, in ``FILES`` order.
    :raises PathExistsError: when ``target`` exists (nothing is written).
    """
    if target.exists():
        raise PathExistsError(
            f"{target} already exists; new-plugin writes only into a new folder: remove it or choose another --dir"
        )
    files = render(names)
    written = []
    for relative, text in files.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
