"""HETERO:XLA,TEMPLATE on the detection sample: the backbone runs on XLA, NonMaxSuppression (whose
output shape depends on the data) on TEMPLATE, and the results equal TEMPLATE alone."""

from __future__ import annotations

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk.hetero.plugin import HeteroPlugin
from hetero_sdk.samples import detection_model
from template_plugin import TemplatePlugin

hetero_sdk_jax = pytest.importorskip("hetero_sdk_jax", reason="the XLA plugin (plugins/jax) is not installed")


@pytest.fixture(scope="module")
def core() -> hs.Core:
    return hs.Core(
        plugins={"TEMPLATE": TemplatePlugin(), "XLA": hetero_sdk_jax.XlaPlugin(), "HETERO": HeteroPlugin()},
        autoload=False,
    )


@pytest.fixture(scope="module")
def inputs() -> dict[str, np.ndarray]:
    model = detection_model()
    rng = np.random.default_rng(7)
    return {p.output(0).any_name: rng.standard_normal(p.output(0).shape).astype(np.float32)
            for p in model.get_parameters()}  # fmt: skip


def test_nms_falls_back_to_template_and_the_backbone_stays_on_xla(core: hs.Core) -> None:
    model = detection_model()
    answer = core.query_model(model, "HETERO:XLA,TEMPLATE")
    nms = [n.friendly_name for n in model.get_ops() if n.type_name == "NonMaxSuppression"]
    convs = [n.friendly_name for n in model.get_ops() if n.type_name == "Convolution"]
    assert nms and all(answer[op] == "TEMPLATE" for op in nms)
    assert convs and all(answer[op] == "XLA" for op in convs)


def test_split_results_equal_template_alone(core: hs.Core, inputs: dict[str, np.ndarray]) -> None:
    model = detection_model()
    alone = core.compile_model(model, "TEMPLATE")(inputs)
    split = core.compile_model(model, "HETERO:XLA,TEMPLATE")
    assert split.get_property("EXECUTION_DEVICES")[0].startswith("XLA")
    assert split.get_property("HETERO_NUMBER_OF_SUBMODELS") == 2
    got = split(inputs)
    for i, port in enumerate(split.outputs):
        expected = alone[i]
        if port.element_type.is_real:
            np.testing.assert_allclose(got[i], expected, rtol=1e-4, atol=1e-5)
        else:
            np.testing.assert_array_equal(got[i], expected)


def test_split_model_survives_export_and_import(core: hs.Core, inputs: dict[str, np.ndarray]) -> None:
    split = core.compile_model(detection_model(), "HETERO:XLA,TEMPLATE")
    again = core.import_model(split.export_model(), "HETERO")
    for a, b in zip(split(inputs).to_tuple(), again(inputs).to_tuple()):
        np.testing.assert_array_equal(a, b)


def test_each_submodel_keeps_its_own_state_for_the_request_and_results_survive_the_next_run(
    core: hs.Core, inputs: dict[str, np.ndarray]
) -> None:
    model = detection_model()
    split = core.compile_model(model, "HETERO:XLA,TEMPLATE")
    stores: list[tuple[int, int]] = []
    for index, submodel in enumerate(split.compiled):
        run = submodel.run

        def spy(args, context, run=run, index=index):  # records which store each run was given
            stores.append((index, id(context.state)))
            return run(args, context)

        submodel.run = spy
    first_request, second_request = split.create_infer_request(), split.create_infer_request()
    other = {name: value * 0.5 for name, value in inputs.items()}
    first = first_request.infer(inputs)
    kept = {port.any_name: np.array(first[port.any_name]) for port in split.outputs}
    first_request.infer(other)
    second_request.infer(inputs)
    alone = core.compile_model(model, "TEMPLATE")(inputs)
    for i, port in enumerate(split.outputs):  # the first results are not overwritten by the next run's buffers
        np.testing.assert_array_equal(first[port.any_name], kept[port.any_name])
        np.testing.assert_allclose(kept[port.any_name], alone[i], rtol=1e-4, atol=1e-5)
    by_run = [stores[k : k + 2] for k in range(0, len(stores), 2)]
    assert by_run[0] == by_run[1]  # the same request: the same store per submodel, run after run
    kept = [(i, s) for i, s in by_run[0] if s != id(None)]  # XLA keeps no per-request state (None)
    assert [split.compiled[i].device_name.split(".")[0] for i, _ in kept] == ["TEMPLATE"]  # its arena
    assert {s for _, s in by_run[2]}.isdisjoint({s for _, s in kept})  # another request's own


def test_a_key_only_an_unused_listed_device_supports_is_accepted_and_goes_nowhere(core: hs.Core) -> None:
    x = hs.opset.parameter([1, 4], hs.Type.f32, name="x")
    model = hs.Model([hs.opset.relu(x, name="y")], [x], "tiny")
    assert "INFERENCE_NUM_THREADS" not in core.get_property("XLA", "SUPPORTED_PROPERTIES")
    compiled = core.compile_model(model, "HETERO:XLA,TEMPLATE", {"INFERENCE_NUM_THREADS": 1})
    assert compiled.get_property("EXECUTION_DEVICES") == ["XLA.0"]
    assert "INFERENCE_NUM_THREADS" not in compiled.get_property("DEVICE_PROPERTIES")["XLA"]
    np.testing.assert_array_equal(compiled({"x": np.array([[-1, 0, 2, -3]], np.float32)})["y"], [[0, 0, 2, 0]])
