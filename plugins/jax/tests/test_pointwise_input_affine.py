"""XLA folds a constant scale and shift in front of a 1x1 convolution (PP-LCNetV3's learnable affine after
each activation) into the convolution's filters and bias: the runtime model's convolution reads the
tensor itself, and the result is numpy's convolution of the scaled and shifted tensor."""

from __future__ import annotations

import numpy as np
from hetero_sdk import Model, Type, opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, core


def _pointwise(x: np.ndarray, w: np.ndarray, stride: int) -> np.ndarray:
    """A 1x1 convolution of ``x`` ``[N, C, H, W]`` by ``w`` ``[O, C, 1, 1]`` at ``stride``, in f64."""
    return np.einsum("oc,nchw->nohw", w[:, :, 0, 0].astype(np.float64), x[:, :, ::stride, ::stride].astype(np.float64))


def _conv_input(compiled: object, name: str) -> str:
    """The type of the node the runtime model's Convolution ``name`` reads (or the ``XlaConvolution`` it
    joined with its bias and activation, :mod:`hetero_sdk_jax.convolution_fusion`, named after the last)."""
    ops = compiled.get_runtime_model().get_ops()  # type: ignore[attr-defined]
    kinds = ("Convolution", "XlaConvolution")
    (conv,) = [
        n
        for n in ops
        if n.type_name in kinds
        and (n.friendly_name.startswith(name) or name in n.get_rt_info()["originalLayersNames"].split(","))
    ]
    return conv.input_value(0).node.type_name


_CONSTANT_SHAPES = st.sampled_from(["none", "scalar", "[1]", "[1,C,1,1]", "[C,1,1]"])


def _constant(kind: str, channels: int, rng: np.random.Generator) -> np.ndarray | None:
    """A constant of ``kind``'s shape (``C``: ``channels``), or None for ``"none"``."""
    if kind == "none":
        return None
    shape = {"scalar": (), "[1]": (1,), "[1,C,1,1]": (1, channels, 1, 1), "[C,1,1]": (channels, 1, 1)}[kind]
    return rng.uniform(-2, 2, shape).astype(np.float32)


@OPS
@given(
    scale=_CONSTANT_SHAPES,
    shift=_CONSTANT_SHAPES,
    channels=st.integers(1, 6),
    outputs=st.integers(1, 5),
    stride=st.sampled_from([1, 2]),
    seed=st.integers(0, 2**16),
)
def test_a_scale_and_shift_before_a_pointwise_convolution_fold_into_it(
    scale: str, shift: str, channels: int, outputs: int, stride: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, channels, 5, 6)).astype(np.float32)
    w = rng.standard_normal((outputs, channels, 1, 1)).astype(np.float32)
    bias = rng.standard_normal((1, outputs, 1, 1)).astype(np.float32)
    a, b = _constant(scale, channels, rng), _constant(shift, channels, rng)
    px = opset.parameter(list(x.shape), Type.f32, name="x")
    node, want_in = px, x.astype(np.float64)
    if a is not None:
        node, want_in = opset.multiply(node, a), want_in * a
    if b is not None:
        node, want_in = opset.add(node, b), want_in + b
    conv = opset.convolution(node, w, [stride, stride], [0, 0], [0, 0], [1, 1], name="conv")
    y = opset.relu(opset.add(conv, bias), name="y")
    compiled = core().compile_model(Model([y], [px], name="affine_conv"), "XLA")
    assert _conv_input(compiled, "conv") == "Parameter"  # the affine is in the filters and the bias now
    want = np.maximum(_pointwise(want_in, w, stride) + bias, 0)
    np.testing.assert_allclose(compiled({"x": x})["y"], want, rtol=1e-4, atol=1e-4)


def test_a_padded_convolution_keeps_its_shift() -> None:
    """With padding the border reads zeros, not the shift: ``conv(x + b)`` is not ``conv(x) + w.b`` there."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    w = rng.standard_normal((2, 3, 1, 1)).astype(np.float32)
    px = opset.parameter(list(x.shape), Type.f32, name="x")
    conv = opset.convolution(opset.add(px, np.float32(1.5)), w, [1, 1], [1, 1], [1, 1], [1, 1], name="y")
    compiled = core().compile_model(Model([conv], [px], name="padded"), "XLA")
    assert _conv_input(compiled, "y") == "Add"
    padded = np.pad(x.astype(np.float64) + 1.5, ((0, 0), (0, 0), (1, 1), (1, 1)))
    np.testing.assert_allclose(compiled({"x": x})["y"], _pointwise(padded, w, 1), rtol=1e-5, atol=1e-5)


def test_a_shift_with_another_use_or_before_a_wider_kernel_stays() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 3, 5, 5)).astype(np.float32)
    single = rng.standard_normal((2, 3, 1, 1)).astype(np.float32)
    square = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    shift = rng.standard_normal((1, 3, 1, 1)).astype(np.float32)
    px = opset.parameter(list(x.shape), Type.f32, name="x")
    shifted = opset.add(px, shift, name="shifted")
    pointwise = opset.convolution(shifted, single, [1, 1], [0, 0], [0, 0], [1, 1], name="y0")
    wide = opset.convolution(opset.add(px, shift), square, [1, 1], [0, 0], [0, 0], [1, 1], name="y1")
    compiled = core().compile_model(Model([pointwise, wide, opset.relu(shifted, name="y2")], [px], name="kept"), "XLA")
    assert _conv_input(compiled, "y0") == "Add"  # the shifted tensor is a result's input too
    assert _conv_input(compiled, "y1") == "Add"  # a 3x3 kernel sums over positions, not channels alone
    got = compiled({"x": x})
    np.testing.assert_allclose(got["y0"], _pointwise(x + shift, single, 1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["y2"], np.maximum(x + shift, 0), rtol=1e-6)
