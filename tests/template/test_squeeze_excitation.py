"""TEMPLATE's squeeze-and-excitation fusion: the block ``x * clamp(conv(act(conv(mean(x)))))`` becomes one
``TemplateSqueezeExcitation`` whose results equal, bit for bit, TEMPLATE's own unfused kernels, and a
numpy computation written here; blocks that differ from the pattern stay as they are."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.transformations import fused_names
from template_plugin.compiled_model import PEAK_MEMORY
from template_plugin.squeeze_excitation import squeeze_excitation
from template_plugin.transformations import transform_model

NUMPY_ACTIVATIONS = {
    "none": lambda y: y,
    "relu": lambda y: np.maximum(y, 0),
    "hswish": lambda y: y * np.clip(y + 3, 0, 6) / 6,
}
ACTIVATIONS = {"none": lambda y: y, "relu": opset.relu, "hswish": opset.hswish}


def _block(
    shape: tuple[int, ...],
    middle: int,
    activation: str,
    seed: int,
    *,
    axes: list[int] | None = None,
    gate_first: bool = False,
    kernel: int = 1,
    extra_gate_use: bool = False,
    intermediate: bool = False,
) -> tuple[hs.Model, dict[str, np.ndarray]]:
    """``x * clamp(w2 @ act(w1 @ mean(x) + b1) + b2, 0, 1)`` built from the ops an ONNX import gives (``x``
    the model input, or ``relu`` of it when ``intermediate``)."""
    rng = np.random.default_rng(seed)
    channels, rank = shape[1], len(shape)
    weights = {
        "w1": rng.standard_normal((middle, channels, *[kernel] * (rank - 2))).astype(np.float32),
        "b1": rng.standard_normal((1, middle, *[1] * (rank - 2))).astype(np.float32),
        "w2": rng.standard_normal((channels, middle, *[1] * (rank - 2))).astype(np.float32),
        "b2": rng.standard_normal((1, channels, *[1] * (rank - 2))).astype(np.float32),
    }
    data = opset.parameter(list(shape), name="x")
    x = opset.relu(data, name="intermediate") if intermediate else data
    pooled = opset.reduce_mean(x, np.array(axes or list(range(2, rank)), np.int64), True, name="pool")
    ones, zeros = [1] * (rank - 2), [0] * (rank - 2)
    pad = [kernel // 2] * (rank - 2)
    reduce = opset.add(opset.convolution(pooled, weights["w1"], ones, pad, pad, ones, name="reduce"), weights["b1"])
    reduce = ACTIVATIONS[activation](reduce)
    expand = opset.add(opset.convolution(reduce, weights["w2"], ones, zeros, zeros, ones, name="expand"), weights["b2"])
    gate = opset.clamp(expand, 0.0, 1.0, name="gate")
    y = opset.multiply(gate, x, name="scaled") if gate_first else opset.multiply(x, gate, name="scaled")
    y.output(0).set_names({"y"})
    outputs = [y, opset.relu(gate)] if extra_gate_use else [y]
    return hs.Model(outputs, [data]), weights


def _expected(x: np.ndarray, weights: dict[str, np.ndarray], activation: str) -> np.ndarray:
    axes = tuple(range(2, x.ndim))
    pooled = x.astype(np.float64).mean(axis=axes)  # [N, C]
    hidden = pooled @ weights["w1"].reshape(weights["w1"].shape[0], -1).T.astype(np.float64) + weights["b1"].reshape(-1)
    hidden = NUMPY_ACTIVATIONS[activation](hidden)
    gate = np.clip(hidden @ weights["w2"].reshape(weights["w2"].shape[0], -1).T + weights["b2"].reshape(-1), 0, 1)
    return x * gate.reshape(*gate.shape, *[1] * len(axes))


def _template(model: hs.Model, *, fuse: bool) -> hs.CompiledModel:
    """``model`` through TEMPLATE's pipeline, with or without the squeeze-and-excitation fusion."""
    transformed = model.clone()
    transform_model(transformed, disabled=() if fuse else ("TemplateSqueezeExcitationFusion",))
    return hs.Core().compile_model(transformed, "TEMPLATE", {"TEMPLATE_DISABLE_TRANSFORMATIONS": True})


