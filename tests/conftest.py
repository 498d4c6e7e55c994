"""Shared fixtures: a Core with an in-process TEMPLATE (two device ids) and small models with their
numpy references, written here independently of the SDK's kernels."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from template_plugin import TemplatePlugin


def op(name: str) -> Callable[..., hs.Node]:
    """An opset factory; ops whose opset block is still being filled are taken from their family module."""
    if hasattr(opset, name):
        return getattr(opset, name)
    from hetero_sdk.ops import convolution, linear_algebra, pooling

    for family in (linear_algebra, convolution, pooling):
        if hasattr(family, name):
            return getattr(family, name)
    raise AttributeError(name)


@dataclass
class Case:
    """A model, a function computing its outputs with plain numpy, and inputs to feed it."""

    model: hs.Model
    reference: Callable[..., list[np.ndarray]]
    make_inputs: Callable[[np.random.Generator], list[np.ndarray]]
    weights: dict[str, np.ndarray] = field(default_factory=dict)

    def expected(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        """The numpy outputs for ``inputs``."""
        return self.reference(*inputs)


def make_mlp(batch: int = 4, seed: int = 0) -> Case:
    """``y = relu(x @ w1 + b1) @ w2 + b2``: x[batch,16] -> y[batch,8], named ``mlp``."""
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((16, 32)).astype(np.float32)
    b1 = rng.standard_normal(32).astype(np.float32)
    w2 = rng.standard_normal((32, 8)).astype(np.float32)
    b2 = rng.standard_normal(8).astype(np.float32)
    matmul = op("matmul")
    x = opset.parameter([batch, 16], hs.Type.f32, name="x")
    h = opset.relu(
        opset.add(matmul(x, opset.constant(w1, name="w1"), name="mm1"), opset.constant(b1, name="b1"), name="add1"),
        name="relu1",
    )
    y = opset.add(matmul(h, opset.constant(w2, name="w2"), name="mm2"), opset.constant(b2, name="b2"), name="y")
    model = hs.Model([y], [x], name="mlp")

    def reference(xv: np.ndarray) -> list[np.ndarray]:
        return [np.maximum(xv @ w1 + b1, 0) @ w2 + b2]

    return Case(
        model,
        reference,
        lambda g: [g.standard_normal((batch, 16)).astype(np.float32)],
        {"w1": w1, "b1": b1, "w2": w2, "b2": b2},
    )


def make_two_io() -> Case:
    """Two inputs ``a``, ``b`` [2,3] and two outputs ``sum`` = a+b and ``prod`` = a*b."""
    a = opset.parameter([2, 3], hs.Type.f32, name="a")
    b = opset.parameter([2, 3], hs.Type.f32, name="b")
    model = hs.Model([opset.add(a, b, name="sum"), opset.multiply(a, b, name="prod")], [a, b], name="two_io")
    return Case(
        model,
        lambda av, bv: [av + bv, av * bv],
        lambda g: [g.standard_normal((2, 3)).astype(np.float32) for _ in range(2)],
    )


def conv2d_reference(x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    """A direct NCHW cross-correlation with stride 1 and symmetric zero padding."""
    n, _, height, width = x.shape
    c_out, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((n, c_out, height + 2 * pad - kh + 1, width + 2 * pad - kw + 1), np.float64)
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            window = xp[:, :, i : i + kh, j : j + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", window, w)
    return out.astype(np.float32)


def make_cnn() -> Case:
    """``y = relu(conv3x3(x, w, pad 1) + bias)``: x[1,2,6,6] -> y[1,4,6,6]."""
    rng = np.random.default_rng(1)
    w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    bias = rng.standard_normal((1, 4, 1, 1)).astype(np.float32)
    x = opset.parameter([1, 2, 6, 6], hs.Type.f32, name="x")
    conv = op("convolution")(x, opset.constant(w, name="w"), [1, 1], [1, 1], [1, 1], [1, 1], name="conv")
    y = opset.relu(opset.add(conv, opset.constant(bias, name="bias"), name="biased"), name="y")
    model = hs.Model([y], [x], name="cnn")
    return Case(
        model,
        lambda xv: [np.maximum(conv2d_reference(xv, w, 1) + bias, 0)],
        lambda g: [g.standard_normal((1, 2, 6, 6)).astype(np.float32)],
    )


@pytest.fixture
def core() -> hs.Core:
    """A Core with only an in-process TEMPLATE showing two device ids."""
    return hs.Core(plugins={"TEMPLATE": TemplatePlugin(num_devices=2)}, autoload=False)


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded random generator."""
    return np.random.default_rng(1234)


@pytest.fixture
def mlp() -> Case:
    """The small MLP case."""
    return make_mlp()


@pytest.fixture
def two_io() -> Case:
    """The two-input, two-output case."""
    return make_two_io()


@pytest.fixture
def cnn() -> Case:
    """The tiny CNN case."""
    return make_cnn()


@pytest.fixture
def mlp_factory() -> Callable[..., Case]:
    """Builds MLP cases: ``mlp_factory(batch=4, seed=0)``."""
    return make_mlp
