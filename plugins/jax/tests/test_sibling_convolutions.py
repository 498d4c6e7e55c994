"""XLA merges the 1x1 convolutions that read the same tensor (a CSP block's two branches) into one
convolution whose result it splits: fewer Convolutions in the runtime model, and each branch's values
as numpy computes the convolution, whatever the other branches do."""

from __future__ import annotations

import numpy as np
from hetero_sdk import Model, Node, Type, opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, activated, core

from hetero_sdk_jax.convolution_fusion import CONVOLUTION
from hetero_sdk_jax.transformations import transform_model


def _pointwise(x: np.ndarray, w: np.ndarray, stride: int) -> np.ndarray:
    """A 1x1 convolution of ``x`` ``[N, C, H, W]`` by ``w`` ``[O, C, 1, 1]`` at ``stride``."""
    return np.einsum("oc,nchw->nohw", w[:, :, 0, 0].astype(np.float64), x[:, :, ::stride, ::stride].astype(np.float64))


@OPS
@given(
    outputs=st.lists(st.integers(1, 6), min_size=2, max_size=4),
    strides=st.lists(st.sampled_from([1, 1, 2]), min_size=4, max_size=4),
    channels=st.integers(1, 5),
    seed=st.integers(0, 2**16),
)
def test_sibling_pointwise_convolutions_are_merged_with_the_same_values(
    outputs: list[int], strides: list[int], channels: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, channels, 5, 6)).astype(np.float32)
    filters = [rng.standard_normal((o, channels, 1, 1)).astype(np.float32) for o in outputs]
    px = opset.parameter(list(x.shape), Type.f32, name="x")
    branches = [
        opset.convolution(px, w, [s, s], [0, 0], [0, 0], [1, 1], name=f"conv{i}")
        for i, (w, s) in enumerate(zip(filters, strides))
    ]
    heads = [
        opset.relu(branches[0], name="y0"),
        *(opset.sigmoid(b, name=f"y{i}") for i, b in enumerate(branches[1:], 1)),
    ]
    compiled = core().compile_model(Model(heads, [px], name="csp"), "XLA")
    merged = {s: strides[: len(outputs)].count(s) for s in set(strides[: len(outputs)])}
    convolutions = [n for n in compiled.get_runtime_model().get_ops() if n.type_name == "Convolution"]
    assert len(convolutions) == len(merged)  # one per stride: the siblings of each geometry merged
    got = compiled({"x": x})
    for i, (w, s) in enumerate(zip(filters, strides)):
        full = _pointwise(x, w, s)
        want = np.maximum(full, 0) if i == 0 else 1 / (1 + np.exp(-full))
        np.testing.assert_allclose(got[f"y{i}"], want, rtol=1e-5, atol=1e-5)


def test_other_kernels_and_other_inputs_are_not_merged() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    px = opset.parameter([1, 3, 4, 4], Type.f32, name="x")
    square = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    single = rng.standard_normal((2, 3, 1, 1)).astype(np.float32)
    wide = opset.convolution(px, square, [1, 1], [1, 1], [1, 1], [1, 1], name="y0")  # a 3x3 kernel
    narrow = opset.convolution(px, single, [1, 1], [0, 0], [0, 0], [1, 1], name="y1")  # its only 1x1 sibling
    compiled = core().compile_model(Model([wide, narrow], [px], name="mixed"), "XLA")
    assert [n.type_name for n in compiled.get_runtime_model().get_ops()].count("VariadicSplit") == 0
    np.testing.assert_allclose(compiled({"x": x})["y1"], _pointwise(x, single, 1), rtol=1e-5, atol=1e-5)


def _branch(conv: Node, bias: np.ndarray | None, activation: str, name: str) -> Node:
    """``conv``'s bias Add (when ``bias`` is given) and activation (relu, silu, hswish), SiLU as exporters
    write it."""
    y = conv if bias is None else opset.add(conv, bias.reshape(1, -1, 1, 1))
    if activation == "relu":
        return opset.relu(y, name=name)
    if activation == "silu":
        return opset.multiply(y, opset.sigmoid(y), name=name)
    return opset.hswish(y, name=name)


def _siblings(
    x: np.ndarray, outputs: list[int], biased: list[bool], activations: list[str], rng: np.random.Generator
) -> tuple[Model, list[np.ndarray]]:
    """A model of 1x1 sibling convolutions of ``x``, branch ``i`` with ``outputs[i]`` channels, a bias when
    ``biased[i]`` and ``activations[i]``, and each branch's value as numpy computes it."""
    px = opset.parameter(list(x.shape), Type.f32, name="x")
    heads, expected = [], []
    for i, (o, has_bias, activation) in enumerate(zip(outputs, biased, activations)):
        w = rng.standard_normal((o, x.shape[1], 1, 1)).astype(np.float32)
        bias = rng.standard_normal(o).astype(np.float32) if has_bias else None
        conv = opset.convolution(px, w, [1, 1], [0, 0], [0, 0], [1, 1], name=f"conv{i}")
        heads.append(_branch(conv, bias, activation, f"y{i}"))
        y = _pointwise(x, w, 1) + (0 if bias is None else bias.reshape(1, -1, 1, 1))
        expected.append(activated(y, activation))
    return Model(heads, [px], name="csp"), expected


