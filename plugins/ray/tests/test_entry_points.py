"""Installing hetero-sdk-ray registers RAY through the entry point, and the plugin keeps the hook contract."""

from __future__ import annotations

import pytest

pytest.importorskip("ray")

import hetero_sdk as hs
from hetero_sdk.plugin.discovery import discover

from hetero_sdk_ray import RayPlugin


def test_ray_is_registered_through_the_entry_point() -> None:
    assert discover()["RAY"].value == "hetero_sdk_ray:RayPlugin"


def test_the_plugin_registers_in_process_and_shows_its_identity() -> None:
    core = hs.Core(plugins={"RAY": RayPlugin}, autoload=False)
    assert core.get_property("RAY", "DEVICE_ARCHITECTURE") == "ray"
    assert "EXPORT_IMPORT" in core.get_property("RAY", "OPTIMIZATION_CAPABILITIES")
    assert core.get_property("RAY.1", "EXECUTION_DEVICES") == ["RAY.1"]
    assert "ray" in core.get_versions("RAY")["RAY"].description


def test_auto_ranks_ray_after_every_local_device() -> None:
    from hetero_sdk.auto import DeviceKind, default_priorities, device_kind
    from template_plugin import TemplatePlugin

    core = hs.Core(plugins={"RAY": RayPlugin, "TEMPLATE": TemplatePlugin}, autoload=False)
    assert device_kind(core, "RAY.0") is DeviceKind.OTHER  # not a host CPU device, whatever its name says
    assert default_priorities(core) == ["TEMPLATE", "RAY.0", "RAY.1"]
