"""HETERO as a user drives it: the seeds' user guide (003) on TEMPLATE devices, end to end."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import (
    AffinityError,
    BlobFormatError,
    CompilationError,
    DeviceNotFoundError,
    PartitionError,
    PropertyValueError,
    UnsupportedOperationError,
    UnsupportedPropertyError,
)
from hetero_sdk.hetero.plugin import HeteroPlugin
from hetero_sdk.plugin import RemoteContext, hookimpl
from template_plugin import TemplatePlugin


class NoSigmoidDevice(TemplatePlugin):
    """A TEMPLATE that refuses Sigmoid, like an accelerator missing one activation."""

    @hookimpl
    def query_model(
        self, model: hs.Model, properties: dict[str, Any], device_name: str, core: hs.Core
    ) -> dict[str, str]:
        answer = TemplatePlugin.query_model(self, model, properties, device_name, core)
        refused = {n.friendly_name for n in model.get_ops() if n.type_name == "Sigmoid"}
        return {op: dev for op, dev in answer.items() if op not in refused}


class FailingCompileDevice(TemplatePlugin):
    """Claims everything, then fails to compile."""

    @hookimpl
    def compile_model(
        self,
        model: hs.Model,
        properties: dict[str, Any],
        context: RemoteContext | None,
        device_name: str,
        core: hs.Core,
    ) -> Any:
        raise RuntimeError("out of device memory")


@pytest.fixture
def core() -> hs.Core:
    return hs.Core(
        plugins={
            "TEMPLATE": TemplatePlugin(num_devices=2),
            "ACCEL": NoSigmoidDevice(),
            "BROKEN": FailingCompileDevice(),
            "HETERO": HeteroPlugin(),
        },
        autoload=False,
    )


def _mlp() -> tuple[hs.Model, dict[str, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((8, 16)).astype(np.float32)
    w2 = rng.standard_normal((16, 4)).astype(np.float32)
    x = opset.parameter([3, 8], hs.Type.f32, name="x")
    h = opset.relu(opset.matmul(x, opset.constant(w1, name="w1"), name="mm1"), name="relu")
    s = opset.sigmoid(h, name="sig")
    y = opset.tanh(opset.matmul(s, opset.constant(w2, name="w2"), name="mm2"), name="y")
    model = hs.Model([y], [x], "mlp")
    data = rng.standard_normal((3, 8)).astype(np.float32)
    expected = np.tanh((1 / (1 + np.exp(-np.maximum(data @ w1, 0)))) @ w2)
    return model, {"x": data}, expected


def test_automatic_mode_sends_refused_ops_to_the_next_device(core: hs.Core) -> None:
    model, inputs, expected = _mlp()
    compiled = core.compile_model(model, "HETERO:ACCEL,TEMPLATE")
    np.testing.assert_allclose(compiled(inputs)["y"], expected, rtol=1e-5, atol=1e-6)
    report = compiled.placement_report()
    assert report.placement["sig"][0] == "TEMPLATE"
    assert report.placement["mm1"][0] == "ACCEL" and report.placement["mm2"][0] == "ACCEL"
    assert report.rejected_by["sig"] == ["ACCEL"]
    assert compiled.get_property("HETERO_NUMBER_OF_SUBMODELS") == 3
    assert compiled.get_property("EXECUTION_DEVICES") == ["ACCEL.0", "TEMPLATE.0"]


def test_priorities_via_property_equal_device_string(core: hs.Core) -> None:
    model, inputs, expected = _mlp()
    compiled = core.compile_model(model, "HETERO", {hs.properties.device.priorities: "ACCEL,TEMPLATE"})
    np.testing.assert_allclose(compiled(inputs)[0], expected, rtol=1e-5, atol=1e-6)
    core.set_property("HETERO", {"MULTI_DEVICE_PRIORITIES": "ACCEL,TEMPLATE"})
    assert core.compile_model(model, "HETERO").get_property("HETERO_NUMBER_OF_SUBMODELS") == 3


def test_query_model_answers_every_op_with_compilable_device_names(core: hs.Core) -> None:
    model, _, _ = _mlp()
    answer = core.query_model(model, "HETERO:ACCEL,TEMPLATE")
    assert set(answer) == {n.friendly_name for n in model.get_ops()}
    assert answer["sig"] == "TEMPLATE" and answer["x"] == "ACCEL" and answer["w2"] == "ACCEL"
    assert set(answer.values()) <= {"ACCEL", "TEMPLATE"}


def test_query_leaves_out_ops_no_device_claims_and_compile_names_them(core: hs.Core) -> None:
    model, _, _ = _mlp()
    assert "sig" not in core.query_model(model, "HETERO:ACCEL")
    with pytest.raises(UnsupportedOperationError, match=r"sig \(Sigmoid\).*ACCEL"):
        core.compile_model(model, "HETERO:ACCEL")


def test_manual_mode_follows_rt_info(core: hs.Core) -> None:
    model, inputs, expected = _mlp()
    for op in model.get_ops():
        op.get_rt_info()["affinity"] = "TEMPLATE.1" if op.friendly_name in ("relu", "sig") else "TEMPLATE.0"
    compiled = core.compile_model(model, "HETERO:TEMPLATE.0,TEMPLATE.1")
    np.testing.assert_allclose(compiled(inputs)["y"], expected, rtol=1e-5, atol=1e-6)
    assert compiled.placement_report().placement["relu"] == ("TEMPLATE.1", 1)
    assert compiled.placement_report().manual


def test_manual_mode_with_missing_affinity_names_the_ops(core: hs.Core) -> None:
    model, _, _ = _mlp()
    model.get_ops()[3].get_rt_info()["affinity"] = "TEMPLATE.0"
    with pytest.raises(AffinityError, match=r"incomplete.*have none"):
        core.compile_model(model, "HETERO:TEMPLATE.0,TEMPLATE.1")


def test_manual_mode_with_unknown_device_names_it(core: hs.Core) -> None:
    model, _, _ = _mlp()
    for op in model.get_ops():
        op.get_rt_info()["affinity"] = "GPU"
    with pytest.raises(AffinityError, match=r"'GPU'.*use one of: TEMPLATE\.0, TEMPLATE\.1"):
        core.compile_model(model, "HETERO:TEMPLATE.0,TEMPLATE.1")


@pytest.mark.parametrize("affinity", ["HETERO", "HETERO:TEMPLATE.0"])
def test_an_affinity_to_hetero_itself_is_refused(core: hs.Core, affinity: str) -> None:
    model, _, _ = _mlp()
    for op in model.get_ops():
        op.get_rt_info()["affinity"] = affinity
    with pytest.raises(AffinityError, match=rf"'{affinity}' on .*names HETERO, which would split the model again"):
        core.compile_model(model, "HETERO")


def test_an_affinity_that_is_not_a_string_is_named_as_such(core: hs.Core) -> None:
    model, _, _ = _mlp()
    for op in model.get_ops():
        op.get_rt_info()["affinity"] = 7 if op.friendly_name == "sig" else "TEMPLATE"
    with pytest.raises(AffinityError, match=r"must be device names \(strings\); sig: 7 \(int\)"):
        core.compile_model(model, "HETERO:TEMPLATE")


def test_an_affinity_may_name_an_id_of_a_listed_device(core: hs.Core) -> None:
    model, inputs, expected = _mlp()
    for op in model.get_ops():
        op.get_rt_info()["affinity"] = "TEMPLATE.1" if op.friendly_name == "sig" else "TEMPLATE"
    compiled = core.compile_model(model, "HETERO:TEMPLATE")
    np.testing.assert_allclose(compiled(inputs)["y"], expected, rtol=1e-5, atol=1e-6)
    assert compiled.placement_report().placement["sig"] == ("TEMPLATE.1", 1)
    model.get_ops()[-2].get_rt_info()["affinity"] = "TEMPLATE.5"
    with pytest.raises(AffinityError, match=r"'TEMPLATE\.5'.*use one of: TEMPLATE$"):
        core.compile_model(model, "HETERO:TEMPLATE")


def test_query_model_places_constants_and_parameters_that_only_reach_results(core: hs.Core) -> None:
    x = opset.parameter([2], hs.Type.f32, name="x")
    unused = opset.parameter([3], hs.Type.f32, name="unused")
    k = opset.constant(np.arange(3, dtype=np.float32), name="k")
    model = hs.Model([opset.relu(x, name="y"), k, unused], [x, unused], "loose_ends")
    answer = core.query_model(model, "HETERO:ACCEL,TEMPLATE")
    assert answer == {name: "ACCEL" for name in core.query_model(model, "ACCEL")}
    assert {"k", "unused", "x", "y"} <= answer.keys() and len(answer) == 7  # and the three Results


def test_later_devices_are_asked_only_about_the_ops_earlier_ones_refused(core: hs.Core) -> None:
    model, inputs, expected = _mlp()
    asked: dict[str, set[str]] = {}
    query = core.query_model

    def spy(model: hs.Model, device: str, config: Any = None) -> dict[str, str]:
        if not device.startswith("HETERO"):
            asked[device] = {
                n.friendly_name for n in model.get_ops() if n.type_name not in ("Parameter", "Constant", "Result")
            }
        return query(model, device, config)

    core.query_model = spy  # type: ignore[method-assign]
    compiled = core.compile_model(model, "HETERO:ACCEL,TEMPLATE")
    assert asked == {"ACCEL": {"mm1", "relu", "sig", "mm2", "y"}, "TEMPLATE": {"sig"}}
    np.testing.assert_allclose(compiled(inputs)["y"], expected, rtol=1e-5, atol=1e-6)


def test_a_wrong_value_for_a_device_stays_a_property_error(core: hs.Core) -> None:
    model, _, _ = _mlp()
    with pytest.raises(PropertyValueError, match="'FAST' is not a valid value for PERFORMANCE_HINT"):
        core.compile_model(model, "HETERO:TEMPLATE", {"PERFORMANCE_HINT": "FAST"})
    with pytest.raises(PropertyValueError, match="NUM_STREAMS"):
        core.compile_model(model, "HETERO:TEMPLATE", {"DEVICE_PROPERTIES": {"TEMPLATE": {"NUM_STREAMS": -1}}})


def test_combined_mode_edits_query_answer(core: hs.Core) -> None:
    """The seeds' combined example: query, correct one op by hand, write rt_info, compile."""
    model, inputs, expected = _mlp()
    supported = core.query_model(model, "HETERO:ACCEL,TEMPLATE")
    supported["mm2"] = supported["y"] = "TEMPLATE"  # keep the tail on one device: 2 subgraphs, not 3
    for node in model.get_ops():
        node.get_rt_info()["affinity"] = supported[node.get_friendly_name()]
    compiled = core.compile_model(model, "HETERO:ACCEL,TEMPLATE")
    np.testing.assert_allclose(compiled(inputs)[0], expected, rtol=1e-5, atol=1e-6)
    assert compiled.placement_report().placement["mm2"][0] == "TEMPLATE"
    assert compiled.get_property("HETERO_NUMBER_OF_SUBMODELS") == 2


