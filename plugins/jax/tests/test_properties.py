"""The XLA device's properties behave as the conformance checklist asks."""

from __future__ import annotations

import hetero_sdk as hs
import jax
import numpy as np
import pytest
from hetero_sdk import Model, Type, opset
from hetero_sdk.errors import DeviceNotFoundError, PropertyValueError, UnsupportedPropertyError

from hetero_sdk_jax import XlaPlugin

RW_VALUES = {
    "PERF_COUNT": [True, False],
    "PERFORMANCE_HINT": ["LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT"],
    "EXECUTION_MODE_HINT": ["PERFORMANCE", "ACCURACY"],
    "INFERENCE_PRECISION_HINT": [Type.f32, Type.bf16],
    "NUM_STREAMS": [1, 4, 0],
    "PERFORMANCE_HINT_NUM_REQUESTS": [0, 3],
}
REQUIRED = [
    "FULL_DEVICE_NAME", "DEVICE_ARCHITECTURE", "OPTIMIZATION_CAPABILITIES", "AVAILABLE_DEVICES",
    "RANGE_FOR_ASYNC_INFER_REQUESTS", "EXECUTION_DEVICES", "DEVICE_ID", "PERF_COUNT", "PERFORMANCE_HINT",
    "EXECUTION_MODE_HINT", "NUM_STREAMS", "INFERENCE_PRECISION_HINT",
]  # fmt: skip
WRONG_VALUES = {
    "PERF_COUNT": "maybe",
    "PERFORMANCE_HINT": "FAST",
    "EXECUTION_MODE_HINT": "SLOPPY",
    "INFERENCE_PRECISION_HINT": "i8",
    "NUM_STREAMS": -1,
    "PERFORMANCE_HINT_NUM_REQUESTS": -1,
    "DEVICE_ID": "7",
}


@pytest.fixture
def core() -> hs.Core:
    return hs.Core(plugins={"XLA": XlaPlugin}, autoload=False)


def _model() -> Model:
    x = opset.parameter([2, 3], Type.f32, name="x")
    return Model([opset.relu(x, name="y")], [x], name="tiny")


def test_supported_properties_read_back_non_empty_values(core: hs.Core) -> None:
    supported = core.get_property("XLA", "SUPPORTED_PROPERTIES")
    assert set(supported.values()) <= {"RO", "RW", "WO"}
    assert set(REQUIRED) <= set(supported)
    for key, mutability in supported.items():
        if mutability != "WO" and key != "CACHE_DIR":
            value = core.get_property("XLA", key)
            assert value is not None and value != "" and value != []
    assert core.get_property("XLA", "CACHE_DIR") == ""  # no cache, OpenVINO's default


def test_identity_comes_from_the_jax_device(core: hs.Core) -> None:
    device = jax.devices()[0]
    architecture = core.get_property("XLA", "DEVICE_ARCHITECTURE")
    assert architecture == device.platform or (device.platform == "gpu" and architecture in ("cuda", "rocm"))
    full_name = core.get_property("XLA", "FULL_DEVICE_NAME")
    assert architecture in full_name and (device.platform == "cpu" or device.device_kind in full_name)
    assert core.get_property("XLA", "AVAILABLE_DEVICES") == [str(i) for i in range(len(jax.devices()))]
    capabilities = core.get_property("XLA", "OPTIMIZATION_CAPABILITIES")
    assert "FP32" in capabilities and "EXPORT_IMPORT" in capabilities
    start, end, step = core.get_property("XLA", "RANGE_FOR_ASYNC_INFER_REQUESTS")
    assert 1 <= start <= end and step >= 1
    assert core.get_property("XLA", "EXECUTION_DEVICES") == ["XLA.0"]
    version = core.get_versions("XLA")["XLA"]
    assert version.build_number and "jax" in version.description


@pytest.mark.parametrize("key", sorted(RW_VALUES))
def test_rw_properties_set_read_back_and_reset_to_default(core: hs.Core, key: str) -> None:
    default = core.get_property("XLA", key)
    for value in RW_VALUES[key]:
        core.set_property("XLA", {key: value})
        assert core.get_property("XLA", key) == value
    core.set_property("XLA", {key: default})
    assert core.get_property("XLA", key) == default


