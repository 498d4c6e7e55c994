"""XLA averages before a constant scale and shift (``mean(x * a + b) = mean(x) * a + b``, PP-LCNetV3's
squeeze-and-excitation blocks): the runtime model's ReduceMean reads the tensor itself, the results are numpy's
mean of the scaled and shifted tensor, and constants that vary along a reduced axis stay where they are."""

from __future__ import annotations

from typing import Any

import numpy as np
from hetero_sdk import Model, Type, opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, core

_KINDS = st.sampled_from(["none", "scalar", "[1]", "[1,C,1,1]", "[C,1,1]", "[N,C,1,1]"])


def _constant(kind: str, batch: int, channels: int, rng: np.random.Generator) -> np.ndarray | None:
    """A constant of ``kind``'s shape, or None for ``"none"``."""
    if kind == "none":
        return None
    shape = {"scalar": (), "[1]": (1,), "[1,C,1,1]": (1, channels, 1, 1), "[C,1,1]": (channels, 1, 1),
             "[N,C,1,1]": (batch, channels, 1, 1)}[kind]  # fmt: skip
    return rng.uniform(-2, 2, shape).astype(np.float32)


def _mean_inputs(compiled: Any) -> list[str]:
    """The types of the nodes the runtime model's ReduceMeans read, sorted."""
    ops = compiled.get_runtime_model().get_ops()
    return sorted(str(n.input_value(0).node.type_name) for n in ops if n.type_name == "ReduceMean")


@OPS
@given(
    scale=_KINDS,
    shift=_KINDS,
    axes=st.sampled_from([(2, 3), (3,), (-1, -2), (2,)]),
    keep_dims=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_the_mean_of_a_scaled_and_shifted_tensor_is_taken_first(
    scale: str, shift: str, axes: tuple[int, ...], keep_dims: bool, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    a, b = _constant(scale, 2, 3, rng), _constant(shift, 2, 3, rng)
    px = opset.parameter(list(x.shape), Type.f32, name="x")
    y, want = px, x.astype(np.float64)
    if a is not None:
        y, want = opset.multiply(y, a), want * a
    if b is not None:
        y, want = opset.add(y, b), want + b
    mean = opset.reduce_mean(y, np.array(axes, np.int64), keep_dims, name="mean")
    other = opset.multiply(y, np.float32(3), name="other")  # the affine ops keep another reader
    compiled = core().compile_model(Model([mean, other], [px], name="mean_affine"), "XLA")
    assert _mean_inputs(compiled) == ["Parameter"]  # the scale and shift apply to the mean
    got = compiled({"x": x})
    np.testing.assert_allclose(got["mean"], want.mean(axis=axes, keepdims=keep_dims), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["other"], want * 3, rtol=1e-5, atol=1e-5)


def test_constants_varying_along_a_reduced_axis_or_of_integers_stay() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 3, 4, 5)).astype(np.float32)
    along = rng.uniform(-2, 2, (1, 1, 1, 5)).astype(np.float32)
    px = opset.parameter(list(x.shape), Type.f32, name="x")
    pi = opset.parameter([1, 3, 4, 5], Type.i32, name="i")
    xi = rng.integers(-50, 50, (1, 3, 4, 5)).astype(np.int32)
    axes = np.array([2, 3], np.int64)
    outputs = [
        opset.reduce_mean(opset.multiply(px, along), axes, True, name="scaled_along"),
        opset.reduce_mean(opset.add(px, along), axes, True, name="shifted_along"),
        opset.reduce_mean(opset.add(px, px), axes, True, name="not_constant"),
        opset.reduce_mean(opset.add(pi, np.int32(3)), axes, True, name="integers"),
    ]
    compiled = core().compile_model(Model(outputs, [px, pi], name="kept"), "XLA")
    assert _mean_inputs(compiled) == ["Add", "Add", "Add", "Multiply"]
    got = compiled({"x": x, "i": xi})
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(
        got["scaled_along"], (x64 * along).mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        got["shifted_along"], (x64 + along).mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(got["not_constant"], 2 * x64.mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-6)
    # integer means truncate toward zero: mean(x + 3) is not mean(x) + 3 there
    sums = (xi.astype(np.int64) + 3).sum(axis=(2, 3), keepdims=True)
    np.testing.assert_array_equal(got["integers"], np.trunc(sums / 20).astype(np.int32))
