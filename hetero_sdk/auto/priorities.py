"""AUTO's candidate devices and their default order, read from what each device reports about itself."""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from hetero_sdk import properties as props
from hetero_sdk.device_name import parse_device_name
from hetero_sdk.errors import DeviceNotFoundError, DeviceUnavailableError, HeteroSDKError

if TYPE_CHECKING:
    from hetero_sdk import Core

__all__ = ["REFERENCE_DEVICES", "DeviceKind", "candidates", "default_priorities", "device_kind"]

REFERENCE_DEVICES = ("TEMPLATE",)
"""Reference devices: they run every op with numpy kernels and compile in milliseconds. AUTO ranks them
after the devices that compile for hardware, and uses them to serve the first inferences while the
chosen device compiles (the startup fallback)."""

_ACCELERATOR_WORDS = frozenset({"gpu", "tpu", "npu", "cuda", "rocm", "discrete", "integrated"})
_HOST_WORDS = frozenset({"cpu", "host"})
_IDENTITY_KEYS = ("DEVICE_TYPE", props.device.architecture, props.device.full_name, props.device.capabilities)


class DeviceKind(enum.IntEnum):
    """What a device runs on, in AUTO's default priority order (lowest first)."""

    ACCELERATOR = 0
    """A GPU, TPU or NPU: it says so in ``DEVICE_TYPE``, ``DEVICE_ARCHITECTURE``, ``FULL_DEVICE_NAME``
    or ``OPTIMIZATION_CAPABILITIES`` (XLA on a GPU reports the architecture ``cuda`` or ``rocm``)."""
    HOST = 1
    """A device that compiles for the host CPU (XLA on the CPU reports the architecture ``cpu``)."""
    REFERENCE = 2
    """A reference device of :data:`REFERENCE_DEVICES` (TEMPLATE)."""
    OTHER = 3
    """Anything else: ranked last, in name order."""


def device_kind(core: Core, device: str) -> DeviceKind:
    """Classifies ``device`` from the identity properties it lists in ``SUPPORTED_PROPERTIES``:
    ``DEVICE_TYPE`` and ``DEVICE_ARCHITECTURE`` first, then ``FULL_DEVICE_NAME`` and
    ``OPTIMIZATION_CAPABILITIES`` (a CPU whose model name mentions its integrated graphics stays a CPU).

    :param core: the Core the device is registered with.
    :param device: a device name (``XLA``, ``XLA.1``).
    :returns: its :class:`DeviceKind`.
    """
    if parse_device_name(device).name in REFERENCE_DEVICES:
        return DeviceKind.REFERENCE
    reported = _identity(core, device)
    for keys in (_IDENTITY_KEYS[:2], _IDENTITY_KEYS[2:]):
        words = {w for key in keys for value in reported.get(key, []) for w in re.findall(r"[a-z0-9]+", value.lower())}
        if words & _ACCELERATOR_WORDS:
            return DeviceKind.ACCELERATOR
        if words & _HOST_WORDS:
            return DeviceKind.HOST
    return DeviceKind.OTHER


def _identity(core: Core, device: str) -> dict[str, list[str]]:
    try:
        supported = core.get_property(device, props.supported_properties)
    except HeteroSDKError:
        return {}
    values: dict[str, list[str]] = {}
    for key in _IDENTITY_KEYS:
        if key not in supported:
            continue
        try:
            value: Any = core.get_property(device, key)
        except HeteroSDKError:
            continue
        values[key] = [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]
    return values


def default_priorities(core: Core, exclude: Iterable[str] = ()) -> list[str]:
    """Every available device (meta-devices have no ids of their own and are not available), accelerators
    first, then devices compiling for the CPU, then reference devices, then the rest; by name within a kind.

    :param core: the Core whose devices are ranked.
    :param exclude: plugin names to leave out (AUTO itself).
    :returns: device names, highest priority first.
    """
    skip = set(exclude)
    devices = [d for d in core.available_devices if parse_device_name(d).name not in skip]
    return sorted(devices, key=lambda d: (device_kind(core, d), d))


def candidates(core: Core, priorities: Sequence[str], own_name: str) -> tuple[list[str], dict[str, str]]:
    """The devices AUTO may choose from: ``priorities`` (or every available device when empty) minus
    those that are registered but unavailable here (a GPU plugin on a machine without a GPU).

    :returns: the candidates in priority order, and each skipped device with the reason.
    :raises DeviceNotFoundError: for a listed name that no plugin is registered under (or AUTO itself),
        or when no device is available at all.
    :raises DeviceUnavailableError: when every listed device is unavailable, with the reasons.
    """
    if not priorities:
        found = default_priorities(core, exclude=(own_name,))
        if not found:
            raise DeviceNotFoundError(f"{own_name} found no available device; install or register a device plugin")
        return found, {}
    kept: list[str] = []
    skipped: dict[str, str] = {}
    for device in priorities:
        if parse_device_name(device).name == own_name:
            raise DeviceNotFoundError(f"{own_name} cannot list itself among its devices ({','.join(priorities)})")
        try:
            core.get_property(device, props.supported_properties)
        except DeviceUnavailableError as exc:
            skipped[device] = str(exc)
            continue
        kept.append(device)
    if not kept:
        reasons = "; ".join(f"{d}: {r}" for d, r in skipped.items())
        raise DeviceUnavailableError(f"none of {own_name}'s devices {', '.join(priorities)} is available: {reasons}")
    return kept, skipped
