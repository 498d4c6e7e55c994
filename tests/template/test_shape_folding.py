"""TEMPLATE folds shape sub-graphs (ShapeOf -> Gather -> Concat -> Reshape, Range, Broadcast) into
constants once ``Model.reshape`` made the input static, and runs them when it is dynamic."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from template_plugin import TemplatePlugin

F32, I64 = np.float32, np.int64
SHAPE_OPS = {"ShapeOf", "Gather", "Concat", "Range", "Broadcast"}


def _core() -> hs.Core:
    return hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False)


def _model() -> hs.Model:
    """``reshape(x, [shape(x)[0], -1]) * 2`` and ``broadcast(range(shape(x)[1]), [shape(x)[0], shape(x)[1]])``."""
    x = opset.parameter([-1, -1, 3], F32, name="x")
    shape = opset.shape_of(x, name="shape")
    batch = opset.gather(shape, opset.constant(np.array([0], I64), name="first"), 0, name="batch")
    target = opset.concat([batch, opset.constant(np.array([-1], I64), name="rest")], 0, name="target")
    flat = opset.multiply(opset.reshape(x, target, special_zero=False, name="flat"), np.float32(2.0), name="twice")
    width = opset.gather(shape, opset.constant(np.array([1], I64), name="second"), 0, name="width")
    count = opset.gather(shape, opset.constant(np.array(1, I64), name="second_scalar"), 0, name="count")
    steps = opset.range(np.array(0, I64), count, np.array(1, I64), I64, name="steps")
    grid = opset.broadcast(steps, opset.concat([batch, width], 0, name="grid_shape"), name="grid")
    return hs.Model([flat, grid], [x], name="shapes")


def _numpy(x: np.ndarray) -> list[np.ndarray]:
    n, m = x.shape[:2]
    return [x.reshape(n, -1) * 2, np.broadcast_to(np.arange(m, dtype=I64), (n, m))]


def _runtime_types(compiled: hs.CompiledModel) -> set[str]:
    return {node.type_name for node in compiled.get_runtime_model().get_ops()}


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 4), m=st.integers(1, 4))
def test_static_shapes_fold_the_shape_subgraph_into_constants(n: int, m: int) -> None:
    model = _model()
    model.reshape([n, m, 3])
    compiled = _core().compile_model(model, "TEMPLATE")
    assert _runtime_types(compiled) == {"Parameter", "Constant", "Reshape", "Multiply", "Result"}
    runtime = compiled.get_runtime_model()
    reshape = next(node for node in runtime.get_ops() if node.type_name == "Reshape")
    assert reshape.input_value(1).node.type_name == "Constant"
    assert reshape.input_value(1).node.attrs["value"].tolist() == [n, -1]
    grid = runtime.get_results()[1].input_value(0).node
    assert (
        grid.type_name == "Constant" and grid.attrs["value"].tolist() == np.broadcast_to(np.arange(m), (n, m)).tolist()
    )
    x = np.random.default_rng(n * 5 + m).standard_normal((n, m, 3)).astype(F32)
    for got, want in zip(compiled([x]).to_tuple(), _numpy(x)):
        np.testing.assert_array_equal(np.asarray(got), want)


def test_dynamic_shapes_keep_the_shape_subgraph_and_run_it() -> None:
    compiled = _core().compile_model(_model(), "TEMPLATE")
    assert _runtime_types(compiled) >= SHAPE_OPS
    request = compiled.create_infer_request()
    for shape in [(2, 3, 3), (4, 1, 3), (1, 5, 3)]:
        x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(F32)
        for got, want in zip(request.infer([x]).to_tuple(), _numpy(x)):
            np.testing.assert_array_equal(np.asarray(got), want)


def test_reshaping_back_to_dynamic_brings_the_shape_subgraph_back() -> None:
    model = _model()
    model.reshape([2, 2, 3])
    assert "ShapeOf" not in _runtime_types(_core().compile_model(model, "TEMPLATE"))
    model.reshape([-1, -1, 3])
    assert _runtime_types(_core().compile_model(model, "TEMPLATE")) >= SHAPE_OPS
