"""The TEMPLATE device: its properties, compiling and running, runtime model, profiling, export/import."""

from __future__ import annotations

import json
import struct
import warnings

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import BlobFormatError, PropertyValueError, UnsupportedPropertyError
from hetero_sdk.plugin import pack_blob, unpack_blob
from hetero_sdk.serialization import model_to_bytes
from template_plugin import TemplatePlugin

MUTABILITY = {
    "DEVICE_ID": "RW", "PERF_COUNT": "RW", "PERFORMANCE_HINT": "RW", "PERFORMANCE_HINT_NUM_REQUESTS": "RW",
    "NUM_STREAMS": "RW", "INFERENCE_NUM_THREADS": "RW", "EXECUTION_MODE_HINT": "RW",
    "INFERENCE_PRECISION_HINT": "RW", "TEMPLATE_DISABLE_TRANSFORMATIONS": "RW", "EXCLUSIVE_ASYNC_REQUESTS": "RW",
    "AVAILABLE_DEVICES": "RO", "SUPPORTED_PROPERTIES": "RO", "FULL_DEVICE_NAME": "RO", "DEVICE_ARCHITECTURE": "RO",
    "OPTIMIZATION_CAPABILITIES": "RO", "CACHING_PROPERTIES": "RO", "RANGE_FOR_ASYNC_INFER_REQUESTS": "RO",
    "EXECUTION_DEVICES": "RO", "TEMPLATE_BLAS": "RO",
}  # fmt: skip

# key, default, another valid value
RW_VALUES = [
    ("DEVICE_ID", "0", "1"),
    ("PERF_COUNT", False, True),
    ("PERFORMANCE_HINT", "LATENCY", "THROUGHPUT"),
    ("PERFORMANCE_HINT_NUM_REQUESTS", 0, 4),
    ("NUM_STREAMS", 0, 3),
    ("INFERENCE_NUM_THREADS", 0, 2),
    ("EXECUTION_MODE_HINT", "PERFORMANCE", "ACCURACY"),
    ("INFERENCE_PRECISION_HINT", hs.Type.f32, hs.Type.f32),
    ("TEMPLATE_DISABLE_TRANSFORMATIONS", False, True),
    ("EXCLUSIVE_ASYNC_REQUESTS", False, True),
]

# key, wrong value, a fragment of the allowed values the message must list
WRONG_VALUES = [
    ("DEVICE_ID", "7", "0, 1"),
    ("PERF_COUNT", "maybe", "True, False"),
    ("PERFORMANCE_HINT", "FASTEST", "LATENCY, THROUGHPUT, CUMULATIVE_THROUGHPUT"),
    ("PERFORMANCE_HINT_NUM_REQUESTS", -1, "0..2147483647"),
    ("NUM_STREAMS", 65, "0..64"),
    ("NUM_STREAMS", "many", "0..64"),
    ("INFERENCE_NUM_THREADS", 1.5, "0..2147483647"),
    ("EXECUTION_MODE_HINT", "FAST", "PERFORMANCE, ACCURACY"),
    ("INFERENCE_PRECISION_HINT", hs.Type.f16, "f32"),
    ("TEMPLATE_DISABLE_TRANSFORMATIONS", 2, "True, False"),
    ("EXCLUSIVE_ASYNC_REQUESTS", None, "True, False"),
]


# -- properties ---------------------------------------------------------------------------------------------


def test_supported_properties_lists_every_property_with_its_mutability(core: hs.Core) -> None:
    assert core.get_property("TEMPLATE", "SUPPORTED_PROPERTIES") == MUTABILITY


def test_every_listed_property_reads_back_a_value(core: hs.Core) -> None:
    for key in MUTABILITY:
        value = core.get_property("TEMPLATE", key)
        assert value is not None and value != "", key
    assert core.get_property("TEMPLATE", "AVAILABLE_DEVICES") == ["0", "1"]
    assert core.get_property("TEMPLATE", "DEVICE_ARCHITECTURE") == "numpy"
    assert {"FP32", "EXPORT_IMPORT"} <= set(core.get_property("TEMPLATE", "OPTIMIZATION_CAPABILITIES"))
    start, end, step = core.get_property("TEMPLATE", "RANGE_FOR_ASYNC_INFER_REQUESTS")
    assert 1 <= start <= end and step >= 1
    assert core.get_property("TEMPLATE.0", "FULL_DEVICE_NAME") != core.get_property("TEMPLATE.1", "FULL_DEVICE_NAME")


@pytest.mark.parametrize(("key", "default", "other"), RW_VALUES, ids=[k for k, _, _ in RW_VALUES])
def test_rw_property_round_trips_and_sets_back_to_default(
    core: hs.Core, key: str, default: object, other: object
) -> None:
    assert core.get_property("TEMPLATE", key) == default
    core.set_property("TEMPLATE", {key: other})
    assert core.get_property("TEMPLATE", key) == other
    core.set_property("TEMPLATE", {key: default})
    assert core.get_property("TEMPLATE", key) == default


