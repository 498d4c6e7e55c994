"""Core's configs: the forms OpenVINO accepts, CACHE_DIR per device, settings a device string already
gives, and the device a compile without one picks."""

from __future__ import annotations

from pathlib import Path

import pytest

import hetero_sdk as hs
from hetero_sdk import properties
from hetero_sdk.auto import AutoPlugin
from hetero_sdk.errors import DeviceNotFoundError, PropertyValueError, UnsupportedPropertyError
from hetero_sdk.hetero.plugin import HeteroPlugin
from template_plugin import TemplatePlugin

# -- configs as (key, value) pairs ------------------------------------------------------------------------


def test_set_property_takes_one_pair_as_a_called_typed_property_returns(core: hs.Core) -> None:
    core.set_property("TEMPLATE", properties.enable_profiling(True))
    assert core.get_property("TEMPLATE", "PERF_COUNT") is True


def test_set_property_takes_a_list_of_pairs_and_dicts(core: hs.Core) -> None:
    core.set_property(
        "TEMPLATE", [properties.hint.performance_mode("THROUGHPUT"), {"NUM_STREAMS": 3}, ("PERF_COUNT", "YES")]
    )
    assert core.get_property("TEMPLATE", "PERFORMANCE_HINT") == "THROUGHPUT"
    assert core.get_property("TEMPLATE", "NUM_STREAMS") == 3
    assert core.get_property("TEMPLATE", "PERF_COUNT") is True


def test_core_level_set_property_takes_a_pair(core: hs.Core, tmp_path: Path) -> None:
    core.set_property(properties.cache_dir(str(tmp_path)))
    assert core.get_property("CACHE_DIR") == str(tmp_path)


def test_compile_config_takes_pairs(core: hs.Core, mlp) -> None:
    one = core.compile_model(mlp.model, "TEMPLATE", properties.enable_profiling(True))
    assert one.get_property("PERF_COUNT") is True
    several = core.compile_model(
        mlp.model, "TEMPLATE", [properties.enable_profiling(True), properties.hint.performance_mode("THROUGHPUT")]
    )
    assert (several.get_property("PERF_COUNT"), several.get_property("PERFORMANCE_HINT")) == (True, "THROUGHPUT")
    assert core.get_property("TEMPLATE", "PERF_COUNT") is False  # a compile config changes nothing stored


@pytest.mark.parametrize("config", ["PERF_COUNT", 7, [("PERF_COUNT", True), "NUM_STREAMS"]])
def test_a_config_of_another_form_is_a_property_value_error(core: hs.Core, mlp, config: object) -> None:
    with pytest.raises(PropertyValueError, match=r"\(key, value\) pair"):
        core.set_property("TEMPLATE", config)  # type: ignore[arg-type]
    with pytest.raises(PropertyValueError, match=r"\(key, value\) pair"):
        core.compile_model(mlp.model, "TEMPLATE", config)  # type: ignore[arg-type]
    assert core.get_property("TEMPLATE", "PERF_COUNT") is False


def test_compiled_model_set_property_reads_pairs_and_names_the_read_only_key(core: hs.Core, mlp) -> None:
    compiled = core.compile_model(mlp.model, "TEMPLATE")
    with pytest.raises(UnsupportedPropertyError, match="'PERF_COUNT' of a compiled model is read-only"):
        compiled.set_property(properties.enable_profiling(True))
    with pytest.raises(PropertyValueError):
        compiled.set_property("PERF_COUNT")  # type: ignore[arg-type]


# -- NUM_STREAMS: OpenVINO's AUTO and NUMA ------------------------------------------------------------------


@pytest.mark.parametrize("word", ["AUTO", "NUMA"])
def test_num_streams_auto_and_numa_mean_streams_from_the_hint(core: hs.Core, mlp, word: str) -> None:
    core.set_property("TEMPLATE", {"NUM_STREAMS": word})
    assert core.get_property("TEMPLATE", "NUM_STREAMS") == 0
    assert core.compile_model(mlp.model, "TEMPLATE", {"NUM_STREAMS": word}).get_property("NUM_STREAMS") == 0


# -- CACHE_DIR set on one device ----------------------------------------------------------------------------


def test_cache_dir_set_on_a_device_caches_that_devices_compiles_only(tmp_path: Path, mlp) -> None:
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin(), "OTHER": TemplatePlugin()}, autoload=False)
    core.set_property("TEMPLATE", {"CACHE_DIR": str(tmp_path)})
    assert core.get_property("TEMPLATE", "CACHE_DIR") == str(tmp_path)
    assert core.get_property("OTHER", "CACHE_DIR") == ""
    assert core.get_property("CACHE_DIR") == ""
    assert core.compile_model(mlp.model, "TEMPLATE").get_property("LOADED_FROM_CACHE") is False
    assert len(list(tmp_path.iterdir())) == 1
    assert core.compile_model(mlp.model, "TEMPLATE").get_property("LOADED_FROM_CACHE") is True
    assert core.compile_model(mlp.model, "OTHER").get_property("LOADED_FROM_CACHE") is False
    assert core.compile_model(mlp.model, "OTHER").get_property("LOADED_FROM_CACHE") is False
    assert len(list(tmp_path.iterdir())) == 1


