"""Finding device plugins through the ``hetero_sdk.devices`` entry-point group."""

from __future__ import annotations

import logging
from importlib.metadata import EntryPoint, entry_points

__all__ = ["ENTRY_POINT_GROUP", "discover"]

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
