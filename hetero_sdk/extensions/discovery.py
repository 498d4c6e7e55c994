"""Finding extensions through the ``hetero_sdk.extensions`` entry-point group, and importing names."""

from __future__ import annotations

import importlib
import sys
from importlib.metadata import EntryPoint, entry_points
from typing import Any

__all__ = ["ENTRY_POINT_GROUP", "distribution_of", "import_name", "installed", "load"]

ENTRY_POINT_GROUP = "hetero_sdk.extensions"


def installed() -> list[EntryPoint]:
    """The installed extension entry points, first found first; nothing is imported here."""
    seen: set[str] = set()
    found = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in seen:
            seen.add(ep.name)
            found.append(ep)
    return found


def distribution_of(ep: EntryPoint) -> tuple[str, str]:
    """The name and version of the distribution that registers ``ep`` (``("", "")`` when unknown)."""
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "", ""
    return dist.metadata["Name"] or "", dist.version or ""


def load(ep: EntryPoint) -> Any:
    """What ``ep`` names, imported; a factory (a callable that is not an extension) is called.

    :raises ImportError: or ``AttributeError``, chained, adding the file the module came from (a source
        folder shadowing the installed package is the usual cause).
    """
    try:
        value = ep.load()
    except (ImportError, AttributeError) as exc:
        module = sys.modules.get(ep.module)
        where = getattr(module, "__file__", None) or "nowhere (the import failed)"
        raise type(exc)(
            f"{exc}; entry point {ep.name} = {ep.value!r}: module {ep.module!r} was imported from {where}"
        ) from exc
    return value


def import_name(name: str) -> Any:
    """The object ``"package.module:attr"`` names (``attr`` may be dotted).

    :raises ValueError: when ``name`` is not of that form.
    :raises ImportError: or ``AttributeError`` from the import.
    """
    module_name, sep, attr = name.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"{name!r} is not an importable name; write 'package.module:attribute'")
    value: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        value = getattr(value, part)
    return value
