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
