"""Device strings: ``NAME``, ``NAME.ID`` and ``META:A,B,...``, parsed in exactly this one place."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hetero_sdk.errors import DeviceNameError

__all__ = ["DeviceName", "format_device_name", "parse_device_name"]

_NAME = re.compile(r"^([A-Z][A-Z0-9_]*)(?:\.([A-Za-z0-9_]+))?$")


@dataclass(frozen=True, slots=True)
class DeviceName:
    """A parsed device string.

    :ivar name: the plugin's name (``TEMPLATE``).
    :ivar device_id: the id after the dot, or None.
    :ivar targets: for a meta device (``HETERO:A,B``), the devices after the colon, in priority order.
    """

    name: str
    device_id: str | None = None
    targets: tuple[str, ...] = ()

    @property
    def full(self) -> str:
        """``NAME`` or ``NAME.ID`` (without targets)."""
        return format_device_name(self.name, self.device_id)

    def __str__(self) -> str:
        return self.full + (":" + ",".join(self.targets) if self.targets else "")


def parse_device_name(text: str) -> DeviceName:
    """Parses a device string. Names are UPPER_CASE and case-sensitive; spaces are not allowed.

    :raises DeviceNameError: naming the malformed part, with the accepted forms (a malformed
        name can name no device).
    """
    if not isinstance(text, str) or not text:
        raise DeviceNameError(f"device name {text!r} is empty; use NAME, NAME.ID or HETERO:A,B")
    head, colon, tail = text.partition(":")
    match = _NAME.match(head)
    if match is None:
        raise DeviceNameError(
            f"device name {text!r} is malformed: {head!r} must be an UPPER_CASE name with an optional .ID "
            "(e.g. TEMPLATE, XLA.1)"
        )
    targets: tuple[str, ...] = ()
    if colon:
        targets = tuple(tail.split(","))
        for target in targets:
            if not _NAME.match(target):
                raise DeviceNameError(
                    f"device name {text!r} is malformed: target {target!r} must be NAME or NAME.ID, "
                    "comma-separated without spaces (e.g. HETERO:XLA,TEMPLATE)"
                )
    return DeviceName(match.group(1), match.group(2), targets)


def format_device_name(name: str, device_id: object = None) -> str:
    """``NAME``, or ``NAME.ID`` for a device id: the one place device strings are built."""
    return name if device_id is None else f"{name}.{device_id}"