def test_device_properties_reach_only_their_device(core: hs.Core) -> None:
    """The seeds' 'configure fallback devices' example."""
    model, _, _ = _mlp()
    core.set_property("HETERO", {hs.properties.device.priorities: "ACCEL,TEMPLATE"})
    core.set_property("ACCEL", {hs.properties.enable_profiling: True})
    core.set_property("TEMPLATE", {hs.properties.hint.inference_precision: hs.Type.f32})
    compiled = core.compile_model(model, "HETERO", {"DEVICE_PROPERTIES": {"TEMPLATE": {"NUM_STREAMS": 2}}})
    per_device = compiled.get_property("DEVICE_PROPERTIES")
    # keyed as the priorities name the devices, while EXECUTION_DEVICES names the instances
    assert set(per_device) == {"ACCEL", "TEMPLATE"}
    assert compiled.get_property("EXECUTION_DEVICES") == ["ACCEL.0", "TEMPLATE.0"]
    assert per_device["ACCEL"]["PERF_COUNT"] is True
    assert per_device["TEMPLATE"]["PERF_COUNT"] is False
    assert per_device["TEMPLATE"]["NUM_STREAMS"] == 2
    assert core.get_property("TEMPLATE", "NUM_STREAMS") == 0  # the plugin-wide default is untouched


