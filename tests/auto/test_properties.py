"""AUTO's properties: its own keys, the standard keys it forwards to the chosen device, per-device
DEVICE_PROPERTIES, and the compiled model's properties (its own, then the chosen device's)."""

from __future__ import annotations

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import properties as props
from hetero_sdk.errors import PropertyValueError, UnsupportedPropertyError
from template_plugin import TemplatePlugin

from .devices import FakeDevice, make_core, matmul_tanh, numpy_matmul_tanh


@pytest.fixture
def core() -> hs.Core:
    return make_core(TEMPLATE=TemplatePlugin, XLA=lambda: FakeDevice("cpu"))


def test_supported_properties_and_identity(core: hs.Core) -> None:
    supported = core.get_property("AUTO", props.supported_properties)
    for key in ("MULTI_DEVICE_PRIORITIES", "DEVICE_PROPERTIES", "ENABLE_STARTUP_FALLBACK", "PERFORMANCE_HINT"):
        assert supported[key] == "RW"
    assert core.get_property("AUTO", props.available_devices) == []
    assert "AUTO" not in core.available_devices
    assert "EXPORT_IMPORT" in core.get_property("AUTO", props.device.capabilities)


def test_performance_hint_reaches_the_chosen_device(core: hs.Core) -> None:
    compiled = core.compile_model(matmul_tanh(), "AUTO:TEMPLATE", {props.hint.performance_mode: "THROUGHPUT"})
    assert compiled.get_property("PERFORMANCE_HINT") == "THROUGHPUT"
    assert compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") >= 2  # TEMPLATE's answer under THROUGHPUT
    core.set_property("AUTO", {props.hint.performance_mode: "THROUGHPUT"})
    assert core.compile_model(matmul_tanh(), "AUTO:TEMPLATE").get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") >= 2
    assert core.get_property("TEMPLATE", "PERFORMANCE_HINT") == "LATENCY", "AUTO changed TEMPLATE's own setting"


def test_device_properties_reach_their_device_only(core: hs.Core) -> None:
    config = {props.device.properties: {"TEMPLATE": {"NUM_STREAMS": 3}}}
    compiled = core.compile_model(matmul_tanh(), "AUTO:TEMPLATE", config)
    assert compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") == 3
    assert compiled.get_property("NUM_STREAMS") == 3  # read from TEMPLATE's compiled model


def test_device_keys_are_forwarded_and_unknown_keys_rejected(core: hs.Core) -> None:
    compiled = core.compile_model(matmul_tanh(), "AUTO:TEMPLATE", {"TEMPLATE_DISABLE_TRANSFORMATIONS": True})
    assert compiled.get_property("TEMPLATE_DISABLE_TRANSFORMATIONS") is True
    with pytest.raises(UnsupportedPropertyError, match=r"NO_SUCH_KEY.*DEVICE_PROPERTIES"):
        core.compile_model(matmul_tanh(), "AUTO", {"NO_SUCH_KEY": 1})
    with pytest.raises(UnsupportedPropertyError):
        core.set_property("AUTO", {"NO_SUCH_KEY": 1})
    with pytest.raises(PropertyValueError, match="ENABLE_STARTUP_FALLBACK"):
        core.set_property("AUTO", {"ENABLE_STARTUP_FALLBACK": "maybe"})


def test_perf_count_profiles_on_the_chosen_device(core: hs.Core) -> None:
    compiled = core.compile_model(matmul_tanh(), "AUTO:TEMPLATE", {props.enable_profiling: True})
    request = compiled.create_infer_request()
    x = np.ones((4, 8), np.float32)
    np.testing.assert_allclose(request.infer({"x": x})["y"], numpy_matmul_tanh(x), rtol=1e-6, atol=1e-6)
    assert request.get_profiling_info(), "no profiling rows from the chosen device"


def test_the_compiled_model_reports_its_candidates(core: hs.Core) -> None:
    compiled = core.compile_model(matmul_tanh(), "AUTO", {"ENABLE_STARTUP_FALLBACK": False})
    assert compiled.get_property("MULTI_DEVICE_PRIORITIES") == "XLA,TEMPLATE"
    assert compiled.get_property("ENABLE_STARTUP_FALLBACK") is False
    supported = compiled.get_property("SUPPORTED_PROPERTIES")
    assert {"EXECUTION_DEVICES", "MULTI_DEVICE_PRIORITIES", "NUM_STREAMS"} <= set(supported)
