"""Typed property names equal OpenVINO's key strings, so OpenVINO config dicts work unchanged."""

from __future__ import annotations

import pytest

import hetero_sdk as hs
from hetero_sdk import properties
from hetero_sdk.errors import PropertyValueError
from hetero_sdk.properties import Mutability, Property
from template_plugin import TemplatePlugin
from template_plugin import properties as template_properties

API_TABLE = [
    (properties.supported_properties, "SUPPORTED_PROPERTIES"),
    (properties.available_devices, "AVAILABLE_DEVICES"),
    (properties.device.full_name, "FULL_DEVICE_NAME"),
    (properties.device.architecture, "DEVICE_ARCHITECTURE"),
    (properties.device.capabilities, "OPTIMIZATION_CAPABILITIES"),
    (properties.device.id, "DEVICE_ID"),
    (properties.device.priorities, "MULTI_DEVICE_PRIORITIES"),
    (properties.device.properties, "DEVICE_PROPERTIES"),
    (properties.execution_devices, "EXECUTION_DEVICES"),
    (properties.range_for_async_infer_requests, "RANGE_FOR_ASYNC_INFER_REQUESTS"),
    (properties.caching_properties, "CACHING_PROPERTIES"),
    (properties.cache_dir, "CACHE_DIR"),
    (properties.loaded_from_cache, "LOADED_FROM_CACHE"),
    (properties.model_name, "NETWORK_NAME"),
    (properties.optimal_number_of_infer_requests, "OPTIMAL_NUMBER_OF_INFER_REQUESTS"),
    (properties.enable_profiling, "PERF_COUNT"),
    (properties.num_streams, "NUM_STREAMS"),
    (properties.inference_num_threads, "INFERENCE_NUM_THREADS"),
    (properties.hint.performance_mode, "PERFORMANCE_HINT"),
    (properties.hint.num_requests, "PERFORMANCE_HINT_NUM_REQUESTS"),
    (properties.hint.inference_precision, "INFERENCE_PRECISION_HINT"),
    (properties.hint.execution_mode, "EXECUTION_MODE_HINT"),
    (properties.hint.model_distribution_policy, "MODEL_DISTRIBUTION_POLICY"),
    (properties.exclusive_async_requests, "EXCLUSIVE_ASYNC_REQUESTS"),
    (properties.hetero.number_of_submodels, "HETERO_NUMBER_OF_SUBMODELS"),
    (template_properties.disable_transformations, "TEMPLATE_DISABLE_TRANSFORMATIONS"),
]


@pytest.mark.parametrize(("typed", "key"), API_TABLE, ids=[key for _, key in API_TABLE])
def test_typed_name_is_the_openvino_key(typed: Property, key: str) -> None:
    assert isinstance(typed, Property)
    assert typed == key
    assert typed() == key
    assert hash(typed) == hash(key)
    assert {typed: 1}[key] == 1


def test_calling_a_property_with_a_value_builds_a_config_entry() -> None:
    assert properties.enable_profiling(True) == ("PERF_COUNT", True)
    assert dict([properties.hint.performance_mode("THROUGHPUT")]) == {"PERFORMANCE_HINT": "THROUGHPUT"}


def test_several_values_are_joined_with_commas_as_priorities() -> None:
    assert properties.device.priorities("GPU", "CPU") == ("MULTI_DEVICE_PRIORITIES", "GPU,CPU")


def test_mutability_values_are_ro_rw_wo() -> None:
    assert [m.value for m in Mutability] == ["RO", "RW", "WO"]
    assert Mutability.RW == "RW"


def test_public_names_are_listed_in_all() -> None:
    for name in properties.__all__:
        assert hasattr(properties, name), name


def test_the_groups_are_modules_imported_as_openvino_users_import_them() -> None:
    import hetero_sdk.properties.device as device
    import hetero_sdk.properties.hetero as hetero
    import hetero_sdk.properties.hint as hints

    assert hints is properties.hint and device is properties.device and hetero is properties.hetero
    assert (hints.performance_mode, device.priorities, hetero.number_of_submodels) == (
        "PERFORMANCE_HINT", "MULTI_DEVICE_PRIORITIES", "HETERO_NUMBER_OF_SUBMODELS"
    )  # fmt: skip
    for group in (device, hetero, hints):
        assert all(hasattr(group, name) for name in group.__all__)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ("PerformanceMode", ["LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT"]),
        ("ExecutionMode", ["PERFORMANCE", "ACCURACY"]),
        ("ModelDistributionPolicy", ["TENSOR_PARALLEL", "PIPELINE_PARALLEL"]),
    ],
)
def test_hint_values_are_openvinos_and_equal_their_strings(values: str, expected: list[str]) -> None:
    members = list(getattr(properties.hint, values))
    assert [m.value for m in members] == expected
    assert all(m == m.value for m in members)


def test_a_hint_value_enum_is_a_valid_config_value() -> None:
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False)
    hints = properties.hint
    core.set_property("TEMPLATE", [hints.performance_mode(hints.PerformanceMode.THROUGHPUT)])
    assert core.get_property("TEMPLATE", hints.performance_mode) == "THROUGHPUT"
    core.set_property("TEMPLATE", {hints.execution_mode: hints.ExecutionMode.ACCURACY})
    assert core.get_property("TEMPLATE", "EXECUTION_MODE_HINT") == "ACCURACY"


# -- as_config: every form a config argument takes, as in OpenVINO ----------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (None, {}),
        ({}, {}),
        ({"PERF_COUNT": True}, {"PERF_COUNT": True}),
        (properties.enable_profiling(True), {"PERF_COUNT": True}),
        ([properties.enable_profiling(True), properties.num_streams(2)], {"PERF_COUNT": True, "NUM_STREAMS": 2}),
        ((("PERF_COUNT", True), ("NUM_STREAMS", 2)), {"PERF_COUNT": True, "NUM_STREAMS": 2}),
        ([{"PERF_COUNT": False}, ("NUM_STREAMS", 1), ("PERF_COUNT", True)], {"PERF_COUNT": True, "NUM_STREAMS": 1}),
        ({properties.enable_profiling: "YES"}, {"PERF_COUNT": "YES"}),
    ],
)
def test_as_config_reads_dicts_pairs_and_lists_of_them_later_entries_winning(given: object, expected: dict) -> None:
    config = properties.as_config(given)  # type: ignore[arg-type]
    assert config == expected
    assert all(type(key) is str for key in config)


def test_as_config_returns_a_new_dict() -> None:
    given = {"PERF_COUNT": True}
    config = properties.as_config(given)
    config["NUM_STREAMS"] = 1
    assert given == {"PERF_COUNT": True}


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ("PERF_COUNT", "str 'PERF_COUNT'"),
        (5, "int 5"),
        ((1, True), "entry 0 of the config is int 1"),
        ([("PERF_COUNT", True), "NUM_STREAMS"], "entry 1 of the config is str 'NUM_STREAMS'"),
        ([("PERF_COUNT", True, 1)], "entry 0 of the config is tuple"),
    ],
)
def test_as_config_rejects_other_forms_naming_what_it_got(given: object, named: str) -> None:
    with pytest.raises(PropertyValueError) as info:
        properties.as_config(given)  # type: ignore[arg-type]
    assert named in str(info.value)
    assert "(key, value) pair" in str(info.value)
