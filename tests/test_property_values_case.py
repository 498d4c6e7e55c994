"""Enum property values (hints, modes, policies) are read in either case, as benchmark_app spells them
(``throughput``) and OpenVINO's Python API (``THROUGHPUT``); device names stay case-sensitive."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import properties
from hetero_sdk.auto.plugin import AutoPlugin
from hetero_sdk.errors import DeviceNameError, PropertyValueError
from hetero_sdk.hetero.plugin import HeteroPlugin
from template_plugin import TemplatePlugin

ENUMS = {
    "PERFORMANCE_HINT": ["LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT"],
    "EXECUTION_MODE_HINT": ["PERFORMANCE", "ACCURACY"],
    "HETERO_PLACEMENT_POLICY": ["PRIORITY", "LATENCY"],
    "HETERO_FALLBACK_POLICY": ["NONE", "NEXT_DEVICE"],
}


def _core() -> hs.Core:
    return hs.Core(
        plugins={"TEMPLATE": TemplatePlugin(), "HETERO": HeteroPlugin(), "AUTO": AutoPlugin()}, autoload=False
    )


def _model() -> hs.Model:
    x = hs.opset.parameter([2], hs.Type.f32, name="x")
    return hs.Model([hs.opset.relu(x, name="y")], [x], "relu")


@st.composite
def _spelled(draw: st.DrawFn, word: str) -> str:
    """``word`` with each letter's case drawn."""
    return "".join(c.upper() if draw(st.booleans()) else c.lower() for c in word)


@st.composite
def _key_and_spelling(draw: st.DrawFn) -> tuple[str, str, str]:
    key = draw(st.sampled_from(sorted(ENUMS)))
    value = draw(st.sampled_from(ENUMS[key]))
    return key, value, draw(_spelled(value))


@given(_key_and_spelling())
@settings(max_examples=60, deadline=None)
def test_as_config_spells_enum_values_as_the_enum_does(entry: tuple[str, str, str]) -> None:
    key, value, spelling = entry
    assert properties.as_config({key: spelling}) == {key: value}
    assert properties.as_config((key, spelling)) == {key: value}
    assert properties.as_config([{"PERF_COUNT": True}, (key, spelling)]) == {"PERF_COUNT": True, key: value}


def test_sets_of_values_and_per_device_configs_are_read_in_either_case() -> None:
    config = properties.as_config(
        {
            "MODEL_DISTRIBUTION_POLICY": {"pipeline_parallel"},
            "NUM_STREAMS": "auto",
            "DEVICE_PROPERTIES": {"TEMPLATE": {"PERFORMANCE_HINT": "throughput", "NUM_STREAMS": 2}},
        }
    )
    assert config == {
        "MODEL_DISTRIBUTION_POLICY": {"PIPELINE_PARALLEL"},
        "NUM_STREAMS": "AUTO",
        "DEVICE_PROPERTIES": {"TEMPLATE": {"PERFORMANCE_HINT": "THROUGHPUT", "NUM_STREAMS": 2}},
    }


@pytest.mark.parametrize(
    "untouched",
    [
        {"MULTI_DEVICE_PRIORITIES": "template,xla"},  # device names are case-sensitive
        {"PERFORMANCE_HINT": "fast"},  # not a value: the device names the allowed ones
        {"PERFORMANCE_HINT": 1},
        {"HETERO_PARTITIONER": "DEFAULT"},  # a registry's names, not an enum
        {"FULL_DEVICE_NAME": "throughput"},
    ],
)
def test_other_values_pass_unchanged(untouched: dict[str, Any]) -> None:
    assert properties.as_config(untouched) == untouched


@pytest.mark.parametrize("device", ["TEMPLATE", "AUTO:TEMPLATE"])
@pytest.mark.parametrize("spelling", ["throughput", "Throughput", "THROUGHPUT"])
def test_compile_model_and_set_property_take_either_case(device: str, spelling: str) -> None:
    core = _core()
    compiled = core.compile_model(_model(), device, {properties.hint.performance_mode: spelling})
    assert compiled.get_property("PERFORMANCE_HINT") == "THROUGHPUT"
    core.set_property(device.split(":")[0], properties.hint.performance_mode(spelling.swapcase()))
    assert core.get_property(device.split(":")[0], "PERFORMANCE_HINT") == "THROUGHPUT"


def test_hetero_takes_its_policies_and_a_forwarded_hint_in_either_case() -> None:
    core = _core()
    config = {"HETERO_FALLBACK_POLICY": "next_device", "PERFORMANCE_HINT": "latency"}
    compiled = core.compile_model(_model(), "HETERO:TEMPLATE", config)
    assert compiled({"x": [-1.0, 2.0]})[0].tolist() == [0.0, 2.0]
    core.set_property("HETERO", {"HETERO_PLACEMENT_POLICY": "Priority"})
    assert core.get_property("HETERO", "HETERO_PLACEMENT_POLICY") == "PRIORITY"


def test_a_wrong_value_still_names_the_allowed_ones() -> None:
    with pytest.raises(PropertyValueError, match="'fast' is not a valid value for PERFORMANCE_HINT; allowed: LATENCY"):
        _core().set_property("TEMPLATE", {"PERFORMANCE_HINT": "fast"})


def test_device_names_stay_case_sensitive() -> None:
    core = _core()
    with pytest.raises(DeviceNameError):
        core.compile_model(_model(), "template")
    with pytest.raises(PropertyValueError, match="'template' is not a valid value for MULTI_DEVICE_PRIORITIES"):
        core.compile_model(_model(), "HETERO", {"MULTI_DEVICE_PRIORITIES": "template"})
