"""The fixed models the checks run: a small two-input, two-output base model (with fallbacks for
devices that run few ops), a long chain, a dynamic-shape model and a zoo for ``query_model``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import hetero_sdk as hs
from hetero_sdk import opset

__all__ = ["ModelCase", "base_candidates", "chain_model", "dynamic_model", "dynamic_shape_subgraph_model", "query_zoo"]


@dataclass
class ModelCase:
    """A model and a way to draw inputs for it.

    :ivar model: the model (build a fresh one per check: checks may edit rt_info).
    :ivar make_inputs: ``rng -> {input name: array}``.
    """

    model: hs.Model
    make_inputs: Callable[[np.random.Generator], dict[str, np.ndarray]]

    def inputs(self, seed: int = 0) -> dict[str, np.ndarray]:
        """Inputs drawn with ``seed``."""
        return self.make_inputs(np.random.default_rng(seed))


def _two_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"a": rng.uniform(-2, 2, (2, 3)).astype(np.float32), "b": rng.uniform(-2, 2, (2, 3)).astype(np.float32)}


def _arith() -> ModelCase:
    """``sum = a + b`` and ``scaled = (a - b) * c``: Parameters, a Constant, Add, Subtract, Multiply."""
    a = opset.parameter([2, 3], hs.Type.f32, name="a")
    b = opset.parameter([2, 3], hs.Type.f32, name="b")
    c = opset.constant(np.array([0.5, -1.0, 2.0], np.float32), name="c")
    total = opset.add(a, b, name="sum")
    scaled = opset.multiply(opset.subtract(a, b, name="diff"), c, name="scaled")
    return ModelCase(hs.Model([total, scaled], [a, b], name="conformance_base"), _two_inputs)


def _adds() -> ModelCase:
    """``sum = a + b`` and ``twice = sum + sum``: only Add."""
    a = opset.parameter([2, 3], hs.Type.f32, name="a")
    b = opset.parameter([2, 3], hs.Type.f32, name="b")
    total = opset.add(a, b, name="sum")
    return ModelCase(
        hs.Model([total, opset.add(total, total, name="twice")], [a, b], name="conformance_base"), _two_inputs
    )


def base_candidates() -> list[ModelCase]:
    """The base model, then simpler fallbacks; checks use the first one the device fully claims."""
    return [_arith(), _adds()]


def chain_model(length: int = 400, side: int = 64) -> ModelCase:
    """``out = a + length * b`` as a chain of ``length`` Adds on ``[side, side]`` tensors: a request
    that runs long enough to be cancelled or touched while busy on slow devices."""
    a = opset.parameter([side, side], hs.Type.f32, name="a")
    b = opset.parameter([side, side], hs.Type.f32, name="b")
    x = a
    for i in range(length):
        x = opset.add(x, b, name=f"add{i}")
    x.friendly_name = "out"

    def inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {
            "a": rng.integers(-4, 4, (side, side)).astype(np.float32),
            "b": rng.integers(-2, 2, (side, side)).astype(np.float32),
        }

    return ModelCase(hs.Model([x], [a, b], name="conformance_chain"), inputs)


def dynamic_model() -> ModelCase:
    """``y = x + c`` with ``x`` of shape ``[-1, 3]`` (a dynamic batch)."""
    x = opset.parameter([-1, 3], hs.Type.f32, name="x")
    y = opset.add(x, opset.constant(np.array([1.0, 2.0, 3.0], np.float32), name="c"), name="y")

    def inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"x": rng.uniform(-1, 1, (int(rng.integers(1, 5)), 3)).astype(np.float32)}

    return ModelCase(hs.Model([y], [x], name="conformance_dynamic"), inputs)


def dynamic_shape_subgraph_model() -> ModelCase:
    """``reduce_sum(reshape(relu(x), [batch, -1]) * range(width)[tiled])`` with ``x`` of shape
    ``[-1, 2, -1]``: ShapeOf -> Gather -> Concat -> Reshape and a Range sized by a dynamic dimension,
    which a device runs at each shape (or folds once it knows the shape)."""
    x = opset.parameter([-1, 2, -1], hs.Type.f32, name="x")
    shape = opset.shape_of(x, name="shape")
    batch = opset.gather(shape, opset.constant(np.array([0], np.int64), name="first"), 0, name="batch")
    target = opset.concat([batch, opset.constant(np.array([-1], np.int64), name="rest")], 0, name="target")
    flat = opset.reshape(opset.relu(x, name="relu"), target, special_zero=False, name="flat")
    width = opset.reduce_prod(
        opset.gather(shape, opset.constant(np.array([1, 2], np.int64), name="tail"), 0, name="dims"),
        opset.constant(np.array([0], np.int64), name="all"),
        name="width",
    )
    ramp = opset.range(
        opset.constant(np.array(0, np.int64), name="zero"),
        opset.reshape(width, opset.constant(np.array([], np.int64), name="scalar"), False, name="count"),
        opset.constant(np.array(1, np.int64), name="one"),
        hs.Type.f32,
        name="ramp",
    )
    y = opset.reduce_sum(
        opset.multiply(flat, ramp, name="weighted"), opset.constant(np.array([1]), name="axis"), name="y"
    )

    def inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"x": rng.uniform(-1, 1, (int(rng.integers(1, 4)), 2, int(rng.integers(1, 6)))).astype(np.float32)}

    return ModelCase(hs.Model([y], [x], name="conformance_dynamic_shape_subgraph"), inputs)


def _shape_subgraph() -> ModelCase:
    """``reshape(x, concat(shape_of(x)[0:1], [-1])) + c``: a shape subgraph a device may fold."""
    x = opset.parameter([2, 3, 4], hs.Type.f32, name="x")
    shape = opset.shape_of(x, name="shape")
    batch = opset.gather(shape, opset.constant(np.array([0], np.int64), name="first"), 0, name="batch")
    target = opset.concat([batch, opset.constant(np.array([-1], np.int64), name="rest")], 0, name="target")
    flat = opset.reshape(x, target, special_zero=False, name="flat")
    y = opset.add(flat, opset.constant(np.ones(12, np.float32), name="bias"), name="y")

    def inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"x": rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32)}

    return ModelCase(hs.Model([y], [x], name="conformance_shape_subgraph"), inputs)


def _mlp() -> ModelCase:
    """``relu(x @ w + b) @ v``."""
    rng = np.random.default_rng(7)
    x = opset.parameter([2, 8], hs.Type.f32, name="x")
    w = opset.constant(rng.uniform(-1, 1, (8, 16)).astype(np.float32), name="w")
    b = opset.constant(rng.uniform(-1, 1, 16).astype(np.float32), name="b")
    v = opset.constant(rng.uniform(-1, 1, (16, 4)).astype(np.float32), name="v")
    h = opset.relu(opset.add(opset.matmul(x, w, name="mm1"), b, name="bias"), name="relu")
    y = opset.matmul(h, v, name="y")

    def inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"x": rng.uniform(-1, 1, (2, 8)).astype(np.float32)}

    return ModelCase(hs.Model([y], [x], name="conformance_mlp"), inputs)


def _cnn() -> ModelCase:
    """``softmax(reduce_mean(relu(conv(x, w)), [2, 3]))``."""
    rng = np.random.default_rng(8)
    x = opset.parameter([1, 2, 6, 6], hs.Type.f32, name="x")
    w = opset.constant(rng.uniform(-1, 1, (4, 2, 3, 3)).astype(np.float32), name="w")
    conv = opset.convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1], name="conv")
    pooled = opset.reduce_mean(opset.relu(conv, name="relu"), opset.constant(np.array([2, 3]), name="axes"), name="gap")
    y = opset.softmax(pooled, axis=1, name="y")

    def inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"x": rng.uniform(-1, 1, (1, 2, 6, 6)).astype(np.float32)}

    return ModelCase(hs.Model([y], [x], name="conformance_cnn"), inputs)


def query_zoo() -> list[ModelCase]:
    """Models for the ``query_model`` completeness check."""
    return [_arith(), _adds(), _shape_subgraph(), _mlp(), _cnn(), dynamic_model(), dynamic_shape_subgraph_model()]
