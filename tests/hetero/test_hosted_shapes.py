"""A split model reads the shape of a model input on the host: a submodel that needs only the shape of
an input another submodel reads (a decoder's past length, read from one layer's cache) gets the shape,
not the tensor; export and import keep it so."""

from __future__ import annotations

import numpy as np

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.hetero.plugin import HeteroPlugin
from template_plugin import TemplatePlugin


def _model() -> hs.Model:
    """``relu(x)`` on TEMPLATE.1, and ``ShapeOf(x) + 10`` with ``y * 2`` on TEMPLATE.0."""
    x = opset.parameter([-1, 4], hs.Type.f32, name="x")
    y = opset.parameter([2], hs.Type.i64, name="y")
    shape = opset.shape_of(x, name="shape")
    counted = opset.add(shape, np.int64(10), name="counted")
    doubled = opset.multiply(y, np.int64(2), name="doubled")
    relu = opset.relu(x, name="relu")
    for node, device in ((shape, "TEMPLATE.0"), (counted, "TEMPLATE.0"), (doubled, "TEMPLATE.0"), (relu, "TEMPLATE.1")):
        node.get_rt_info()["affinity"] = device
    return hs.Model([counted, doubled, relu], [x, y], name="shapes")


def test_a_submodel_that_needs_only_an_inputs_shape_does_not_take_the_input() -> None:
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin(num_devices=2), "HETERO": HeteroPlugin()}, autoload=False)
    compiled = core.compile_model(_model(), "HETERO:TEMPLATE.0,TEMPLATE.1")
    assert compiled.get_property("HETERO_NUMBER_OF_SUBMODELS") == 2
    first = next(s for s in compiled.split.submodels if s.device == "TEMPLATE.0")
    assert "x:0" not in first.inputs and "shape:0" in first.inputs
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    y = np.array([5, -7])
    for model in (compiled, core.import_model(compiled.export_model(), "HETERO:TEMPLATE.0,TEMPLATE.1")):
        counted, doubled, relu = model({"x": x, "y": y}).to_tuple()
        np.testing.assert_array_equal(counted, [13, 14])
        np.testing.assert_array_equal(doubled, [10, -14])
        np.testing.assert_array_equal(relu, np.maximum(x, 0))