def test_hetero_level_key_no_device_supports_is_an_error(core: hs.Core) -> None:
    model, _, _ = _mlp()
    with pytest.raises(UnsupportedPropertyError, match="PERFORMANCE_HIN"):
        core.compile_model(model, "HETERO:TEMPLATE", {"PERFORMANCE_HIN": "LATENCY"})


def test_compile_failure_names_device_and_subgraph_and_fallback_recovers(core: hs.Core) -> None:
    model, inputs, expected = _mlp()
    with pytest.raises(CompilationError, match=r"BROKEN failed to compile subgraph0"):
        core.compile_model(model, "HETERO:BROKEN,TEMPLATE")
    compiled = core.compile_model(model, "HETERO:BROKEN,TEMPLATE", {"HETERO_FALLBACK_POLICY": "NEXT_DEVICE"})
    np.testing.assert_allclose(compiled(inputs)[0], expected, rtol=1e-5, atol=1e-6)
    assert compiled.placement_report().fallbacks[0][:2] == ("BROKEN", "TEMPLATE")


def test_profiling_rows_are_per_subgraph_with_totals_and_transfers(core: hs.Core) -> None:
    model, inputs, _ = _mlp()
    compiled = core.compile_model(model, "HETERO:ACCEL,TEMPLATE", {"PERF_COUNT": True})
    request = compiled.create_infer_request()
    request.infer(inputs)
    names = [row.node_name for row in request.get_profiling_info()]
    assert "subgraph1: sig" in names
    for i in range(3):
        assert f"subgraph{i}: total" in names and f"subgraph{i}: input transfer" in names