@pytest.mark.parametrize(("key", "wrong", "allowed"), WRONG_VALUES, ids=[f"{k}={w}" for k, w, _ in WRONG_VALUES])
def test_wrong_value_raises_listing_allowed_values_and_keeps_the_old_one(
    core: hs.Core, key: str, wrong: object, allowed: str
) -> None:
    before = core.get_property("TEMPLATE", key)
    with pytest.raises(PropertyValueError) as info:
        core.set_property("TEMPLATE", {key: wrong})
    assert key in str(info.value) and allowed in str(info.value)
    assert isinstance(info.value, ValueError)
    assert core.get_property("TEMPLATE", key) == before


@pytest.mark.parametrize("key", [k for k, m in MUTABILITY.items() if m == "RO"])
def test_read_only_keys_cannot_be_set(core: hs.Core, key: str) -> None:
    with pytest.raises(UnsupportedPropertyError, match=rf"'{key}' is read-only"):
        core.set_property("TEMPLATE", {key: "x"})


def test_unknown_keys_raise_unsupported_property_naming_close_matches(core: hs.Core, mlp) -> None:
    for call in (
        lambda: core.set_property("TEMPLATE", {"PERF_COUNTER": True}),
        lambda: core.get_property("TEMPLATE", "PERF_COUNTER"),
        lambda: core.compile_model(mlp.model, "TEMPLATE", {"PERF_COUNTER": True}),
    ):
        with pytest.raises(UnsupportedPropertyError, match="'PERF_COUNTER'; did you mean PERF_COUNT"):
            call()


@pytest.mark.parametrize(
    ("key", "value"),
    [("PERF_COUNT", True), ("PERF_COUNT", False), ("PERFORMANCE_HINT", "LATENCY"), ("PERFORMANCE_HINT", "THROUGHPUT"),
     ("PERFORMANCE_HINT", "CUMULATIVE_THROUGHPUT"), ("EXECUTION_MODE_HINT", "PERFORMANCE"),
     ("EXECUTION_MODE_HINT", "ACCURACY")],
)  # fmt: skip
def test_compile_config_reads_back_from_the_compiled_model(core: hs.Core, mlp, key: str, value: object) -> None:
    compiled = core.compile_model(mlp.model, "TEMPLATE", {key: value})
    assert compiled.get_property(key) == value
    assert core.get_property("TEMPLATE", key) == dict((k, d) for k, d, _ in RW_VALUES)[key]


def test_number_of_device_ids_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin(num_devices=3)}, autoload=False)
    assert core.available_devices == ["TEMPLATE.0", "TEMPLATE.1", "TEMPLATE.2"]
    monkeypatch.setenv("HETERO_SDK_TEMPLATE_DEVICES", "2")
    assert TemplatePlugin().get_property("AVAILABLE_DEVICES", {}, "TEMPLATE", core) == ["0", "1"]
    with pytest.raises(ValueError, match="at least one device"):
        TemplatePlugin(num_devices=0)


