"""Every device runs models with dynamic dimensions on concrete inputs of changing shapes: TEMPLATE, XLA,
HETERO:XLA,TEMPLATE and TUTORIAL (directly, or under HETERO:TUTORIAL,TEMPLATE for the ops it lacks).
Values are compared with numpy written here; a model reshaped to static shapes runs too."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hetero_sdk_tutorial import TutorialPlugin

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.hetero.plugin import HeteroPlugin
from template_plugin import TemplatePlugin

hetero_sdk_jax = pytest.importorskip("hetero_sdk_jax", reason="the XLA plugin (plugins/jax) is not installed")

F32, I64 = np.float32, np.int64


@pytest.fixture(scope="module")
def core() -> hs.Core:
    plugins = {
        "TEMPLATE": TemplatePlugin(),
        "XLA": hetero_sdk_jax.XlaPlugin(),
        "TUTORIAL": TutorialPlugin(),
        "HETERO": HeteroPlugin(),
    }
    return hs.Core(plugins=plugins, autoload=False)


@dataclass
class DynamicCase:
    """A model with dynamic input dims, numpy computing its outputs, and two concrete input shapes."""

    build: Callable[[], hs.Model]
    numpy: Callable[..., list[np.ndarray]]
    shapes: list[list[tuple[int, ...]]]
    devices: tuple[str, ...]


def _shape_subgraph() -> hs.Model:
    """``flat = reshape(x, [shape(x)[0], -1]) + 1`` and ``grid = broadcast(range(shape(x)[1]), [n, 1, m])``:
    ShapeOf -> Gather -> Concat -> Reshape, Range and Broadcast fed by the input's shape."""
    x = opset.parameter([-1, -1, 4], F32, name="x")
    shape = opset.shape_of(x, name="shape")
    batch = opset.gather(shape, opset.constant(np.array([0], I64), name="first"), 0, name="batch")
    target = opset.concat([batch, opset.constant(np.array([-1], I64), name="rest")], 0, name="target")
    flat = opset.add(opset.reshape(x, target, special_zero=False, name="flat"), np.float32(1.0), name="flat_plus")
    length = opset.gather(shape, opset.constant(np.array(1, I64), name="second"), 0, name="length")
    steps = opset.range(np.array(0, I64), length, np.array(1, I64), F32, name="steps")
    width = opset.gather(shape, opset.constant(np.array([1], I64), name="second_1d"), 0, name="width")
    grid_shape = opset.concat([batch, opset.constant(np.array([1], I64), name="one"), width], 0, name="grid_shape")
    grid = opset.broadcast(steps, grid_shape, name="grid")
    return hs.Model([flat, grid], [x], name="shape_subgraph")


def _shape_subgraph_numpy(x: np.ndarray) -> list[np.ndarray]:
    n, m = x.shape[:2]
    return [x.reshape(n, -1) + 1, np.broadcast_to(np.arange(m, dtype=F32), (n, 1, m))]


_W = np.linspace(-1, 1, 12, dtype=F32).reshape(4, 3)
_B = np.array([0.5, -0.25, 0.0], F32)


def _dense() -> hs.Model:
    """``relu(x @ w + b) - x2`` with a dynamic batch on both inputs: ops TUTORIAL computes itself."""
    x = opset.parameter([-1, 4], F32, name="x")
    x2 = opset.parameter([-1, 3], F32, name="x2")
    hidden = opset.relu(opset.add(opset.matmul(x, opset.constant(_W, name="w")), _B, name="biased"), name="relu")
    return hs.Model([opset.subtract(hidden, x2, name="out")], [x, x2], name="dense")


def _dense_numpy(x: np.ndarray, x2: np.ndarray) -> list[np.ndarray]:
    return [np.maximum(x @ _W + _B, 0) - x2]


def _choice() -> hs.Model:
    """``cond ? x * 2 : -x`` with a dynamic input and bodies declared for [3]: they follow the inputs."""
    a = opset.parameter([3], F32, name="a")
    b = opset.parameter([3], F32, name="b")
    then_body = hs.Model([opset.multiply(a, np.float32(2.0), name="twice")], [a], name="then")
    else_body = hs.Model([opset.negative(b, name="minus")], [b], name="else")
    cond = opset.parameter([], np.bool_, name="cond")
    x = opset.parameter([-1, 3], F32, name="x")
    return hs.Model([opset.if_op(cond, then_body, else_body, [x], name="choose")], [cond, x], name="choice")


def _choice_numpy(cond: np.ndarray, x: np.ndarray) -> list[np.ndarray]:
    return [x * 2 if bool(cond) else -x]


ALL = ("TEMPLATE", "XLA", "HETERO:XLA,TEMPLATE", "HETERO:TUTORIAL,TEMPLATE")
CASES = {
    "shape_subgraph": DynamicCase(_shape_subgraph, _shape_subgraph_numpy, [[(2, 3, 4)], [(5, 1, 4)]], ALL),
    "dense": DynamicCase(_dense, _dense_numpy, [[(2, 4), (2, 3)], [(7, 4), (7, 3)]], (*ALL, "TUTORIAL")),
    "choice": DynamicCase(_choice, _choice_numpy, [[(), (2, 3)], [(), (6, 3)]], ALL),
}


def _inputs(model: hs.Model, shapes: list[tuple[int, ...]], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    values = []
    for port, shape in zip(model.inputs, shapes):
        if port.element_type == hs.Type.boolean:
            values.append(np.array(seed % 2 == 0))
        else:
            values.append(rng.uniform(-2, 2, shape).astype(F32))
    return values


def _check(got: list[np.ndarray], want: list[np.ndarray], what: str) -> None:
    assert len(got) == len(want), what
    for index, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype, (
            f"{what} output {index}: {g.dtype}{g.shape} vs {w.dtype}{w.shape}"
        )
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"{what} output {index}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_device_runs_a_dynamic_model_at_two_shapes(core: hs.Core, name: str) -> None:
    case = CASES[name]
    for device in case.devices:
        model = case.build()
        assert model.is_dynamic()
        compiled = core.compile_model(model, device)
        request = compiled.create_infer_request()
        for seed, shapes in enumerate([*case.shapes, case.shapes[0]]):  # back to the first shape, too
            for cond_seed in (seed, seed + 1):
                inputs = _inputs(model, shapes, cond_seed)
                want = case.numpy(*inputs)
                _check(list(request.infer(inputs).to_tuple()), want, f"{name} on {device} at {shapes}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_model_reshaped_to_static_shapes_runs_on_every_device(core: hs.Core, name: str) -> None:
    case = CASES[name]
    shapes = case.shapes[1]
    for device in case.devices:
        model = case.build()
        model.reshape({i: list(s) for i, s in enumerate(shapes)})
        assert not model.is_dynamic()
        inputs = _inputs(model, shapes, 3)
        _check(list(core.compile_model(model, device)(inputs).to_tuple()), case.numpy(*inputs), f"{name} on {device}")