def test_visualize_env_writes_both_dot_files(core: hs.Core, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HETERO_SDK_VISUALIZE", str(tmp_path))
    model, _, _ = _mlp()
    core.compile_model(model, "HETERO:ACCEL,TEMPLATE")
    affinity = (tmp_path / "hetero_affinity_mlp.dot").read_text()
    subgraphs = (tmp_path / "hetero_subgraphs_mlp.dot").read_text()
    assert affinity.startswith('digraph "mlp"') and "sig\\nSigmoid\\nTEMPLATE" in affinity
    assert "TEMPLATE #1" in subgraphs and "ACCEL #2" in subgraphs


def test_export_import_round_trip_and_corruption(core: hs.Core) -> None:
    model, inputs, expected = _mlp()
    compiled = core.compile_model(model, "HETERO:ACCEL,TEMPLATE")
    blob = compiled.export_model()
    again = core.import_model(blob, "HETERO")
    np.testing.assert_allclose(again(inputs)["y"], expected, rtol=1e-5, atol=1e-6)
    assert again.get_property("HETERO_NUMBER_OF_SUBMODELS") == 3
    assert again.get_property("LOADED_FROM_CACHE") is False
    flipped = bytearray(blob)
    flipped[len(blob) // 2] ^= 0x01
    with pytest.raises(BlobFormatError, match=r"corrupted|truncated|malformed"):
        core.import_model(bytes(flipped), "HETERO")
    with pytest.raises(BlobFormatError, match="exported by device 'HETERO'"):
        core.import_model(blob, "TEMPLATE")


def test_hetero_refuses_the_documented_algorithms_cyclic_partition(core: hs.Core) -> None:
    """hetero.md's four-node case: 0,3 on A and 1,2 on B; documented gives A=[0,3], B=[1,2], a cycle."""
    a = opset.parameter([2], hs.Type.f32, name="a")
    b = opset.parameter([2], hs.Type.f32, name="b")
    n0, n1 = opset.relu(a, name="n0"), opset.abs(b, name="n1")
    n2, n3 = opset.add(n0, n1, name="n2"), opset.multiply(n0, n1, name="n3")
    model = hs.Model([n2, n3], [a, b], "four")
    for node, device in ((n0, "TEMPLATE.0"), (n3, "TEMPLATE.0"), (n1, "TEMPLATE.1"), (n2, "TEMPLATE.1")):
        node.get_rt_info()["affinity"] = device
    with pytest.raises(PartitionError):
        core.compile_model(model, "HETERO:TEMPLATE.0,TEMPLATE.1", {"HETERO_PARTITIONER": "documented"})
    compiled = core.compile_model(model, "HETERO:TEMPLATE.0,TEMPLATE.1")
    x, y = np.array([-1.0, 2.0], np.float32), np.array([3.0, -4.0], np.float32)
    out = compiled({"a": x, "b": y})
    np.testing.assert_array_equal(out["n2"], np.maximum(x, 0) + np.abs(y))
    np.testing.assert_array_equal(out["n3"], np.maximum(x, 0) * np.abs(y))


def test_async_requests_pipeline_and_match_sync(core: hs.Core) -> None:
    model, _, _ = _mlp()
    compiled = core.compile_model(model, "HETERO:ACCEL,TEMPLATE")
    rng = np.random.default_rng(1)
    batches = [rng.standard_normal((3, 8)).astype(np.float32) for _ in range(24)]
    expected = [compiled({"x": b})[0].copy() for b in batches]
    got: dict[int, np.ndarray] = {}
    queue = hs.AsyncInferQueue(compiled, 4)
    queue.set_callback(lambda request, i: got.__setitem__(i, request.get_output_tensor(0).data.copy()))
    for i, batch in enumerate(batches):
        queue.start_async({"x": batch}, i)
    queue.wait_all()
    for i, value in enumerate(expected):
        np.testing.assert_array_equal(got[i], value)


_UNARY = [opset.relu, opset.tanh, opset.sigmoid, opset.abs, opset.negative, opset.exp]
_BINARY = [opset.add, opset.subtract, opset.multiply, opset.maximum, opset.minimum]


@st.composite
def _random_models(draw: st.DrawFn) -> tuple[hs.Model, list[str]]:
    """Random layered models over two inputs, with a random device per op."""
    values = [opset.parameter([2, 3], hs.Type.f32, name="p0"), opset.parameter([2, 3], hs.Type.f32, name="p1")]
    parameters = list(values)
    affinities = []
    for i in range(draw(st.integers(1, 14))):
        if draw(st.booleans()):
            op = draw(st.sampled_from(_UNARY))(draw(st.sampled_from(values)), name=f"op{i}")
        else:
            left, right = draw(st.sampled_from(values)), draw(st.sampled_from(values))
            op = draw(st.sampled_from(_BINARY))(left, right, name=f"op{i}")
        op.get_rt_info()["affinity"] = draw(st.sampled_from(["TEMPLATE.0", "TEMPLATE.1"]))
        affinities.append(op.get_rt_info()["affinity"])
        values.append(op)
    outputs = values[2:][-draw(st.integers(1, min(3, len(values) - 2))) :]
    return hs.Model(outputs, parameters, "random"), affinities


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_random_models(), st.integers(0, 2**31 - 1))
def test_random_models_through_hetero_equal_template_alone(case: tuple[hs.Model, list[str]], seed: int) -> None:
    model, _ = case
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin(num_devices=2), "HETERO": HeteroPlugin()}, autoload=False)
    rng = np.random.default_rng(seed)
    inputs = {"p0": rng.uniform(-2, 2, (2, 3)).astype(np.float32), "p1": rng.uniform(-2, 2, (2, 3)).astype(np.float32)}
    plain = core.compile_model(model, "TEMPLATE", {"TEMPLATE_DISABLE_TRANSFORMATIONS": True})(inputs)
    split = core.compile_model(model, "HETERO:TEMPLATE.0,TEMPLATE.1")
    imported = core.import_model(split.export_model(), "HETERO")
    for got in (split(inputs), imported(inputs)):
        for i in range(len(model.outputs)):
            np.testing.assert_allclose(got[i], plain[i], rtol=1e-6, atol=1e-6)


