"""DeviceConfig: a plugin's property table, validated, per device id, merged for each compile."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetero_sdk import Type
from hetero_sdk.errors import PropertyValueError, UnsupportedPropertyError
from hetero_sdk.plugin import (
    DeviceConfig,
    Mutability,
    PropertySpec,
    as_bool,
    as_element_type,
    as_int,
    one_of,
    read_only,
)


def make_config() -> DeviceConfig:
    return DeviceConfig(
        [
            PropertySpec("DEVICE_ID", default="0"),
            PropertySpec("PERF_COUNT", default=False, convert=as_bool, allowed="True, False"),
            PropertySpec("NUM_STREAMS", default=1, convert=as_int(1, 8), allowed="1..8"),
            PropertySpec("PERFORMANCE_HINT", default="LATENCY", convert=one_of("LATENCY", "THROUGHPUT")),
            PropertySpec("SECRET", Mutability.WO, default="", convert=str),
            read_only("FULL_DEVICE_NAME", "Test device"),
            read_only("WHOAMI", compute=lambda i: f"id={i}"),
        ],
        device_ids=lambda: ["0", "1"],
    )


def test_supported_properties_is_added_and_lists_every_key_with_its_mutability() -> None:
    config = make_config()
    assert config.get("SUPPORTED_PROPERTIES") == {
        "DEVICE_ID": "RW", "PERF_COUNT": "RW", "NUM_STREAMS": "RW", "PERFORMANCE_HINT": "RW", "SECRET": "WO",
        "FULL_DEVICE_NAME": "RO", "WHOAMI": "RO", "SUPPORTED_PROPERTIES": "RO",
    }  # fmt: skip


def test_defaults_read_back_before_any_set() -> None:
    config = make_config()
    assert (config.get("PERF_COUNT"), config.get("NUM_STREAMS"), config.get("DEVICE_ID")) == (False, 1, "0")
    assert config.get("FULL_DEVICE_NAME") == "Test device"
    assert config.get("WHOAMI", "1") == "id=1"


def test_set_then_get_returns_the_normalised_value() -> None:
    config = make_config()
    config.set({"PERF_COUNT": "YES", "NUM_STREAMS": "4"})
    assert config.get("PERF_COUNT") is True
    assert config.get("NUM_STREAMS") == 4


@pytest.mark.parametrize(
    ("key", "value", "allowed"),
    [("PERF_COUNT", "maybe", "True, False"), ("NUM_STREAMS", 0, "1..8"), ("NUM_STREAMS", 2.5, "1..8"),
     ("NUM_STREAMS", True, "1..8"), ("PERFORMANCE_HINT", "FAST", "LATENCY, THROUGHPUT")],
)  # fmt: skip
def test_wrong_value_names_key_and_allowed_values_and_changes_nothing(key: str, value: object, allowed: str) -> None:
    config = make_config()
    before = config.get(key)
    with pytest.raises(PropertyValueError) as info:
        config.set({key: value})
    assert key in str(info.value) and allowed in str(info.value)
    assert config.get(key) == before


def test_one_wrong_entry_rejects_the_whole_set() -> None:
    config = make_config()
    with pytest.raises(PropertyValueError):
        config.set({"PERF_COUNT": True, "NUM_STREAMS": 99})
    assert config.get("PERF_COUNT") is False


def test_unknown_key_suggests_close_matches() -> None:
    with pytest.raises(UnsupportedPropertyError, match="did you mean PERF_COUNT"):
        make_config().set({"PERF_COUNTS": True})


def test_read_only_keys_cannot_be_set() -> None:
    with pytest.raises(UnsupportedPropertyError, match="read-only"):
        make_config().set({"FULL_DEVICE_NAME": "x"})


def test_write_only_keys_cannot_be_read_but_reach_resolve() -> None:
    config = make_config()
    config.set({"SECRET": "s3"})
    with pytest.raises(UnsupportedPropertyError, match="write-only"):
        config.get("SECRET")
    assert config.resolve()["SECRET"] == "s3"


def test_values_set_for_one_device_id_do_not_leak_to_another() -> None:
    config = make_config()
    config.set({"DEVICE_ID": "1", "PERF_COUNT": True})
    assert config.get("PERF_COUNT", "1") is True
    assert config.get("PERF_COUNT", "0") is False
    assert config.get("PERF_COUNT") is False


def test_device_id_alone_sets_the_default_id_used_by_resolve() -> None:
    config = make_config()
    config.set({"DEVICE_ID": "1", "PERF_COUNT": True})
    config.set({"DEVICE_ID": "1"})
    assert config.get("DEVICE_ID") == "1"
    resolved = config.resolve()
    assert resolved["DEVICE_ID"] == "1" and resolved["PERF_COUNT"] is True
    config.set({"DEVICE_ID": "0"})
    assert config.get("DEVICE_ID") == "0"


def test_unknown_device_id_lists_the_ids() -> None:
    with pytest.raises(PropertyValueError, match="available ids: 0, 1"):
        make_config().set({"DEVICE_ID": "7"})


def test_resolve_layers_compile_config_over_stored_over_defaults_without_storing() -> None:
    config = make_config()
    config.set({"NUM_STREAMS": 2})
    resolved = config.resolve({"PERFORMANCE_HINT": "THROUGHPUT", "NUM_STREAMS": 3})
    assert resolved == {
        "DEVICE_ID": "0", "PERF_COUNT": False, "NUM_STREAMS": 3, "PERFORMANCE_HINT": "THROUGHPUT", "SECRET": "",
    }  # fmt: skip
    assert config.get("NUM_STREAMS") == 2
    assert config.get("PERFORMANCE_HINT") == "LATENCY"


def test_resolve_validates_the_compile_config() -> None:
    config = make_config()
    with pytest.raises(UnsupportedPropertyError):
        config.resolve({"FULL_DEVICE_NAME": "x"})
    with pytest.raises(PropertyValueError):
        config.resolve({"NUM_STREAMS": -1})


def test_config_without_device_id_resolves_without_it() -> None:
    config = DeviceConfig([PropertySpec("PERF_COUNT", default=False, convert=as_bool)])
    assert config.resolve() == {"PERF_COUNT": False}


@pytest.mark.parametrize(("value", "expected"), [(True, True), (False, False), ("YES", True), ("no", False),
                                                 ("True", True), ("FALSE", False)])  # fmt: skip
def test_as_bool_accepts_bools_and_openvino_strings(value: object, expected: bool) -> None:
    assert as_bool(value) is expected


@pytest.mark.parametrize("value", [1, 0, "on", None, 1.0])
def test_as_bool_rejects_the_rest(value: object) -> None:
    with pytest.raises(ValueError):
        as_bool(value)


@settings(max_examples=40, deadline=None)
@given(st.integers(-20, 20))
def test_as_int_accepts_exactly_the_range(value: int) -> None:
    convert = as_int(1, 8)
    if 1 <= value <= 8:
        assert convert(value) == value == convert(str(value))
    else:
        with pytest.raises(ValueError):
            convert(value)


def test_as_element_type_accepts_types_dtypes_and_names() -> None:
    convert = as_element_type(Type.f32)
    assert convert(Type.f32) is Type.f32
    assert convert(np.float32) is Type.f32
    assert convert("f32") is Type.f32
    with pytest.raises(ValueError):
        convert(Type.f16)


def test_concurrent_sets_and_reads_see_consistent_values() -> None:
    config = make_config()
    errors: list[BaseException] = []

    def work(streams: int) -> None:
        try:
            for _ in range(200):
                config.set({"NUM_STREAMS": streams})
                assert config.get("NUM_STREAMS") in range(1, 9)
                assert config.resolve()["NUM_STREAMS"] in range(1, 9)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(1, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