def _after_transformations(model: Model) -> tuple[list[str], list[str]]:
    """The activations of the XlaConvolutions left once XLA's passes ran on a clone of ``model``, and the op
    types that read a VariadicSplit's outputs."""
    clone = model.clone()
    transform_model(clone)
    ops = list(clone.get_ops())
    fused = sorted(str(n.attrs["activation"]) for n in ops if n.type_name == CONVOLUTION)
    readers = sorted(n.type_name for n in ops if any(v.node.type_name == "VariadicSplit" for v in n.input_values()))
    return fused, readers


def _check_values(model: Model, x: np.ndarray, expected: list[np.ndarray]) -> None:
    got = core().compile_model(model, "XLA")({"x": x})
    for i, want in enumerate(expected):
        np.testing.assert_allclose(got[f"y{i}"], want, rtol=1e-4, atol=1e-4)


@OPS
@given(
    outputs=st.lists(st.integers(1, 40), min_size=2, max_size=3),
    channels=st.integers(1, 24),
    activation=st.sampled_from(["silu", "relu", "hswish"]),
    seed=st.integers(0, 2**16),
)
def test_siblings_with_one_activation_carry_their_biases_and_it_into_one_fused_convolution(
    outputs: list[int], channels: int, activation: str, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, channels, 5, 7)).astype(np.float32)
    model, expected = _siblings(x, outputs, [True] * len(outputs), [activation] * len(outputs), rng)
    fused, readers = _after_transformations(model)
    assert fused == [activation]  # one convolution, with every branch's bias and the activation
    assert readers == ["Result"] * len(outputs)  # nothing left to run per branch after the split
    _check_values(model, x, expected)


@OPS
@given(
    outputs=st.lists(st.integers(1, 20), min_size=2, max_size=2),
    channels=st.integers(1, 16),
    seed=st.integers(0, 2**16),
)
def test_siblings_with_different_activations_carry_their_biases_only(
    outputs: list[int], channels: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, channels, 4, 6)).astype(np.float32)
    model, expected = _siblings(x, outputs, [True, True], ["silu", "relu"], rng)
    fused, readers = _after_transformations(model)
    assert fused == ["none"]  # the biases joined the merged convolution, the activations read the parts
    assert readers == ["Multiply", "Relu", "Sigmoid"]
    _check_values(model, x, expected)


def test_siblings_of_which_one_has_no_bias_merge_without_the_biases() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 6, 4, 5)).astype(np.float32)
    model, expected = _siblings(x, [5, 3], [True, False], ["silu", "relu"], rng)
    fused, readers = _after_transformations(model)
    assert fused == []  # the bias stays after its part: no fusion finds a Convolution's Add there
    assert readers == ["Add", "Relu"]
    _check_values(model, x, expected)


def test_a_biased_value_with_another_reader_keeps_the_activations_after_the_split() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 4, 3, 5)).astype(np.float32)
    px = opset.parameter(list(x.shape), Type.f32, name="x")
    w0, w1 = (rng.standard_normal((o, 4, 1, 1)).astype(np.float32) for o in (3, 2))
    b0, b1 = (rng.standard_normal(o).astype(np.float32) for o in (3, 2))
    y0 = opset.add(opset.convolution(px, w0, [1, 1], [0, 0], [0, 0], [1, 1]), b0.reshape(1, -1, 1, 1))
    y1 = opset.add(opset.convolution(px, w1, [1, 1], [0, 0], [0, 0], [1, 1]), b1.reshape(1, -1, 1, 1))
    heads = [
        opset.multiply(y0, opset.sigmoid(y0), name="y0"),
        opset.multiply(y1, opset.sigmoid(y1), name="y1"),
        opset.abs(y1, name="y2"),  # reads branch 1's biased value before its SiLU
    ]
    model = Model(heads, [px], name="csp")
    fused, readers = _after_transformations(model)
    assert fused == ["none"]
    assert readers == ["Abs", "Multiply", "Multiply", "Sigmoid", "Sigmoid"]
    z0, z1 = _pointwise(x, w0, 1) + b0.reshape(1, -1, 1, 1), _pointwise(x, w1, 1) + b1.reshape(1, -1, 1, 1)
    _check_values(model, x, [activated(z0, "silu"), activated(z1, "silu"), np.abs(z1)])