# -- compiling and running ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["mlp", "cnn", "two_io"])
def test_results_match_numpy(core: hs.Core, rng, case: str, request: pytest.FixtureRequest) -> None:
    model_case = request.getfixturevalue(case)
    compiled = core.compile_model(model_case.model, "TEMPLATE")
    for _ in range(3):
        inputs = model_case.make_inputs(rng)
        results = compiled(inputs)
        for got, want in zip(results.to_tuple(), model_case.expected(inputs), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_inputs_and_outputs_keep_the_original_names_types_and_shapes(core: hs.Core, cnn) -> None:
    compiled = core.compile_model(cnn.model, "TEMPLATE")
    assert [(p.any_name, p.element_type, p.shape) for p in compiled.inputs] == [("x", hs.Type.f32, (1, 2, 6, 6))]
    assert [(p.any_name, p.element_type, p.shape) for p in compiled.outputs] == [("y", hs.Type.f32, (1, 4, 6, 6))]
    assert compiled.inputs[0].node.friendly_name == "x"
    assert compiled.get_property("NETWORK_NAME") == "cnn"


def test_compiling_does_not_change_the_original_model(core: hs.Core, mlp) -> None:
    before = model_to_bytes(mlp.model)
    rt_before = [dict(n.get_rt_info()) for n in mlp.model.get_ops()]
    core.compile_model(mlp.model, "TEMPLATE")
    core.query_model(mlp.model, "TEMPLATE")
    assert model_to_bytes(mlp.model) == before
    assert [n.get_rt_info() for n in mlp.model.get_ops()] == rt_before


def test_two_compiled_models_of_one_model_are_independent(core: hs.Core, mlp, rng) -> None:
    first = core.compile_model(mlp.model, "TEMPLATE", {"PERF_COUNT": True})
    second = core.compile_model(mlp.model, "TEMPLATE.1")
    assert (first.get_property("PERF_COUNT"), second.get_property("PERF_COUNT")) == (True, False)
    (x,) = mlp.make_inputs(rng)
    first_result = first({"x": x})[0].copy()
    first.release()
    del first
    np.testing.assert_array_equal(second({"x": x})[0], first_result)
    np.testing.assert_allclose(first_result, mlp.expected([x])[0], rtol=1e-4, atol=1e-4)


def test_runtime_model_names_original_ops_and_fuses_matmul_add_relu(core: hs.Core, mlp) -> None:
    runtime = core.compile_model(mlp.model, "TEMPLATE").get_runtime_model()
    by_name = {n.friendly_name: n for n in runtime.get_ops()}
    assert by_name["relu1"].get_type_name() == "TemplateFullyConnected"
    assert by_name["relu1"].get_rt_info()["originalLayersNames"] == "add1,mm1,relu1"
    assert by_name["y"].get_rt_info()["originalLayersNames"] == "mm2,y"
    covered = {name for n in runtime.get_ops() for name in n.get_rt_info()["originalLayersNames"].split(",")}
    assert covered == {n.friendly_name for n in mlp.model.get_ops()}
    assert not any("execTimeMcs" in n.get_rt_info() for n in runtime.get_ops())


def test_runtime_model_has_exec_times_after_a_profiled_run(core: hs.Core, mlp, rng) -> None:
    compiled = core.compile_model(mlp.model, "TEMPLATE", {"PERF_COUNT": True})
    compiled(mlp.make_inputs(rng))
    timed = {n.friendly_name: n.get_rt_info()["execTimeMcs"] for n in compiled.get_runtime_model().get_ops()
             if "execTimeMcs" in n.get_rt_info()}  # fmt: skip
    assert set(timed) == {"relu1", "y"}
    assert all(t >= 0 for t in timed.values())


def test_disabling_transformations_keeps_the_original_ops_and_results(core: hs.Core, mlp, rng) -> None:
    plain = core.compile_model(mlp.model, "TEMPLATE", {"TEMPLATE_DISABLE_TRANSFORMATIONS": True})
    types = sorted(n.get_type_name() for n in plain.get_runtime_model().get_ops())
    assert types == sorted(n.get_type_name() for n in mlp.model.get_ops())
    (x,) = mlp.make_inputs(rng)
    np.testing.assert_allclose(plain({"x": x})[0], mlp.expected([x])[0], rtol=1e-4, atol=1e-4)


def test_profiling_rows_follow_perf_count(core: hs.Core, mlp, rng) -> None:
    inputs = mlp.make_inputs(rng)
    request = core.compile_model(mlp.model, "TEMPLATE", {"PERF_COUNT": True}).create_infer_request()
    request.infer(inputs)
    rows = request.get_profiling_info()
    assert [(r.node_name, r.node_type) for r in rows] == [("relu1", "TemplateFullyConnected"),
                                                          ("y", "TemplateFullyConnected")]  # fmt: skip
    assert all(r.status == "EXECUTED" and r.real_time.total_seconds() >= 0 for r in rows)
    request.start_async(inputs)
    request.wait()
    assert len(request.profiling_info) == 2
    quiet = core.compile_model(mlp.model, "TEMPLATE").create_infer_request()
    quiet.infer(inputs)
    assert quiet.get_profiling_info() == []


def test_perf_count_set_on_the_device_reaches_compiled_models(core: hs.Core, mlp, rng) -> None:
    core.set_property("TEMPLATE", {"PERF_COUNT": True})
    request = core.compile_model(mlp.model, "TEMPLATE").create_infer_request()
    request.infer(mlp.make_inputs(rng))
    assert request.get_profiling_info()


def test_exclusive_async_requests_share_one_executor(core: hs.Core, mlp) -> None:
    shared = [core.compile_model(mlp.model, "TEMPLATE", {"EXCLUSIVE_ASYNC_REQUESTS": True}) for _ in range(2)]
    own = [core.compile_model(mlp.model, "TEMPLATE") for _ in range(2)]
    assert shared[0].executor is shared[1].executor
    assert own[0].executor is not own[1].executor


# -- export and import ------------------------------------------------------------------------------------


def test_export_then_import_keeps_ports_config_and_results(core: hs.Core, cnn, rng) -> None:
    compiled = core.compile_model(cnn.model, "TEMPLATE", {"PERF_COUNT": True})
    imported = core.import_model(compiled.export_model(), "TEMPLATE.1")
    assert [p.any_name for p in imported.inputs] == ["x"] and [p.any_name for p in imported.outputs] == ["y"]
    assert imported.get_property("LOADED_FROM_CACHE") is False
    assert imported.get_property("PERF_COUNT") is True
    assert imported.get_property("EXECUTION_DEVICES") == ["TEMPLATE.1"]
    assert imported.get_property("NETWORK_NAME") == "cnn"
    inputs = cnn.make_inputs(rng)
    np.testing.assert_array_equal(imported(inputs)[0], compiled(inputs)[0])
    np.testing.assert_allclose(imported(inputs)[0], cnn.expected(inputs)[0], rtol=1e-4, atol=1e-4)


def test_a_flipped_byte_anywhere_in_the_blob_is_detected(core: hs.Core, mlp) -> None:
    blob = core.compile_model(mlp.model, "TEMPLATE").export_model()
    for position in range(len(blob)):
        damaged = bytearray(blob)
        damaged[position] ^= 0x10
        with pytest.raises(BlobFormatError):
            core.import_model(bytes(damaged), "TEMPLATE")


def test_a_truncated_blob_is_detected(core: hs.Core, mlp) -> None:
    blob = core.compile_model(mlp.model, "TEMPLATE").export_model()
    for length in [0, 4, 15, 16, 40, len(blob) // 2, len(blob) - 1]:
        with pytest.raises(BlobFormatError):
            core.import_model(blob[:length], "TEMPLATE")


def test_foreign_and_newer_blobs_are_rejected(core: hs.Core, mlp) -> None:
    blob = core.compile_model(mlp.model, "TEMPLATE").export_model()
    with pytest.raises(BlobFormatError, match="exported by device 'XLA'"):
        core.import_model(pack_blob("XLA", {"model": b"{}"}), "TEMPLATE")
    newer = bytearray(blob)
    struct.pack_into("<H", newer, 8, 99)
    with pytest.raises(BlobFormatError, match="version 99 is newer"):
        core.import_model(bytes(newer), "TEMPLATE")


@pytest.mark.parametrize(
    ("frames", "message"),
    [({"config": b"{}"}, "lacks frame"), ({"config": b"{}", "model": b"not json"}, "malformed"),
     ({"config": b"[", "model": b"{}"}, "malformed")],
)  # fmt: skip
def test_well_framed_but_wrong_payloads_are_rejected(core: hs.Core, frames: dict[str, bytes], message: str) -> None:
    with pytest.raises(BlobFormatError, match=message):
        core.import_model(pack_blob("TEMPLATE", frames), "TEMPLATE")


def test_blob_config_frame_is_the_compile_config_as_json(core: hs.Core, mlp) -> None:
    blob = core.compile_model(mlp.model, "TEMPLATE.1", {"NUM_STREAMS": 2}).export_model()
    config = json.loads(unpack_blob(blob, "TEMPLATE")["config"])
    assert (config["NUM_STREAMS"], config["DEVICE_ID"], config["INFERENCE_PRECISION_HINT"]) == (2, "1", "f32")


def test_template_registered_under_another_name_reports_that_name(mlp) -> None:
    core = hs.Core(plugins={"REF": TemplatePlugin(num_devices=2)}, autoload=False)
    compiled = core.compile_model(mlp.model, "REF.1")
    assert compiled.get_property("EXECUTION_DEVICES") == ["REF.1"]
    assert set(core.query_model(mlp.model, "REF").values()) == {"REF"}


def test_throughput_hint_sets_the_optimal_number_of_requests_unless_streams_are_set(core, mlp) -> None:
    latency = core.compile_model(mlp.model, "TEMPLATE", {"PERFORMANCE_HINT": "LATENCY"})
    throughput = core.compile_model(mlp.model, "TEMPLATE", {"PERFORMANCE_HINT": "THROUGHPUT"})
    pinned = core.compile_model(mlp.model, "TEMPLATE", {"PERFORMANCE_HINT": "THROUGHPUT", "NUM_STREAMS": 3})
    assert latency.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") == 1
    assert throughput.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") >= 2
    assert pinned.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") == 3


def test_overflow_gives_ieee_results_without_warnings() -> None:
    """Kernels shared with other devices do not silence numpy themselves: TEMPLATE does, once per run."""
    x = opset.parameter([3], np.float32, name="x")
    model = hs.Model([opset.sigmoid(x, name="s"), opset.exp(x, name="e")], [x], name="overflow")
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin}, autoload=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sigmoid, exp = core.compile_model(model, "TEMPLATE")({"x": np.array([-1000, 0, 1000], np.float32)}).to_tuple()
    np.testing.assert_array_equal(sigmoid, np.array([0.0, 0.5, 1.0], np.float32))
    assert exp[0] == 0.0 and exp[1] == 1.0 and np.isposinf(exp[2])