def test_a_devices_cache_dir_wins_over_the_cores_and_empty_turns_caching_off(tmp_path: Path, core, mlp) -> None:
    shared, own = tmp_path / "shared", tmp_path / "own"
    core.set_property({"CACHE_DIR": str(shared)})
    assert core.get_property("TEMPLATE", "CACHE_DIR") == str(shared)  # the Core's, until the device has one
    core.set_property("TEMPLATE", {"CACHE_DIR": str(own)})
    assert core.get_property("TEMPLATE", "CACHE_DIR") == str(own)
    core.compile_model(mlp.model, "TEMPLATE")
    assert len(list(own.iterdir())) == 1 and not shared.exists()
    core.set_property("TEMPLATE", {"CACHE_DIR": ""})
    assert core.get_property("TEMPLATE", "CACHE_DIR") == ""
    assert core.compile_model(mlp.model, "TEMPLATE").get_property("LOADED_FROM_CACHE") is False
    assert not shared.exists()


def test_cache_dir_with_other_keys_sets_both_and_a_wrong_key_sets_neither(core: hs.Core, tmp_path: Path) -> None:
    core.set_property("TEMPLATE", {"CACHE_DIR": str(tmp_path), "PERF_COUNT": True})
    assert (core.get_property("TEMPLATE", "CACHE_DIR"), core.get_property("TEMPLATE", "PERF_COUNT")) == (
        str(tmp_path),
        True,
    )
    with pytest.raises(UnsupportedPropertyError):
        core.set_property("TEMPLATE", {"CACHE_DIR": str(tmp_path / "b"), "NO_SUCH_KEY": 1})
    assert core.get_property("TEMPLATE", "CACHE_DIR") == str(tmp_path)


def test_cache_dir_on_an_unknown_device_is_an_error(core: hs.Core, tmp_path: Path) -> None:
    with pytest.raises(DeviceNotFoundError):
        core.set_property("NOPE", {"CACHE_DIR": str(tmp_path)})
    with pytest.raises(DeviceNotFoundError):
        core.get_property("NOPE", "CACHE_DIR")


# -- settings a device string already gives --------------------------------------------------------------


@pytest.fixture
def hetero_core() -> hs.Core:
    return hs.Core(plugins={"TEMPLATE": TemplatePlugin(), "HETERO": HeteroPlugin()}, autoload=False)


@pytest.mark.parametrize("value", ["TEMPLATE", ["TEMPLATE"]])
def test_priorities_in_the_config_may_repeat_the_device_string(hetero_core: hs.Core, mlp, value: object) -> None:
    config = {"MULTI_DEVICE_PRIORITIES": value}
    assert hetero_core.compile_model(mlp.model, "HETERO:TEMPLATE", config).get_property("EXECUTION_DEVICES")


def test_priorities_in_the_config_that_differ_from_the_device_string_name_both(hetero_core: hs.Core, mlp) -> None:
    with pytest.raises(PropertyValueError) as info:
        hetero_core.compile_model(mlp.model, "HETERO:TEMPLATE", {"MULTI_DEVICE_PRIORITIES": "OTHER,TEMPLATE"})
    assert "'OTHER,TEMPLATE'" in str(info.value) and "'HETERO:TEMPLATE'" in str(info.value)


@pytest.mark.parametrize("device", ["HETERO", "HETERO:TEMPLATE"])
def test_priorities_of_a_wrong_type_are_a_property_value_error(hetero_core: hs.Core, mlp, device: str) -> None:
    with pytest.raises(PropertyValueError, match=r"123 is not a valid value for MULTI_DEVICE_PRIORITIES"):
        hetero_core.compile_model(mlp.model, device, {"MULTI_DEVICE_PRIORITIES": 123})


def test_a_device_id_in_the_config_that_differs_from_the_device_string_names_both(core: hs.Core, mlp) -> None:
    assert core.compile_model(mlp.model, "TEMPLATE.1", {"DEVICE_ID": 1}).get_property("EXECUTION_DEVICES") == [
        "TEMPLATE.1"
    ]
    with pytest.raises(PropertyValueError, match=r"DEVICE_ID '0' .* 'TEMPLATE.1', which gives '1'"):
        core.compile_model(mlp.model, "TEMPLATE.1", {"DEVICE_ID": "0"})


# -- the default device ---------------------------------------------------------------------------------------


def test_compile_without_a_device_uses_auto_when_it_is_there(mlp) -> None:
    core = hs.Core(
        plugins={"AAA": TemplatePlugin(), "AUTO": AutoPlugin(), "TEMPLATE": TemplatePlugin()}, autoload=False
    )
    compiled = core.compile_model(mlp.model)
    assert "ENABLE_STARTUP_FALLBACK" in compiled.get_property("SUPPORTED_PROPERTIES")  # AUTO's own key
    # AUTO ranks the reference device TEMPLATE before a device of unknown kind (AAA, first by name)
    assert [d.split(".")[0] for d in compiled.get_property("EXECUTION_DEVICES")] == ["TEMPLATE"]


def test_compile_without_a_device_nor_auto_uses_the_first_available_device(mlp) -> None:
    core = hs.Core(plugins={"BBB": TemplatePlugin(), "AAA": TemplatePlugin()}, autoload=False)
    compiled = core.compile_model(mlp.model)
    assert [d.split(".")[0] for d in compiled.get_property("EXECUTION_DEVICES")] == ["AAA"]
    assert "ENABLE_STARTUP_FALLBACK" not in compiled.get_property("SUPPORTED_PROPERTIES")
