"""Model.reshape, as ov.Model.reshape: new input shapes re-inferred through the whole model (shape
sub-graphs and control-flow bodies included), atomically, and the result runs on every device."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx_models import graph_model, value_info

import hetero_sdk as hs
from hetero_sdk import opset, rt_info


def _flatten_model() -> hs.Model:
    """``relu(x)`` reshaped to ``[batch, -1]`` through ShapeOf -> Gather -> Concat, then ``@ w``."""
    x = opset.parameter([-1, 3, -1], hs.Type.f32, name="x")
    batch = opset.gather(opset.shape_of(x), [0], 0)
    flat = opset.reshape(opset.relu(x), opset.concat([batch, [-1]], axis=0), special_zero=False, name="flat")
    return hs.Model([opset.reduce_sum(flat, [1], name="total")], [x], name="flatten")


def _flatten_reference(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0).reshape(x.shape[0], -1).sum(axis=1)


@pytest.mark.parametrize("key", ["x", 0, "port"])
def test_reshape_by_name_index_or_port_makes_every_shape_static(key: str | int) -> None:
    model = _flatten_model()
    model.reshape({model.input(0) if key == "port" else key: [2, 3, 4]})
    assert not model.is_dynamic()
    assert model.get_parameters()[0].get_output_partial_shape(0) == hs.PartialShape([2, 3, 4])
    flat = next(n for n in model.get_ops() if n.friendly_name == "flat")
    assert flat.get_output_partial_shape(0) == hs.PartialShape([2, 12])


def test_a_single_shape_reshapes_a_one_input_model_and_minus_one_stays_dynamic() -> None:
    x = opset.parameter([-1, 3, -1], hs.Type.f32, name="x")
    model = hs.Model([opset.reshape(x, [0, -1], special_zero=True, name="flat")], [x])
    model.reshape([-1, 3, 5])
    assert model.outputs[0].partial_shape == hs.PartialShape([-1, 15])


@pytest.mark.parametrize("device", ["TEMPLATE", "XLA", "HETERO:XLA,TEMPLATE"])
def test_a_reshaped_model_runs_like_numpy(device: str) -> None:
    model = _flatten_model()
    model.reshape({"x": [2, 3, 4]})
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    result = hs.Core().compile_model(model, device)({"x": x})["total"]
    np.testing.assert_allclose(result, _flatten_reference(x), rtol=1e-5)


def test_shape_sub_graphs_fold_when_static_and_run_when_dynamic() -> None:
    core = hs.Core()
    dynamic = core.compile_model(_flatten_model(), "TEMPLATE")
    assert "ShapeOf" in {n.get_rt_info()[rt_info.LAYER_TYPE] for n in dynamic.get_runtime_model().get_ops()}
    for shape in [(1, 3, 2), (4, 3, 7)]:
        x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(dynamic({"x": x})["total"], _flatten_reference(x), rtol=1e-5)
    model = _flatten_model()
    model.reshape({"x": [4, 3, 7]})
    static = core.compile_model(model, "TEMPLATE")
    assert "ShapeOf" not in {n.get_rt_info()[rt_info.LAYER_TYPE] for n in static.get_runtime_model().get_ops()}


def test_reshape_reaches_into_if_bodies_and_keeps_dimension_names() -> None:
    then_body = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["t"])], "then", [], [value_info("t", np.float32, [None, None])]
    )
    else_body = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"])], "else", [], [value_info("e", np.float32, [None, None])]
    )
    nodes = [helper.make_node("If", ["flag"], ["y"], then_branch=then_body, else_branch=else_body)]
    onnx_model = graph_model(
        nodes,
        [value_info("flag", np.bool_, []), value_info("x", np.float32, ["batch", "time"])],
        [value_info("y", np.float32, ["batch", "time"])],
        17,
    )
    model = hs.convert_model(onnx_model)
    model.reshape({"x": [-1, 6]})
    assert model.get_parameters()[1].get_rt_info()[rt_info.DIM_NAMES] == ["batch", "time"]  # names outlive a reshape
    x = np.random.default_rng(2).standard_normal((3, 6)).astype(np.float32)
    compiled = hs.Core().compile_model(model, "XLA")
    np.testing.assert_array_equal(compiled({"flag": np.array(True), "x": x})["y"], np.maximum(x, 0))
    np.testing.assert_array_equal(compiled({"flag": np.array(False), "x": x})["y"], -x)