def test_hetero_perf_count_reaches_devices_and_per_device_profiling_is_honoured(core: hs.Core) -> None:
    model, inputs, _ = _mlp()
    everywhere = core.compile_model(model, "HETERO:ACCEL,TEMPLATE", {"PERF_COUNT": True})
    assert all(p["PERF_COUNT"] for p in everywhere.get_property("DEVICE_PROPERTIES").values())
    only_template = core.compile_model(
        model, "HETERO:ACCEL,TEMPLATE", {"DEVICE_PROPERTIES": {"TEMPLATE": {"PERF_COUNT": True}}}
    )
    assert only_template.get_property("PERF_COUNT") is True
    request = only_template.create_infer_request()
    request.infer(inputs)
    op_rows = {r.node_name for r in request.get_profiling_info() if not r.node_name.endswith(("total", "transfer"))}
    assert op_rows == {"subgraph1: sig"}


def test_runtime_model_names_each_op_its_device_and_time_after_a_profiled_run(core: hs.Core) -> None:
    model, inputs, _ = _mlp()
    compiled = core.compile_model(model, "HETERO:ACCEL,TEMPLATE", {"PERF_COUNT": True})
    compiled.create_infer_request().infer(inputs)
    ops = {n.friendly_name: n.get_rt_info() for n in compiled.get_runtime_model().get_ops()}
    assert ops["sig"]["affinity"] == "TEMPLATE" and ops["sig"]["subgraph"] == 1
    assert ops["sig"]["layerType"] == "Sigmoid" and ops["sig"]["execTimeMcs"] > 0
    assert ops["mm1"]["affinity"] == "ACCEL" and ops["mm1"]["execTimeMcs"] > 0


class _Recorded(hs.CompiledModel):
    """Wraps a compiled model: each run sleeps a little and records when it ran."""

    def __init__(self, model: hs.Model, inner: hs.CompiledModel, log: list[tuple[str, float, float]]) -> None:
        super().__init__(model.clone(), inner.device_name, {})
        self.inner, self.log = inner, log

    def run(self, inputs: Any, context: Any) -> list[Any]:
        started = time.perf_counter()
        time.sleep(0.02)
        outputs = self.inner.run(inputs, context)
        self.log.append((self.device_name, started, time.perf_counter()))
        return outputs


