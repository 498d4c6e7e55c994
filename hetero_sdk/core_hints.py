"""The advice in the message of :class:`~hetero_sdk.errors.DeviceNotFoundError`, for a name that
names no registered device: AUTO for OpenVINO's ``MULTI``, the devices that run on a kind of hardware
(OpenVINO's ``CPU``), else a close name.

Only devices already loaded are asked which hardware they run on: a wrong name is answered at once,
without importing or starting any device (a JAX backend, a Ray cluster).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from typing import Any

from hetero_sdk.device_name import format_device_name
from hetero_sdk.errors import DeviceNotFoundError, HeteroSDKError, suggest

__all__ = ["device_not_found"]

_UNASKED = (
    "; only loaded devices were asked which hardware they run on: core.available_devices loads every "
    "device, and core.get_property(device, 'FULL_DEVICE_NAME') names its hardware"
)


def device_not_found(
    name: str,
    registered: Sequence[str],
    loaded: Sequence[str],
    ids_of: Callable[[str], list[str]],
    get_property: Callable[[str, str], Any],
) -> DeviceNotFoundError:
    """The error for ``name``, naming the ``registered`` devices, with advice.

    :param loaded: the registered devices already loaded, the only ones asked about their hardware.
    :param ids_of: a loaded device's ids (none for a meta device such as HETERO).
    :param get_property: the Core's ``get_property``.
    """
    hint = _multi_hint(name, registered) or _hardware_hint(name, loaded, ids_of, get_property)
    if not hint:
        close = suggest(name, list(registered))
        hint = (f"; {close}" if close else "") + (_UNASKED if set(registered) - set(loaded) else "")
    return DeviceNotFoundError(f"no device {name!r}; registered: {', '.join(registered) or 'none'}{hint}", name)


def _multi_hint(name: str, registered: Sequence[str]) -> str:
    """OpenVINO's ``MULTI`` (deprecated there for AUTO with the cumulative hint) when AUTO is here."""
    if name.upper() != "MULTI" or "AUTO" not in registered:
        return ""
    return (
        "; MULTI is AUTO with PERFORMANCE_HINT=CUMULATIVE_THROUGHPUT (as in OpenVINO 2025): compile on "
        "'AUTO:XLA,TEMPLATE' with that hint (core.compile_model(model, 'AUTO:XLA,TEMPLATE', "
        "{'PERFORMANCE_HINT': 'CUMULATIVE_THROUGHPUT'}))"
    )


def _hardware_hint(
    name: str, loaded: Sequence[str], ids_of: Callable[[str], list[str]], get_property: Callable[[str, str], Any]
) -> str:
    """For a hardware name: the loaded devices that report it in DEVICE_ARCHITECTURE or FULL_DEVICE_NAME
    first, then the other loaded devices, then the meta devices."""
    available: list[str] = []
    meta: list[str] = []
    for device in loaded:
        try:
            ids = ids_of(device)
        except Exception:  # a broken third-party plugin must not break the host
            continue
        if not ids:
            meta.append(device)
        available += [device] if len(ids) == 1 else [format_device_name(device, i) for i in ids]
    runs_on: list[str] = []
    for device in available:
        with contextlib.suppress(HeteroSDKError):
            reported = [str(get_property(device, key)) for key in ("DEVICE_ARCHITECTURE", "FULL_DEVICE_NAME")]
            if name.lower() in re.findall(r"[a-z0-9]+", " ".join(reported).lower()):
                runs_on.append(device)
    if not runs_on:
        return ""
    choices = [f"{d} (runs on the {name} here)" for d in runs_on] + [d for d in available if d not in runs_on]
    choices += meta
    return f"; use {', '.join(choices[:-1])} or {choices[-1]}" if len(choices) > 1 else f"; use {choices[0]}"
