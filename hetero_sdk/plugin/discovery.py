"""Finding device plugins through the ``hetero_sdk.devices`` entry-point group."""

from __future__ import annotations

import logging
import sys
from importlib.metadata import EntryPoint, entry_points
from typing import Any

__all__ = ["ENTRY_POINT_GROUP", "discover", "load_entry_point"]

ENTRY_POINT_GROUP = "hetero_sdk.devices"
_log = logging.getLogger(__name__)


def discover() -> dict[str, EntryPoint]:
    """The installed device entry points by device name; nothing is imported here.

    When two distributions register one name, the first found wins and the other is logged.
    """
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in found:
            _log.warning(
                "device %s is registered twice (%s and %s); using the first", ep.name, found[ep.name].value, ep.value
            )
            continue
        found[ep.name] = ep
    return found


def load_entry_point(ep: EntryPoint) -> Any:
    """What ``ep`` names (``module:attr``), imported.

    :raises ImportError: or ``AttributeError``, of the original type and chained to it, whose message
        adds the file the module was imported from: a source folder of the same name on ``sys.path``
        (``python -m pytest`` puts the working folder first) shadowing the installed package is the
        usual cause. The Core reports it as the device's ``DeviceUnavailableError``.
    """
    try:
        return ep.load()
    except (ImportError, AttributeError) as exc:
        module = sys.modules.get(ep.module)
        where = getattr(module, "__file__", None) or "nowhere (the import failed)"
        raise type(exc)(
            f"{exc}; entry point {ep.name} = {ep.value!r}: module {ep.module!r} was imported from {where}. "
            "If that is a source folder shadowing the installed package, run from another folder or with python -P"
        ) from exc
