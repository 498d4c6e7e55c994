"""A mkdocs hook: ``<!-- property-table: NAME = module:Plugin -->`` in a page becomes the table of that
device's properties (key and access, default or value, allowed values), read from the plugin itself
through ``SUPPORTED_PROPERTIES`` and ``get_property``, so the page always matches the code."""

from __future__ import annotations

import importlib
import re
from typing import Any

_DEFAULT_ALLOWED = {"DEVICE_ID": "an id of AVAILABLE_DEVICES"}
_MARKER = re.compile(r"<!-- property-table: ([A-Z][A-Z0-9_]*) = ([\w.]+):([\w.]+) -->")


def _show(value: Any) -> str:
    text = getattr(value, "value", value) if not isinstance(value, (str, int, float, list, tuple, dict)) else value
    return f"`{text!r}`".replace("|", "\\|")


def property_table(device: str, module: str, attr: str) -> str:
    """The Markdown table of the properties of ``module:attr`` registered as ``device``."""
    from hetero_sdk import Core

    plugin = getattr(importlib.import_module(module), attr)()
    core = Core(plugins={device: plugin}, autoload=False)
    specs = getattr(getattr(plugin, "config", None), "specs", {})
    rows = ["| key and access | default or value | allowed values |", "|---|---|---|"]
    for key, access in core.get_property(device, "SUPPORTED_PROPERTIES").items():
        if key == "SUPPORTED_PROPERTIES":
            value = "this table"
        elif str(access) == "WO":
            value = ""
        else:
            value = _show(core.get_property(device, key))
        allowed = getattr(specs.get(key), "allowed", "") or _DEFAULT_ALLOWED.get(key, "")
        if str(access) == "RO":
            allowed = "read-only"
        rows.append(f"| `{key}`<br>{access} | {value} | {allowed.replace('|', '/')} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Replaces every marker of the page with its table."""
    return _MARKER.sub(lambda m: property_table(*m.groups()), markdown)