@pytest.mark.parametrize("key", sorted(WRONG_VALUES))
def test_wrong_values_raise_and_keep_the_old_value(core: hs.Core, key: str) -> None:
    before = core.get_property("XLA", key)
    with pytest.raises(PropertyValueError, match=key):
        core.set_property("XLA", {key: WRONG_VALUES[key]})
    assert core.get_property("XLA", key) == before


def test_one_wrong_entry_changes_nothing(core: hs.Core) -> None:
    with pytest.raises(PropertyValueError):
        core.set_property("XLA", {"PERF_COUNT": True, "PERFORMANCE_HINT": "FAST"})
    assert core.get_property("XLA", "PERF_COUNT") is False


def test_unknown_and_read_only_keys_raise(core: hs.Core) -> None:
    with pytest.raises(UnsupportedPropertyError, match="PERF_COUNTS"):
        core.set_property("XLA", {"PERF_COUNTS": True})
    with pytest.raises(UnsupportedPropertyError, match="read-only"):
        core.set_property("XLA", {"FULL_DEVICE_NAME": "mine"})
    with pytest.raises(UnsupportedPropertyError):
        core.get_property("XLA", "NO_SUCH_KEY")
    with pytest.raises(UnsupportedPropertyError):
        core.compile_model(_model(), "XLA", {"NO_SUCH_KEY": 1})


def test_core_values_reach_compiled_models_and_compile_config_wins_without_changing_them(core: hs.Core) -> None:
    core.set_property("XLA", {"PERF_COUNT": True, "PERFORMANCE_HINT": "THROUGHPUT"})
    compiled = core.compile_model(_model(), "XLA", {"PERFORMANCE_HINT": "LATENCY"})
    assert compiled.get_property("PERF_COUNT") is True
    assert compiled.get_property("PERFORMANCE_HINT") == "LATENCY"
    assert compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") == 1
    assert core.get_property("XLA", "PERFORMANCE_HINT") == "THROUGHPUT"
    assert core.compile_model(_model(), "XLA").get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") >= 1


@pytest.mark.parametrize("hint", ["LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT"])
@pytest.mark.parametrize("mode", ["PERFORMANCE", "ACCURACY"])
@pytest.mark.parametrize("perf_count", [True, False])
def test_hints_read_back_after_compile(core: hs.Core, hint: str, mode: str, perf_count: bool) -> None:
    config = {"PERFORMANCE_HINT": hint, "EXECUTION_MODE_HINT": mode, "PERF_COUNT": perf_count}
    compiled = core.compile_model(_model(), "XLA", config)
    for key, value in config.items():
        assert compiled.get_property(key) == value
    request = compiled.create_infer_request()
    request.infer({"x": np.ones((2, 3), np.float32)})
    assert bool(request.get_profiling_info()) is perf_count


def test_compiled_model_properties(core: hs.Core) -> None:
    compiled = core.compile_model(_model(), "XLA")
    assert compiled.get_property("NETWORK_NAME") == "tiny"
    assert compiled.get_property("EXECUTION_DEVICES") == ["XLA.0"]
    assert compiled.get_property("LOADED_FROM_CACHE") is False
    assert compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") >= 1
    assert compiled.get_property("DEVICE_ID") == "0"
    with pytest.raises(UnsupportedPropertyError):
        compiled.set_property({"PERF_COUNT": True})


def test_device_ids(core: hs.Core) -> None:
    compiled = core.compile_model(_model(), "XLA.0")
    assert compiled.get_property("EXECUTION_DEVICES") == ["XLA.0"]
    with pytest.raises(DeviceNotFoundError, match=r"XLA\.9"):
        core.compile_model(_model(), "XLA.9")
    assert core.get_property("XLA.0", "FULL_DEVICE_NAME") == core.get_property("XLA", "FULL_DEVICE_NAME")
