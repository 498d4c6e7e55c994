"""The fixed models the checks run: a small two-input, two-output base model (with fallbacks for
devices that run few ops), a long chain, a dynamic-shape model and a zoo for ``query_model``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import hetero_sdk as hs
from hetero_sdk import opset

__all__ = ["DynamicCase", "ModelCase", "base_candidates", "chain_model", "dynamic_cases", "dynamic_model", "query_zoo"]


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


@dataclass
class DynamicCase:
    """A model whose inputs have dynamic dimensions, and inputs for any sizes of them.

    :ivar name: names the case in messages.
    :ivar model: the model (dynamic dimensions are ``-1``).
    :ivar make_inputs: ``(rng, n, m) -> {input name: array}``, where ``n`` and ``m`` are the sizes
        of the dynamic dimensions.
    """

    name: str
    model: hs.Model
    make_inputs: Callable[[np.random.Generator, int, int], dict[str, np.ndarray]]

    def inputs(self, n: int, m: int, seed: int = 0) -> dict[str, np.ndarray]:
        """Inputs with dynamic dimensions ``n`` and ``m``, drawn with ``seed``."""
        return self.make_inputs(np.random.default_rng(seed), n, m)

    def static(self, n: int, m: int) -> hs.Model:
        """A clone of the model reshaped (``Model.reshape``) to the shapes of :meth:`inputs`."""
        clone = self.model.clone()
        clone.reshape({name: list(value.shape) for name, value in self.inputs(n, m).items()})
        return clone


def _dynamic_elementwise() -> DynamicCase:
    """``relu(x) * 0.5 + x`` with ``x`` of shape ``[-1, -1]``."""
    x = opset.parameter([-1, -1], hs.Type.f32, name="x")
    half = opset.multiply(opset.relu(x, name="relu"), opset.constant(np.float32(0.5), name="half"), name="scaled")
    y = opset.add(half, x, name="y")
    return DynamicCase(
        "dynamic_elementwise",
        hs.Model([y], [x], name="conformance_dynamic_elementwise"),
        lambda rng, n, m: {"x": rng.uniform(-2, 2, (n, m)).astype(np.float32)},
    )


def _dynamic_dense() -> DynamicCase:
    """``relu(x @ w + b)`` with ``x`` of shape ``[-1, 8]`` (a dynamic batch; ``m`` is unused)."""
    rng = np.random.default_rng(11)
    x = opset.parameter([-1, 8], hs.Type.f32, name="x")
    w = opset.constant(rng.uniform(-1, 1, (8, 4)).astype(np.float32), name="w")
    b = opset.constant(rng.uniform(-1, 1, 4).astype(np.float32), name="b")
    y = opset.relu(opset.add(opset.matmul(x, w, name="mm"), b, name="biased"), name="y")
    return DynamicCase(
        "dynamic_dense",
        hs.Model([y], [x], name="conformance_dynamic_dense"),
        lambda rng, n, m: {"x": rng.uniform(-1, 1, (n, 8)).astype(np.float32)},
    )


def _dynamic_shape_subgraph() -> DynamicCase:
    """A shape sub-graph on ``x`` of shape ``[-1, -1, 2]``: ``reshape(x, [shape(x)[0], -1]) * 2`` and
    ``broadcast(range(shape(x)[1]), [shape(x)[0], 1, shape(x)[1]])`` (ShapeOf, Gather, Concat, Reshape,
    Range, Broadcast)."""
    x = opset.parameter([-1, -1, 2], hs.Type.f32, name="x")
    shape = opset.shape_of(x, name="shape")
    batch = opset.gather(shape, opset.constant(np.array([0], np.int64), name="first"), 0, name="batch")
    target = opset.concat([batch, opset.constant(np.array([-1], np.int64), name="rest")], 0, name="target")
    flat = opset.reshape(x, target, special_zero=False, name="flat")
    twice = opset.multiply(flat, opset.constant(np.float32(2.0), name="two"), name="twice")
    count = opset.gather(shape, opset.constant(np.array(1, np.int64), name="second"), 0, name="count")
    zero, one = opset.constant(np.array(0, np.int64), name="zero"), opset.constant(np.array(1, np.int64), name="one")
    steps = opset.range(zero, count, one, hs.Type.f32, name="steps")
    width = opset.gather(shape, opset.constant(np.array([1], np.int64), name="second_1d"), 0, name="width")
    middle = opset.constant(np.array([1], np.int64), name="middle")
    grid = opset.broadcast(steps, opset.concat([batch, middle, width], 0, name="grid_shape"), name="grid")
    return DynamicCase(
        "dynamic_shape_subgraph",
        hs.Model([twice, grid], [x], name="conformance_dynamic_shape_subgraph"),
        lambda rng, n, m: {"x": rng.uniform(-1, 1, (n, m, 2)).astype(np.float32)},
    )


def dynamic_cases() -> list[DynamicCase]:
    """The kit's models with dynamic input dimensions: elementwise, a dense layer, a shape sub-graph."""
    return [_dynamic_elementwise(), _dynamic_dense(), _dynamic_shape_subgraph()]


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
    return [_arith(), _adds(), _shape_subgraph(), _mlp(), _cnn(), dynamic_model()]