def _kinds(model: hs.Model) -> list[str]:
    return [n.type_name for n in model.get_ops() if n.type_name not in ("Parameter", "Constant", "Result")]


@settings(max_examples=30, deadline=None)
@given(
    shape=st.sampled_from([(1, 8, 5, 7), (2, 16, 2, 9), (3, 6, 11), (1, 4, 3, 2, 5)]),
    middle=st.integers(1, 6),
    activation=st.sampled_from(sorted(NUMPY_ACTIVATIONS)),
    gate_first=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_a_squeeze_excitation_block_fuses_and_computes_as_before(shape, middle, activation, gate_first, seed) -> None:
    model, weights = _block(shape, middle, activation, seed, gate_first=gate_first)
    transformed = model.clone()
    transform_model(transformed)
    assert _kinds(transformed) == ["TemplateSqueezeExcitation"]
    (fused,) = [n for n in transformed.get_ops() if n.type_name == "TemplateSqueezeExcitation"]
    assert fused.friendly_name == "scaled" and transformed.outputs[0].names == {"y"}
    assert {"pool", "gate"} <= fused_names(fused)
    x = np.random.default_rng(seed + 1).standard_normal(shape).astype(np.float32)
    result = _template(model, fuse=True)(x)[0]
    np.testing.assert_array_equal(result, _template(model, fuse=False)(x)[0])
    np.testing.assert_allclose(result, _expected(x, weights, activation), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(hs.Core().compile_model(model, "TEMPLATE")(x)[0], result)


@pytest.mark.parametrize(
    "variant",
    [
        {"axes": [3]},  # the mean over some spatial axes only
        {"kernel": 3},  # a 3x3 convolution where a pointwise one belongs
        {"extra_gate_use": True},  # the gate is read again
    ],
)
def test_a_block_that_differs_from_the_pattern_stays_unfused(variant) -> None:
    model, _ = _block((1, 8, 5, 7), 4, "relu", 0, **variant)
    transformed = model.clone()
    transform_model(transformed)
    assert "TemplateSqueezeExcitation" not in _kinds(transformed)
    x = np.random.default_rng(1).standard_normal((1, 8, 5, 7)).astype(np.float32)
    np.testing.assert_array_equal(_template(model, fuse=True)(x)[0], _template(model, fuse=False)(x)[0])


def test_mismatched_filters_get_a_clear_error_naming_the_node() -> None:
    x = opset.parameter([1, 8, 4, 4], name="x")
    w1, b1 = np.ones((2, 8, 1, 1), np.float32), np.ones((1, 2, 1, 1), np.float32)
    with pytest.raises(ModelValidationError, match=r"se.*expand's inputs \(3\) must match 2"):
        squeeze_excitation(x, w1, b1, np.ones((8, 3, 1, 1), np.float32), np.ones((1, 8, 1, 1), np.float32), name="se")
    with pytest.raises(ModelValidationError, match="pointwise"):
        squeeze_excitation(x, np.ones((2, 8, 3, 3), np.float32), b1, np.ones((8, 2, 1, 1), np.float32), b1, name="se")


def test_a_block_whose_input_dies_with_it_writes_over_that_input() -> None:
    """The block's input (an intermediate read by nothing after the block) lends its buffer to the result:
    with the model input alive to the end, the peak is that input and one buffer (two without), and the
    values are numpy's."""
    block, weights = _block((1, 16, 12, 12), 4, "relu", 3, intermediate=True)
    data = block.get_parameters()[0]
    model = hs.Model([opset.add(block.get_results()[0].input_value(0), data)], [data])
    compiled = hs.Core().compile_model(model, "TEMPLATE")
    assert "TemplateSqueezeExcitation" in _kinds(compiled.get_runtime_model())
    value = np.random.default_rng(4).standard_normal((1, 16, 12, 12)).astype(np.float32)
    expected = _expected(np.maximum(value, 0), weights, "relu") + value
    request = compiled.create_infer_request()
    for _ in range(2):
        np.testing.assert_allclose(request.infer([value])[0], expected, rtol=1e-5, atol=1e-5)
    assert compiled.get_property(PEAK_MEMORY) == 2 * value.nbytes
