"""``hetero-sdk devices``: what each installed device is, and why any failed to load."""

from __future__ import annotations

from typing import Any

import click

from hetero_sdk.cli.context import get_core
from hetero_sdk.cli.output import Printer, emit_json
from hetero_sdk.core import Core
from hetero_sdk.device_name import parse_device_name
from hetero_sdk.errors import HeteroSDKError

__all__ = ["collect_devices", "devices"]


def collect_devices(core: Core) -> dict[str, Any]:
    """Everything ``devices`` shows, JSON-ready.

    :returns: ``available`` (one entry per device string that compile_model accepts: ``device``,
        ``plugin``, ``id``, ``ids`` of its plugin, ``full_name``, ``architecture``, ``capabilities``,
        ``version``), ``meta`` (loaded plugins with no hardware of their own, such as HETERO, used as
        ``HETERO:A,B``), ``unavailable`` (``device`` and ``reason``) and ``broken_extensions`` (op
        extensions that failed to load: ``extension``, ``distribution`` and ``reason``).
    """
    available = core.available_devices
    unavailable = core.unavailable_devices
    plugins = {parse_device_name(d).name for d in available}
    entries = []
    for device in available:
        parsed = parse_device_name(device)
        ids = _property(core, parsed.name, "AVAILABLE_DEVICES") or []
        entries.append(
            {
                "device": device,
                "plugin": parsed.name,
                "id": parsed.device_id,
                "ids": [str(i) for i in (ids.split(",") if isinstance(ids, str) else ids)],
                **_describe(core, device),
            }
        )
    meta = [
        {"device": name, **_describe(core, name)}
        for name in core.registered_devices
        if name not in plugins and name not in unavailable
    ]
    return {
        "available": entries,
        "meta": meta,
        "unavailable": [{"device": name, "reason": reason} for name, reason in unavailable.items()],
        "broken_extensions": [
            {"extension": e.name, "distribution": e.distribution, "reason": e.error} for e in core.extensions if e.error
        ],
    }


def _describe(core: Core, device: str) -> dict[str, Any]:
    capabilities = _property(core, device, "OPTIMIZATION_CAPABILITIES")
    try:
        version = next(iter(core.get_versions(device).values()))
        version_info: dict[str, str] | None = {
            "build_number": version.build_number,
            "description": version.description,
        }
    except HeteroSDKError:
        version_info = None
    return {
        "full_name": _property(core, device, "FULL_DEVICE_NAME"),
        "architecture": _property(core, device, "DEVICE_ARCHITECTURE"),
        "capabilities": list(capabilities) if capabilities is not None else None,
        "version": version_info,
    }


def _property(core: Core, device: str, key: str) -> Any:
    """A device property, or None when the device does not have it."""
    try:
        return core.get_property(device, key)
    except HeteroSDKError:
        return None


def _version(entry: dict[str, Any]) -> str | None:
    version = entry["version"]
    return f"{version['build_number']} ({version['description']})" if version else None


@click.command(short_help="List the devices, their ids, capabilities and versions.")
@click.option("--json", "as_json", is_flag=True, help="Print the devices as JSON.")
@click.pass_context
def devices(ctx: click.Context, as_json: bool) -> None:
    """List the devices: full name, ids, capabilities and version of each available device, the
    meta-devices (HETERO), and the devices that failed to load with the reason."""
    info = collect_devices(get_core(ctx))
    if as_json:
        emit_json(info)
        return
    out = Printer()
    out.heading("Available devices")
    if info["available"]:
        out.table(
            ["DEVICE", "IDS", "FULL NAME", "ARCHITECTURE", "CAPABILITIES", "VERSION"],
            [
                [e["device"], e["ids"], e["full_name"], e["architecture"], e["capabilities"], _version(e)]
                for e in info["available"]
            ],
        )
    else:
        out.line("  none: install a device plugin (pip install hetero-sdk-jax) or register one")
    if info["meta"]:
        out.heading("Meta-devices (use as NAME:A,B,... e.g. HETERO:XLA,TEMPLATE)")
        out.table(
            ["DEVICE", "FULL NAME", "CAPABILITIES", "VERSION"],
            [[e["device"], e["full_name"], e["capabilities"], _version(e)] for e in info["meta"]],
        )
    if info["unavailable"]:
        out.heading("Unavailable devices")
        for entry in info["unavailable"]:
            out.line(f"  {entry['device']}: {entry['reason']}", style="yellow")
    if info["broken_extensions"]:
        out.heading("Broken extensions (hetero-sdk extensions lists them all)")
        for entry in info["broken_extensions"]:
            where = entry["distribution"] or "added in process"
            out.line(f"  {entry['extension']} ({where}): {entry['reason']}", style="yellow")