class RecordingDevice(TemplatePlugin):
    def __init__(self, log: list[tuple[str, float, float]]) -> None:
        super().__init__()
        self.log = log

    @hookimpl
    def compile_model(
        self,
        model: hs.Model,
        properties: dict[str, Any],
        context: RemoteContext | None,
        device_name: str,
        core: hs.Core,
    ) -> Any:
        return _Recorded(
            model, TemplatePlugin.compile_model(self, model, properties, context, device_name, core), self.log
        )


def test_async_requests_keep_both_devices_busy_at_once() -> None:
    """Pipelining: while one request runs its second subgraph on B, another runs its first on A."""
    log: list[tuple[str, float, float]] = []
    core = hs.Core(
        plugins={"A": RecordingDevice(log), "B": RecordingDevice(log), "HETERO": HeteroPlugin()}, autoload=False
    )
    model, inputs, expected = _mlp()
    for op in model.get_ops():
        op.get_rt_info()["affinity"] = "A" if op.friendly_name in ("mm1", "relu") else "B"
    compiled = core.compile_model(model, "HETERO:A,B")
    assert compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") >= 2
    queue = hs.AsyncInferQueue(compiled, 4)
    results: list[np.ndarray] = []
    queue.set_callback(lambda request, _: results.append(request.get_output_tensor(0).data.copy()))
    for _ in range(8):
        queue.start_async(inputs)
    queue.wait_all()
    for value in results:
        np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-6)
    on_a = [(s, e) for d, s, e in log if d.startswith("A")]
    on_b = [(s, e) for d, s, e in log if d.startswith("B")]
    assert len(on_a) == len(on_b) == 8
    assert any(sa < eb and sb < ea for sa, ea in on_a for sb, eb in on_b), "A and B never ran at the same time"


@pytest.mark.parametrize("call", ["compile_model", "query_model"])
def test_a_listed_device_id_that_does_not_exist_is_refused(core: hs.Core, call: str) -> None:
    model, _, _ = _mlp()
    with pytest.raises(DeviceNotFoundError, match=r"device 'TEMPLATE\.2' does not exist; TEMPLATE has ids: 0, 1"):
        getattr(core, call)(model, "HETERO:TEMPLATE.0,TEMPLATE.2")


def test_a_misspelled_property_gets_a_hint_naming_every_listed_device(core: hs.Core) -> None:
    model, _, _ = _mlp()
    with pytest.raises(
        UnsupportedPropertyError, match=r"ACCEL, TEMPLATE .*'NUM_STREAM' \(did you mean NUM_STREAMS\?\)"
    ):
        core.compile_model(model, "HETERO:ACCEL,TEMPLATE", {"NUM_STREAM": 2})


@pytest.mark.parametrize("perf_count", [False, True], ids=["fast-path", "profiled"])
def test_one_submodel_passes_inputs_constants_and_its_outputs_in_model_order(core: hs.Core, perf_count: bool) -> None:
    """A model HETERO runs as one submodel (its fast path, and the general loop when profiled): the
    outputs in the model's order, one an input passed straight through, one a Constant."""
    a = opset.parameter([2, 3], hs.Type.f32, name="a")
    b = opset.parameter([2, 3], hs.Type.f32, name="b")
    bias = np.array([1.0, -2.0, 0.5], np.float32)
    results = [
        opset.result(opset.add(opset.multiply(b, b, name="bb"), bias, name="bb_bias"), name="first"),
        opset.result(a, name="same_a"),
        opset.result(opset.constant(bias, name="bias"), name="bias_out"),
        opset.result(opset.subtract(b, a, name="b_minus_a"), name="last"),
    ]
    model = hs.Model(results, [a, b], name="mixed")
    compiled = core.compile_model(model, "HETERO:TEMPLATE", {"PERF_COUNT": perf_count})
    assert compiled.get_property("HETERO_NUMBER_OF_SUBMODELS") == 1
    rng = np.random.default_rng(5)
    xa, xb = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    got = compiled.create_infer_request().infer({"a": xa, "b": xb}).to_tuple()
    for value, want in zip(got, (xb * xb + bias, xa, bias, xb - xa), strict=True):
        np.testing.assert_allclose(value, want, rtol=1e-6)
