"""After ``pip install plugins/jax`` the Core finds the XLA, GPU and TPU devices through entry points."""

from __future__ import annotations

from importlib.metadata import entry_points

import hetero_sdk as hs
import pytest

_INSTALLED = {ep.name: ep.value for ep in entry_points(group="hetero_sdk.devices")}


@pytest.mark.skipif("XLA" not in _INSTALLED, reason="hetero-sdk-jax is not installed (pip install -e plugins/jax)")
def test_entry_points_register_xla_gpu_and_tpu() -> None:
    assert _INSTALLED["XLA"] == "hetero_sdk_jax:XlaPlugin"
    assert _INSTALLED["GPU"] == "hetero_sdk_jax:gpu_plugin"
    assert _INSTALLED["TPU"] == "hetero_sdk_jax:tpu_plugin"


@pytest.mark.skipif("XLA" not in _INSTALLED, reason="hetero-sdk-jax is not installed (pip install -e plugins/jax)")
def test_core_lists_xla_among_available_devices() -> None:
    core = hs.Core()
    assert "XLA" in core.available_devices or "XLA.0" in core.available_devices
    assert {"XLA", "GPU", "TPU"} <= set(core.registered_devices)
