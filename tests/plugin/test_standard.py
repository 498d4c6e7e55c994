"""The standard properties every device shares, and ConfiguredDevice, the property hooks written once."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import Type
from hetero_sdk.errors import PluginValidationError, PropertyValueError, UnsupportedPropertyError
from hetero_sdk.plugin import (
    CompiledModel,
    ConfiguredDevice,
    DeviceConfig,
    Mutability,
    PropertySpec,
    RemoteContext,
    RunContext,
    SupportTable,
    hookimpl,
    read_only,
    standard,
)

# -- each factory: OpenVINO key, default and the allowed values quoted in errors --------------------------

DECLARED = [
    (standard.device_id, "DEVICE_ID", "0", "an id of AVAILABLE_DEVICES"),
    (standard.perf_count, "PERF_COUNT", False, "True, False"),
    (standard.performance_hint, "PERFORMANCE_HINT", "LATENCY", "LATENCY, THROUGHPUT, CUMULATIVE_THROUGHPUT"),
    (standard.performance_hint_num_requests, "PERFORMANCE_HINT_NUM_REQUESTS", 0, "integers 0..2147483647"),
    (standard.num_streams, "NUM_STREAMS", 0, "integers 0..64, AUTO or NUMA (0, AUTO and NUMA: from PERFORMANCE_HINT)"),
    (standard.inference_num_threads, "INFERENCE_NUM_THREADS", 0, "integers 0..2147483647 (0: auto)"),
    (standard.execution_mode_hint, "EXECUTION_MODE_HINT", "PERFORMANCE", "PERFORMANCE, ACCURACY"),
    (standard.inference_precision_hint, "INFERENCE_PRECISION_HINT", Type.f32, "f32"),
    (standard.exclusive_async_requests, "EXCLUSIVE_ASYNC_REQUESTS", False, "True, False"),
]


@pytest.mark.parametrize(("factory", "key", "default", "allowed"), DECLARED, ids=[d[1] for d in DECLARED])
def test_each_factory_declares_the_openvino_key_its_default_and_allowed_values(
    factory: Callable[[], PropertySpec], key: str, default: object, allowed: str
) -> None:
    spec = factory()
    assert (spec.key, spec.mutability, spec.default, spec.allowed) == (key, Mutability.RW, default, allowed)
    assert spec.compute is None


ACCEPTED = [
    (standard.perf_count, "YES", True), (standard.perf_count, "no", False), (standard.perf_count, True, True),
    (standard.performance_hint, "THROUGHPUT", "THROUGHPUT"),
    (standard.performance_hint, "CUMULATIVE_THROUGHPUT", "CUMULATIVE_THROUGHPUT"),
    (standard.performance_hint_num_requests, "4", 4), (standard.performance_hint_num_requests, 0, 0),
    (standard.num_streams, 64, 64), (standard.num_streams, "0", 0),
    (standard.num_streams, "AUTO", 0), (standard.num_streams, "NUMA", 0),
    (standard.inference_num_threads, 8, 8), (standard.inference_num_threads, "1", 1),
    (standard.inference_num_threads, 2**31 - 1, 2**31 - 1),
    (standard.execution_mode_hint, "ACCURACY", "ACCURACY"),
    (standard.inference_precision_hint, "f32", Type.f32), (standard.inference_precision_hint, np.float32, Type.f32),
    (standard.exclusive_async_requests, "YES", True),
]  # fmt: skip


@pytest.mark.parametrize(("factory", "value", "expected"), ACCEPTED)
def test_converters_normalise_the_values_openvino_accepts(
    factory: Callable[[], PropertySpec], value: object, expected: object
) -> None:
    normalised = factory().check(value)
    assert normalised == expected and type(normalised) is type(expected)


REJECTED = [
    (standard.perf_count, "maybe"), (standard.perf_count, 1),
    (standard.performance_hint, "FAST"), (standard.performance_hint, "latency"),
    (standard.performance_hint_num_requests, -1), (standard.performance_hint_num_requests, 2.5),
    (standard.num_streams, 65), (standard.num_streams, -1), (standard.num_streams, "many"),
    (standard.num_streams, True), (standard.num_streams, "auto"), (standard.num_streams, "HYBRID"),
    (standard.inference_num_threads, -2), (standard.inference_num_threads, None),
    (standard.performance_hint_num_requests, 2**70), (standard.performance_hint_num_requests, 2**31),
    (standard.inference_num_threads, 2**70), (standard.inference_num_threads, str(2**31)),
    (standard.execution_mode_hint, "FASTEST"),
    (standard.inference_precision_hint, "f16"), (standard.inference_precision_hint, np.int8),
    (standard.exclusive_async_requests, "sometimes"),
    (standard.device_priorities, 123), (standard.device_priorities, ["TEMPLATE", 1]),
]  # fmt: skip


@pytest.mark.parametrize(("factory", "value"), REJECTED)
def test_wrong_values_raise_naming_the_key_and_the_allowed_values(
    factory: Callable[[], PropertySpec], value: object
) -> None:
    spec = factory()
    with pytest.raises(PropertyValueError) as info:
        spec.check(value)
    assert str(info.value) == f"{value!r} is not a valid value for {spec.key}; allowed: {spec.allowed}"


@settings(max_examples=40, deadline=None)
@given(maximum=st.integers(1, 256), value=st.integers(-10, 300))
def test_num_streams_accepts_exactly_zero_to_its_maximum(maximum: int, value: int) -> None:
    spec = standard.num_streams(maximum=maximum)
    assert spec.allowed == f"integers 0..{maximum}, AUTO or NUMA (0, AUTO and NUMA: from PERFORMANCE_HINT)"
    if 0 <= value <= maximum:
        assert spec.check(value) == value
    else:
        with pytest.raises(PropertyValueError, match=re.escape(f"0..{maximum}, ")):
            spec.check(value)


def test_defaults_can_be_chosen_and_are_checked_where_declared() -> None:
    assert standard.performance_hint(default="THROUGHPUT").default == "THROUGHPUT"
    assert standard.num_streams(default=2).default == 2
    assert standard.perf_count(default=True).default is True
    assert standard.device_id(default="1").default == "1"
    with pytest.raises(PropertyValueError, match="PERFORMANCE_HINT"):
        standard.performance_hint(default="FAST")
    with pytest.raises(PropertyValueError, match="NUM_STREAMS"):
        standard.num_streams(default=9, maximum=8)
    with pytest.raises(PropertyValueError, match="EXECUTION_MODE_HINT"):
        standard.execution_mode_hint(default="SLOW")


def test_inference_precision_hint_lists_its_types_and_defaults_to_the_first() -> None:
    spec = standard.inference_precision_hint(Type.bf16, Type.f32)
    assert (spec.default, spec.allowed) == (Type.bf16, "bf16, f32")
    assert spec.check("f32") is Type.f32
    assert standard.inference_precision_hint(Type.f32, Type.bf16, default=Type.bf16).default is Type.bf16
    with pytest.raises(PropertyValueError, match=r"allowed: f32$"):
        standard.inference_precision_hint(Type.f32, default=Type.bf16)


# -- ConfiguredDevice: the only provider of get_property and set_property -----------------------------------


class _Identity(CompiledModel):
    def run(self, inputs: Any, context: RunContext) -> list[Any]:
        return list(inputs)


class SmallDevice(ConfiguredDevice):
    """Two device ids, two standard settings, and no property hooks of its own."""

    def __init__(self) -> None:
        self.config = DeviceConfig(
            [
                standard.device_id(),
                standard.perf_count(),
                standard.performance_hint(),
                read_only("AVAILABLE_DEVICES", ["0", "1"]),
                read_only("WHICH", compute=lambda i: f"small {i}"),
            ],
            device_ids=lambda: ["0", "1"],
        )

    @hookimpl
    def query_model(
        self, model: hs.Model, properties: dict[str, Any], device_name: str, core: hs.Core
    ) -> dict[str, str]:
        return {n.friendly_name: device_name for n in model.get_ops()}

    @hookimpl
    def compile_model(
        self,
        model: hs.Model,
        properties: dict[str, Any],
        context: RemoteContext | None,
        device_name: str,
        core: hs.Core,
    ) -> CompiledModel:
        config = self.config.resolve(properties)
        return _Identity(model.clone(), f"{device_name}.{config['DEVICE_ID']}", config)


def identity_model() -> hs.Model:
    x = hs.opset.parameter([2], Type.f32, name="x")
    return hs.Model([hs.opset.result(x, name="y")], [x], name="identity")


def test_configured_device_answers_get_property_from_its_config() -> None:
    core = hs.Core(plugins={"SMALL": SmallDevice}, autoload=False)
    assert core.get_property("SMALL", "SUPPORTED_PROPERTIES") == {
        "DEVICE_ID": "RW", "PERF_COUNT": "RW", "PERFORMANCE_HINT": "RW", "AVAILABLE_DEVICES": "RO", "WHICH": "RO",
        "SUPPORTED_PROPERTIES": "RO",
    }  # fmt: skip
    assert core.get_property("SMALL", "PERF_COUNT") is False
    assert core.get_property("SMALL.1", "WHICH") == "small 1"
    assert core.get_property("SMALL", "WHICH", {"DEVICE_ID": "0"}) == "small 0"
    with pytest.raises(UnsupportedPropertyError, match="did you mean PERF_COUNT"):
        core.get_property("SMALL", "PERF_COUNTS")


def test_configured_device_stores_set_property_per_device_id_and_compiles_use_it() -> None:
    core = hs.Core(plugins={"SMALL": SmallDevice}, autoload=False)
    core.set_property("SMALL.1", {"PERF_COUNT": "YES", "PERFORMANCE_HINT": "THROUGHPUT"})
    assert (core.get_property("SMALL.1", "PERF_COUNT"), core.get_property("SMALL.0", "PERF_COUNT")) == (True, False)
    assert core.compile_model(identity_model(), "SMALL.1").get_property("PERFORMANCE_HINT") == "THROUGHPUT"
    assert core.compile_model(identity_model(), "SMALL.0").get_property("PERFORMANCE_HINT") == "LATENCY"


def test_configured_device_rejects_wrong_values_and_read_only_keys_changing_nothing() -> None:
    core = hs.Core(plugins={"SMALL": SmallDevice}, autoload=False)
    with pytest.raises(PropertyValueError, match="'FAST' is not a valid value for PERFORMANCE_HINT"):
        core.set_property("SMALL", {"PERF_COUNT": True, "PERFORMANCE_HINT": "FAST"})
    with pytest.raises(UnsupportedPropertyError, match="read-only"):
        core.set_property("SMALL", {"WHICH": "other"})
    assert core.get_property("SMALL", "PERF_COUNT") is False


def test_a_subclass_overriding_a_configured_hook_is_the_one_called() -> None:
    class Locked(SmallDevice):
        @hookimpl
        def set_property(self, properties: dict[str, Any], device_name: str, core: hs.Core) -> None:
            raise UnsupportedPropertyError(f"LOCKED cannot set {', '.join(properties)}")

    core = hs.Core(plugins={"LOCKED": Locked}, autoload=False)
    with pytest.raises(UnsupportedPropertyError, match="LOCKED cannot set PERF_COUNT"):
        core.set_property("LOCKED", {"PERF_COUNT": True})
    assert core.get_property("LOCKED", "PERFORMANCE_HINT") == "LATENCY"


def test_an_unmarked_override_of_a_configured_hook_is_still_rejected() -> None:
    class Unmarked(SmallDevice):
        def get_property(self, name: str, arguments: dict[str, Any]) -> Any:
            return "never"

    with pytest.raises(PluginValidationError, match="'get_property' has a hook's name but is not marked"):
        hs.Core(plugins={"UNMARKED": Unmarked}, autoload=False).get_property("UNMARKED", "PERF_COUNT")


# -- what ConfiguredDevice carries besides the property hooks ------------------------------------------------


class TableDevice(ConfiguredDevice):
    """Claims Add and Relu on f32 from a table made in make_support_table; counts how often it is made."""

    def __init__(self) -> None:
        self.config = DeviceConfig(
            [standard.device_id(), read_only(hs.properties.available_devices, ["0", "1"])], lambda: ["0", "1"]
        )
        self.tables_made = 0

    def make_support_table(self) -> SupportTable:
        self.tables_made += 1
        return SupportTable("TABLE").add(["Add", "Relu"], element_types={Type.f32})

    @hookimpl
    def query_model(
        self, model: hs.Model, properties: dict[str, Any], device_name: str, core: hs.Core
    ) -> dict[str, str]:
        config = self.config.resolve(properties)
        return self.support_table().query(model).claims(self.claiming_name(device_name, properties, config))

    @hookimpl
    def compile_model(
        self,
        model: hs.Model,
        properties: dict[str, Any],
        context: RemoteContext | None,
        device_name: str,
        core: hs.Core,
    ) -> CompiledModel:
        raise NotImplementedError


def _add_relu() -> hs.Model:
    x = hs.opset.parameter([2], Type.f32, name="x")
    y = hs.opset.relu(hs.opset.add(x, x, name="add"), name="relu")
    return hs.Model([y], [x], name="add_relu")


def test_the_support_table_is_made_once_per_plugin_instance() -> None:
    device, other = TableDevice(), TableDevice()
    core = hs.Core(plugins={"TABLE": device, "OTHER": other}, autoload=False)
    for _ in range(3):
        assert set(core.query_model(_add_relu(), "TABLE").values()) == {"TABLE"}
    assert device.support_table() is device.support_table()
    assert (device.tables_made, other.tables_made) == (1, 0)  # the other instance made none yet
    core.query_model(_add_relu(), "OTHER")
    assert other.tables_made == 1 and other.support_table() is not device.support_table()


def test_query_model_answers_with_the_id_only_when_the_call_selects_one() -> None:
    core = hs.Core(plugins={"TABLE": TableDevice()}, autoload=False)
    assert set(core.query_model(_add_relu(), "TABLE").values()) == {"TABLE"}
    assert set(core.query_model(_add_relu(), "TABLE.1").values()) == {"TABLE.1"}
    device = TableDevice()
    assert device.device_with_id("TABLE", {"DEVICE_ID": "1"}) == "TABLE.1"
    assert device.claiming_name("TABLE", {}, {"DEVICE_ID": "0"}) == "TABLE"
    assert device.claiming_name("TABLE", {"DEVICE_ID": "1"}, {"DEVICE_ID": "1"}) == "TABLE.1"


def test_a_device_without_a_table_says_how_to_declare_one() -> None:
    class NoTable(ConfiguredDevice):
        pass

    with pytest.raises(NotImplementedError, match="NoTable declares no SupportTable: override make_support_table"):
        NoTable().support_table()
