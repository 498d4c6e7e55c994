"""Constant Add/Multiply chains folded together and into convolutions, and HSwish recognised: each
rewrite checked for the op types it leaves and for values against numpy written here."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import Node, opset
from hetero_sdk.reference import evaluate
from hetero_sdk.transformations import ConsumerMap, ModelPass, PassManager, common_optimizations, fused_names
from hetero_sdk.transformations.activation_fusion import HSwishFusion
from hetero_sdk.transformations.linear_fusion import (
    AddAddFusion,
    AddMultiplyFusion,
    ConvMultiplyFusion,
    MultiplyMultiplyFusion,
    channel_bias_and_activation,
)


def _optimise(model: hs.Model) -> hs.Model:
    manager = PassManager()
    passes: list[ModelPass] = [
        AddMultiplyFusion(),
        ConvMultiplyFusion(),
        AddAddFusion(),
        MultiplyMultiplyFusion(),
        HSwishFusion(),
    ]
    manager.register_group(passes, "Linear")
    manager.run_passes(model)
    return model


def _compute_types(model: hs.Model) -> list[str]:
    return [n.type_name for n in model.get_ordered_ops() if n.type_name not in ("Parameter", "Constant", "Result")]


def _pointwise_conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.einsum("nchw,oc->nohw", x.astype(np.float64), w[:, :, 0, 0].astype(np.float64))


@st.composite
def affine_constants(draw):
    channels = draw(st.integers(1, 4))
    shapes = st.sampled_from([(), (1,), (channels, 1, 1), (1, channels, 1, 1)])
    return channels, draw(shapes), draw(shapes), draw(shapes), draw(st.integers(0, 2**16))


@settings(max_examples=40, deadline=None)
@given(case=affine_constants())
def test_conv_bias_scale_shift_becomes_one_conv_and_one_add(case) -> None:
    channels, bias_shape, scale_shape, shift_shape, seed = case
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((channels, 3, 1, 1)).astype(np.float32)
    bias, scale, shift = (rng.standard_normal(s).astype(np.float32) for s in (bias_shape, scale_shape, shift_shape))
    x = opset.parameter([2, 3, 4, 5], name="x")
    conv = opset.convolution(x, w, [1, 1], [0, 0], [0, 0], [1, 1], name="conv")
    y = opset.add(opset.multiply(opset.add(conv, bias, name="b"), scale, name="s"), shift, name="t")
    y.output(0).set_names({"y"})
    model = _optimise(hs.Model([y], [x]))
    assert _compute_types(model) == ["Convolution", "Add"]
    assert model.outputs[0].names == {"y"}
    assert set().union(*(fused_names(n) for n in model.get_ops())) >= {"conv", "b", "s", "t"}
    value = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    expected = (_pointwise_conv(value, w) + bias) * scale + shift
    np.testing.assert_allclose(evaluate(model, [value])[0], expected, rtol=1e-4, atol=1e-5)


def test_a_group_convolution_takes_its_channel_scale_per_group() -> None:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((2, 2, 1, 3, 3)).astype(np.float32)  # 2 groups of 2 outputs, 1 input each
    scale = np.array([1, -2, 3, 0.5], np.float32).reshape(1, 4, 1, 1)
    x = opset.parameter([1, 2, 5, 5], name="x")
    conv = opset.group_convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1])
    model = _optimise(hs.Model([opset.multiply(scale, conv)], [x]))
    assert _compute_types(model) == ["GroupConvolution"]
    value = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    padded = np.pad(value, [(0, 0), (0, 0), (1, 1), (1, 1)]).astype(np.float64)
    expected = np.zeros((1, 4, 5, 5))
    for o in range(4):
        for i in range(3):
            for j in range(3):
                expected[0, o] += padded[0, o // 2, i : i + 5, j : j + 5] * w[o // 2, o % 2, 0, i, j]
    np.testing.assert_allclose(evaluate(model, [value])[0], expected * scale, rtol=1e-5, atol=1e-5)


def test_a_scale_that_varies_along_a_spatial_axis_stays_a_multiply() -> None:
    w = np.ones((2, 3, 1, 1), np.float32)
    x = opset.parameter([1, 3, 4, 4], name="x")
    conv = opset.convolution(x, w, [1, 1], [0, 0], [0, 0], [1, 1])
    model = _optimise(hs.Model([opset.multiply(conv, np.arange(4, dtype=np.float32))], [x]))
    assert _compute_types(model) == ["Convolution", "Multiply"]


@pytest.mark.parametrize("other_use", ["conv", "inner"])
def test_ops_with_other_consumers_are_left_alone(other_use: str) -> None:
    w = np.ones((2, 3, 1, 1), np.float32)
    x = opset.parameter([1, 3, 4, 4], name="x")
    conv = opset.convolution(x, w, [1, 1], [0, 0], [0, 0], [1, 1])
    inner = opset.add(conv, np.float32(1))
    outputs = [opset.multiply(inner, np.float32(2)), conv if other_use == "conv" else inner]
    model = _optimise(hs.Model(outputs, [x]))
    value = np.random.default_rng(1).standard_normal((1, 3, 4, 4)).astype(np.float32)
    produced = _pointwise_conv(value, w)
    first, second = evaluate(model, [value])
    np.testing.assert_allclose(first, (produced + 1) * 2, rtol=1e-5)
    np.testing.assert_allclose(second, produced if other_use == "conv" else produced + 1, rtol=1e-5)
    if other_use == "inner":
        assert _compute_types(model).count("Add") == 1


def test_a_constant_that_enlarges_the_tensor_is_not_folded() -> None:
    x = opset.parameter([3], name="x")
    model = _optimise(hs.Model([opset.add(opset.add(x, np.float32(1)), np.ones((2, 3), np.float32))], [x]))
    assert _compute_types(model) == ["Add", "Add"]


def test_integer_chains_are_not_reassociated() -> None:
    x = opset.parameter([3], hs.Type.i32, name="x")
    model = _optimise(hs.Model([opset.multiply(opset.add(x, np.int32(1)), np.int32(3))], [x]))
    assert _compute_types(model) == ["Add", "Multiply"]


@pytest.mark.parametrize("last", ["divide", "multiply"])
def test_a_decomposed_hard_swish_becomes_one_hswish(last: str) -> None:
    x = opset.parameter([2, 7], name="x")
    gate = opset.clamp(opset.add(x, np.float32(3), name="a"), 0.0, 6.0, name="c")
    product = opset.multiply(x, gate, name="m")
    y = (
        opset.divide(product, np.float32(6), name="d")
        if last == "divide"
        else opset.multiply(product, np.float32(1 / 6), name="d")
    )
    y.output(0).set_names({"y"})
    model = _optimise(hs.Model([y], [x]))
    assert _compute_types(model) == ["HSwish"]
    (node,) = [n for n in model.get_ops() if n.type_name == "HSwish"]
    assert node.friendly_name == "d" and fused_names(node) == {"a", "c", "m", "d"}
    value = np.linspace(-5, 5, 14, dtype=np.float32).reshape(2, 7)
    np.testing.assert_allclose(evaluate(model, [value])[0], value * np.clip(value + 3, 0, 6) / 6, rtol=1e-6)


def test_a_clamp_to_other_bounds_is_not_a_hard_swish() -> None:
    x = opset.parameter([4], name="x")
    gate = opset.clamp(opset.add(x, np.float32(3)), 0.0, 5.0)
    model = _optimise(hs.Model([opset.divide(opset.multiply(x, gate), np.float32(6))], [x]))
    assert "HSwish" not in _compute_types(model)


def _common(model: hs.Model) -> hs.Model:
    manager = PassManager()
    manager.register_group(common_optimizations(), "CommonOptimizations")
    manager.run_passes(model)
    return model


def test_a_batch_norm_after_a_bias_add_folds_into_a_transposed_convolution() -> None:
    rng = np.random.default_rng(5)
    w = rng.standard_normal((3, 2, 2, 2)).astype(np.float32)  # [in, out, kh, kw]
    bias = rng.standard_normal((1, 2, 1, 1)).astype(np.float32)
    gamma, beta, mean = (rng.standard_normal(2).astype(np.float32) for _ in range(3))
    variance = rng.random(2).astype(np.float32) + 0.5
    x = opset.parameter([1, 3, 3, 3], name="x")
    up = opset.convolution_backprop_data(x, w, [2, 2])
    y = opset.batch_norm_inference(opset.add(up, bias), gamma, beta, mean, variance, 1e-5)
    model = _common(hs.Model([y], [x]))
    assert _compute_types(model) == ["ConvolutionBackpropData", "Add"]
    value = rng.standard_normal((1, 3, 3, 3)).astype(np.float32)
    full = np.zeros((1, 2, 6, 6))
    for i in range(3):
        for j in range(3):
            full[0, :, 2 * i : 2 * i + 2, 2 * j : 2 * j + 2] += np.einsum("c,cokl->okl", value[0, :, i, j], w)
    pre = full + bias
    c = (slice(None), None, None)
    expected = (pre - mean[c]) / np.sqrt(variance[c] + 1e-5) * gamma[c] + beta[c]
    np.testing.assert_allclose(evaluate(model, [value])[0], expected, rtol=1e-4, atol=1e-5)


def test_a_batch_norm_on_its_own_becomes_a_multiply_and_an_add() -> None:
    x = opset.parameter([2, 3], name="x")
    gamma, beta = np.array([1, 2, 3], np.float32), np.array([0, -1, 1], np.float32)
    mean, variance = np.array([0.5, 0, -0.5], np.float32), np.array([1, 4, 0.25], np.float32)
    model = _common(hs.Model([opset.batch_norm_inference(x, gamma, beta, mean, variance, 0.0)], [x]))
    assert _compute_types(model) == ["Multiply", "Add"]
    value = np.array([[1, 2, 3], [-1, 0, 1]], np.float32)
    expected = (value - mean) / np.sqrt(variance) * gamma + beta
    np.testing.assert_allclose(evaluate(model, [value])[0], expected, rtol=1e-6, atol=1e-6)


def test_the_reordered_multiply_and_add_both_stand_for_the_original_pair() -> None:
    x = opset.parameter([2, 3], name="x")
    y = opset.multiply(opset.add(x, np.float32(1), name="plus"), np.float32(2), name="times")
    model = _optimise(hs.Model([y], [x]))
    assert _compute_types(model) == ["Multiply", "Add"]
    assert all(fused_names(n) == {"plus", "times"} for n in model.get_ops() if n.type_name in ("Multiply", "Add"))
    value = np.array([[1, 2, 3], [-1, 0, 1]], np.float32)
    np.testing.assert_allclose(evaluate(model, [value])[0], (value + 1) * 2, rtol=1e-6)


def test_a_merged_constant_stands_for_the_constants_it_replaces() -> None:
    # (x + a) + b -> x + (a + b): the new constant's fused names are a's and b's, so every fused name in
    # the optimised model is an original op's name (query_model maps claims back through them)
    x = opset.parameter([2, 3], hs.Type.f32, name="x")
    a = opset.constant(np.full((3,), 1.0, np.float32), name="a")
    b = opset.constant(np.full((3,), 2.0, np.float32), name="b")
    y = opset.add(opset.add(x, a, name="first"), b, name="second")
    model = _optimise(hs.Model([y], [x]))
    merged = [n for n in model.get_ops() if n.type_name == "Constant"]
    assert len(merged) == 1 and fused_names(merged[0]) == {"a", "b"}
    assert set().union(*(fused_names(n) for n in model.get_ops())) <= {"x", "a", "b", "first", "second", "Result_0"} | {
        n.friendly_name for n in model.get_ops() if n.type_name == "Result"
    }
    np.testing.assert_allclose(evaluate(model, [np.zeros((2, 3), np.float32)])[0], np.full((2, 3), 3.0))


def _conv_then(bias: np.ndarray, activation: str | None, extra_reader: bool = False) -> tuple[hs.Model, Node]:
    x = opset.parameter([1, 3, 5, 5], hs.Type.f32, name="x")
    conv = opset.convolution(x, np.ones((4, 3, 1, 1), np.float32), [1, 1], [0, 0], [0, 0], [1, 1])
    add = opset.add(conv, opset.constant(bias))
    last = add if activation is None else getattr(opset, activation)(add)
    results = [last] if not extra_reader else [last, opset.abs(add)]
    return hs.Model(results, [x]), conv


@pytest.mark.parametrize("bias_shape", [(1, 4, 1, 1), (4, 1, 1), (1,)])
def test_channel_bias_and_activation_finds_the_bias_and_the_sole_reader_activation(bias_shape: tuple[int, ...]) -> None:
    model, conv = _conv_then(np.arange(np.prod(bias_shape), dtype=np.float32).reshape(bias_shape), "relu")
    found = channel_bias_and_activation(conv, ConsumerMap(model), {"Relu"})
    assert found is not None and found.activation == "Relu"
    assert [n.type_name for n in found.nodes] == ["Convolution", "Add", "Relu"]
    assert found.bias.node.type_name == "Constant"


def test_channel_bias_and_activation_stops_where_the_pattern_does() -> None:
    model, conv = _conv_then(np.ones((1, 4, 1, 1), np.float32), "relu", extra_reader=True)
    found = channel_bias_and_activation(conv, ConsumerMap(model), {"Relu"})
    assert found is not None and found.activation is None  # the Add has another reader: the bias only
    assert [n.type_name for n in found.nodes] == ["Convolution", "Add"]
    model, conv = _conv_then(np.ones((1, 4, 1, 1), np.float32), "sigmoid")
    found = channel_bias_and_activation(conv, ConsumerMap(model), {"Relu"})
    assert found is not None and found.activation is None  # not one of the activations asked for
    model, conv = _conv_then(np.ones((1, 1, 5, 1), np.float32), "relu")
    assert channel_bias_and_activation(conv, ConsumerMap(model), {"Relu"}) is None  # varies along H
