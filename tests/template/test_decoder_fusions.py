"""TEMPLATE's decoder fusions: an RMS norm, a rotary embedding's rotate-half, a tanh GELU and a layer norm, as exporters
write them, each become one op whose results equal, bit for bit, TEMPLATE's unfused kernels, and numpy
written here (exactly for the rotate-half and the GELU, all elementwise; closely for the norm, whose mean
numpy sums in another order); blocks that differ from the pattern stay as they are."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate
from hetero_sdk.transformations import fused_names
from template_plugin.decoder_ops import gelu_tanh_block, layer_norm, rms_norm, rotate_half
from template_plugin.transformations import transform_model

MVN = {"normalize_variance": True, "eps": 1e-5, "eps_mode": "inside_sqrt"}
FUSIONS = (
    "TemplateRMSNormFusion",
    "TemplateRotateHalfFusion",
    "TemplateGeluTanhFusion",
    "TemplateLayerNormFusion",
    "TemplateLastAxesTransposeFusion",
    "TemplateSwiGLUFusion",
)


def _kinds(model: hs.Model) -> list[str]:
    return [n.type_name for n in model.get_ops() if n.type_name not in ("Parameter", "Constant", "Result")]


def _template(model: hs.Model, *, fuse: bool) -> tuple[hs.CompiledModel, hs.Model]:
    """``model`` through TEMPLATE's pipeline, with or without the decoder fusions, and its transformed form."""
    transformed = model.clone()
    transform_model(transformed, disabled=() if fuse else FUSIONS)
    compiled = hs.Core().compile_model(transformed, "TEMPLATE", {"TEMPLATE_DISABLE_TRANSFORMATIONS": True})
    return compiled, transformed


def _rms_norm_block(
    shape: tuple[int, ...], dtype: type, seed: int, *, swap: bool = False, variant: str = ""
) -> hs.Model:
    """``weight * (x * (1 / sqrt(mean(x ** 2, -1) + eps)))`` as torch's exporter writes it."""
    weight = np.random.default_rng(seed).standard_normal(shape[-1]).astype(dtype)
    x = opset.parameter(list(shape), dtype, name="x")
    squares = opset.power(x, np.array([2.0], dtype))
    axes = np.array([0 if variant == "first axis" else -1], np.int64)
    mean = opset.reduce_mean(squares, axes, True, name="mean")
    root = opset.sqrt(opset.add(np.array([1e-6], dtype), mean) if swap else opset.add(mean, np.array([1e-6], dtype)))
    inverse = opset.divide(np.array([1.0], dtype), root, name="rsqrt")
    normed = opset.multiply(inverse, x) if swap else opset.multiply(x, inverse)
    y = opset.multiply(normed, weight, name="scaled") if swap else opset.multiply(weight, normed, name="scaled")
    y.output(0).set_names({"y"})
    outputs = [y, opset.relu(inverse)] if variant == "shared" else [y]
    return hs.Model(outputs, [x])


@settings(max_examples=25, deadline=None)
@given(
    shape=st.sampled_from([(1, 1, 64), (2, 5, 16), (3, 8), (7,), (1, 2, 3, 4)]),
    dtype=st.sampled_from([np.float32, np.float64]),
    swap=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_an_rms_norm_fuses_and_computes_as_before(shape, dtype, swap, seed) -> None:
    model = _rms_norm_block(shape, dtype, seed, swap=swap)
    fused, transformed = _template(model, fuse=True)
    assert _kinds(transformed) == ["TemplateRMSNorm"]
    (node,) = [n for n in transformed.get_ops() if n.type_name == "TemplateRMSNorm"]
    assert node.friendly_name == "scaled" and transformed.outputs[0].names == {"y"}
    assert {"mean", "rsqrt"} <= fused_names(node)
    x = (np.random.default_rng(seed + 1).standard_normal(shape) * 3).astype(dtype)
    result = fused(x)[0]
    assert result.dtype == dtype
    np.testing.assert_array_equal(result, _template(model, fuse=False)[0](x)[0])
    weight = np.random.default_rng(seed).standard_normal(shape[-1]).astype(dtype)
    x64 = x.astype(np.float64)
    expected = weight * (x64 / np.sqrt((x64**2).mean(axis=-1, keepdims=True) + 1e-6))
    np.testing.assert_allclose(result, expected, rtol=2e-5 if dtype == np.float32 else 1e-12, atol=1e-6)
    np.testing.assert_allclose(result, evaluate(model, [x])[0], rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("variant", ["first axis", "shared"])
def test_an_rms_norm_off_the_pattern_stays_unfused(variant) -> None:
    model = _rms_norm_block((2, 3, 8), np.float32, 0, variant=variant)
    _, transformed = _template(model, fuse=True)
    assert "TemplateRMSNorm" not in _kinds(transformed)
    assert "Power" in _kinds(transformed)


def _rotary_block(
    shape: tuple[int, ...], table: tuple[int, ...], dtype: type, *, swap: bool, cut: int | None = None
) -> hs.Model:
    """``x * cos + concat(-x[..., h:], x[..., :h]) * sin`` as torch's exporter writes it (``cut``: another h)."""
    half = shape[-1] // 2 if cut is None else cut
    x = opset.parameter(list(shape), dtype, name="x")
    cos, sin = opset.parameter(list(table), dtype, name="cos"), opset.parameter(list(table), dtype, name="sin")
    last = np.array([len(shape) - 1], np.int64)
    high = opset.slice(x, np.array([half], np.int64), np.array([2**63 - 1], np.int64), np.array([1], np.int64), last)
    low = opset.slice(x, np.array([0], np.int64), np.array([half], np.int64), np.array([1], np.int64), last)
    rotated = opset.concat([opset.negative(high, name="neg"), low], -1, name="cat")
    direct = opset.multiply(cos, x) if swap else opset.multiply(x, cos)
    turned = opset.multiply(sin, rotated) if swap else opset.multiply(rotated, sin)
    y = opset.add(turned, direct, name="rope") if swap else opset.add(direct, turned, name="rope")
    y.output(0).set_names({"y"})
    return hs.Model([y], [x, cos, sin])


@settings(max_examples=25, deadline=None)
@given(
    case=st.sampled_from(
        [((1, 4, 1, 16), (1, 1, 1, 16)), ((2, 2, 5, 8), (1, 1, 5, 8)), ((3, 4), (3, 4)), ((1, 2, 6), (6,))]
    ),
    dtype=st.sampled_from([np.float32, np.float64]),
    swap=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_a_rotate_half_fuses_and_computes_as_before(case, dtype, swap, seed) -> None:
    shape, table = case
    model = _rotary_block(shape, table, dtype, swap=swap)
    fused, transformed = _template(model, fuse=True)
    assert _kinds(transformed) == ["TemplateRotateHalf"]
    (node,) = [n for n in transformed.get_ops() if n.type_name == "TemplateRotateHalf"]
    assert node.friendly_name == "rope" and {"neg", "cat"} <= fused_names(node)
    rng = np.random.default_rng(seed)
    x, cos, sin = (rng.standard_normal(s).astype(dtype) for s in (shape, table, table))
    result = fused([x, cos, sin])[0]
    np.testing.assert_array_equal(result, _template(model, fuse=False)[0]([x, cos, sin])[0])
    half = shape[-1] // 2
    expected = x * cos + np.concatenate([-x[..., half:], x[..., :half]], axis=-1) * sin
    np.testing.assert_array_equal(result, expected)
    np.testing.assert_array_equal(result, evaluate(model, [x, cos, sin])[0])


def test_a_rotation_by_another_cut_stays_unfused() -> None:
    model = _rotary_block((1, 2, 3, 8), (1, 1, 3, 8), np.float32, swap=False, cut=3)
    _, transformed = _template(model, fuse=True)
    assert "TemplateRotateHalf" not in _kinds(transformed) and "Negative" in _kinds(transformed)


def _gelu_block(shape: tuple[int, ...], dtype: type, *, swap: bool, shared: bool = False) -> hs.Model:
    """GPT-2's tanh GELU as its exporter writes it (``swap``: every commutative operand order turned)."""
    x = opset.parameter(list(shape), dtype, name="x")

    def times(a, b, name=None):
        return opset.multiply(b, a, name=name) if swap else opset.multiply(a, b, name=name)

    def plus(a, b):
        return opset.add(b, a) if swap else opset.add(a, b)

    halved = times(x, np.array([0.5], dtype))
    cubic = times(opset.power(x, np.array([3.0], dtype), name="cube"), np.array([0.044715], dtype))
    tanh = opset.tanh(times(plus(x, cubic), np.array([0.7978845834732056], dtype)), name="tanh")
    y = times(halved, plus(tanh, np.array([1.0], dtype)), name="gelu")
    y.output(0).set_names({"y"})
    return hs.Model([y, opset.relu(cubic)] if shared else [y], [x])


@settings(max_examples=25, deadline=None)
@given(
    shape=st.sampled_from([(1, 1, 128), (2, 5, 16), (3,), (2, 3, 4, 5)]),
    dtype=st.sampled_from([np.float32, np.float64]),
    swap=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_a_tanh_gelu_fuses_and_computes_as_before(shape, dtype, swap, seed) -> None:
    model = _gelu_block(shape, dtype, swap=swap)
    fused, transformed = _template(model, fuse=True)
    assert _kinds(transformed) == ["TemplateGeluTanh"]
    (node,) = [n for n in transformed.get_ops() if n.type_name == "TemplateGeluTanh"]
    assert node.friendly_name == "gelu" and {"cube", "tanh"} <= fused_names(node)
    x = (np.random.default_rng(seed).standard_normal(shape) * 4).astype(dtype)
    result = fused(x)[0]
    assert result.dtype == dtype
    np.testing.assert_array_equal(result, _template(model, fuse=False)[0](x)[0])
    c = [np.array(v, dtype) for v in (0.5, 3.0, 0.044715, 0.7978845834732056, 1.0)]
    expected = (x * c[0]) * (np.tanh((x + np.power(x, c[1]) * c[2]) * c[3]) + c[4])
    np.testing.assert_array_equal(result, expected)
    np.testing.assert_allclose(result, evaluate(model, [x])[0], rtol=1e-6, atol=1e-6)


def test_a_tanh_gelu_whose_cube_is_used_elsewhere_stays_unfused() -> None:
    _, transformed = _template(_gelu_block((2, 8), np.float32, swap=False, shared=True), fuse=True)
    assert "TemplateGeluTanh" not in _kinds(transformed) and "Tanh" in _kinds(transformed)


def _layer_norm_block(shape: tuple[int, ...], dtype: type, eps_mode: str, seed: int, *, swap: bool) -> hs.Model:
    """``MVN(x, -1) * gamma + beta`` as the ONNX LayerNormalization import gives it."""
    rng = np.random.default_rng(seed)
    gamma, beta = (rng.standard_normal(shape[-1]).astype(dtype) for _ in range(2))
    x = opset.parameter(list(shape), dtype, name="x")
    normed = opset.mvn(x, np.array([-1], np.int64), True, 1e-5, eps_mode, name="mvn")
    scaled = opset.multiply(gamma, normed) if swap else opset.multiply(normed, gamma)
    y = opset.add(beta, scaled, name="ln") if swap else opset.add(scaled, beta, name="ln")
    return hs.Model([y], [x])


@settings(max_examples=25, deadline=None)
@given(
    shape=st.sampled_from([(1, 1, 64), (2, 5, 16), (3, 8)]),
    dtype=st.sampled_from([np.float32, np.float64]),
    eps_mode=st.sampled_from(["inside_sqrt", "outside_sqrt"]),
    swap=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_a_layer_norm_fuses_and_computes_as_before(shape, dtype, eps_mode, swap, seed) -> None:
    model = _layer_norm_block(shape, dtype, eps_mode, seed, swap=swap)
    fused, transformed = _template(model, fuse=True)
    assert _kinds(transformed) == ["TemplateLayerNorm"]
    (node,) = [n for n in transformed.get_ops() if n.type_name == "TemplateLayerNorm"]
    assert node.friendly_name == "ln" and "mvn" in fused_names(node)
    x = (np.random.default_rng(seed + 1).standard_normal(shape) * 3 + 1).astype(dtype)
    result = fused(x)[0]
    assert result.dtype == dtype
    np.testing.assert_array_equal(result, _template(model, fuse=False)[0](x)[0])
    rng = np.random.default_rng(seed)
    gamma, beta = (rng.standard_normal(shape[-1]).astype(np.float64) for _ in range(2))
    centered = x.astype(np.float64) - x.mean(axis=-1, keepdims=True, dtype=np.float64)
    variance = (centered**2).mean(axis=-1, keepdims=True)
    scale = np.sqrt(variance + 1e-5) if eps_mode == "inside_sqrt" else np.sqrt(variance) + 1e-5
    np.testing.assert_allclose(result, centered / scale * gamma + beta, rtol=1e-5, atol=1e-5)


def _key_transpose_chain(shape: list[int], *, order: tuple[int, ...] = (0, 2, 1)) -> hs.Model:
    """torch's export of ``k.transpose(-2, -1)``: reshaped to 3D by its own (dynamic) shape, transposed, reshaped
    back."""
    k = opset.parameter(shape, np.float32, name="k")
    dims = opset.shape_of(k)

    def cut(start: int, stop: int):
        return opset.slice(dims, np.array([start], np.int64), np.array([stop], np.int64), np.array([1], np.int64))

    last, before, lead = cut(-1, 2**63 - 1), cut(-2, -1), cut(-(2**63), -2)
    flat = opset.reshape(k, opset.concat([np.array([-1], np.int64), before, last], 0), True)
    turned = opset.transpose(flat, np.array(order, np.int64))
    y = opset.reshape(turned, opset.concat([lead, last, before], 0), True, name="kt")
    return hs.Model([y], [k])


@pytest.mark.parametrize("shape", [[1, 4, -1, 16], [2, 3, -1, 4], [-1, 2, 3, 7, 5], [6, -1, 3]])
def test_a_key_transposed_through_reshapes_becomes_one_transpose(shape) -> None:
    model = _key_transpose_chain(shape)
    fused, transformed = _template(model, fuse=True)
    assert _kinds(transformed) == ["Transpose"]
    concrete = [d if d > 0 else 3 for d in shape]
    k = np.random.default_rng(len(shape)).standard_normal(concrete).astype(np.float32)
    result = fused(k)[0]
    np.testing.assert_array_equal(result, np.swapaxes(k, -1, -2))
    np.testing.assert_array_equal(result, _template(model, fuse=False)[0](k)[0])


def test_a_chain_transposed_otherwise_stays() -> None:
    _, transformed = _template(_key_transpose_chain([2, -1, 5, 4], order=(1, 0, 2)), fuse=True)
    (chain,) = [n for n in transformed.get_ops() if n.type_name == "TemplateViewChain"]  # the views, in one step
    assert chain.attrs["stages"] == ["reshape", "transpose", "reshape"]


def _one(value: float) -> np.ndarray:
    return np.array([value], np.float32)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda x: rms_norm(x, _one(2), _one(1e-6), _one(1), np.ones(5, np.float32), name="n"), r"weight \[5\]"),
        (lambda x: rms_norm(x, _one(2), np.ones(2, np.float32), _one(1), np.ones(8, np.float32), name="n"), "eps"),
        (lambda x: rotate_half(x, np.ones(8, np.float32), np.ones(8, np.float32), 3, name="n"), "2 \\* half = 6"),
        (lambda x: rotate_half(x, np.ones(5, np.float32), np.ones(8, np.float32), 4, name="n"), "without enlarging"),
        (
            lambda x: gelu_tanh_block(x, [_one(0.5), _one(3), np.ones(3, np.float32), _one(0.8), _one(1)], name="n"),
            "coefficient",
        ),
        (lambda x: layer_norm(x, np.array([-1], np.int64), np.ones(3, np.float32), _one(0), MVN, name="n"), "gamma"),
    ],
)
def test_bad_decoder_op_nodes_raise_naming_the_node(build, message) -> None:
    x = opset.parameter([2, 8], name="x")
    with pytest.raises(ModelValidationError, match=f"'n': .*{message}"):
        build(x)


@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(st.integers(1, 6), min_size=1, max_size=4),
    dtype=st.sampled_from([np.float32, np.float64]),
    eps_mode=st.sampled_from(["inside_sqrt", "outside_sqrt"]),
    normalize_variance=st.booleans(),
    data=st.data(),
)
def test_a_layer_norm_over_any_axes_equals_the_reference_evaluator(
    shape, dtype, eps_mode, normalize_variance, data
) -> None:
    """TemplateLayerNorm's own numpy MVN gives the reference MVN kernel's values bit for bit."""
    axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, max_size=len(shape)))
    rng = np.random.default_rng(len(shape) + len(axes))
    gamma, beta = (rng.standard_normal(shape[-1]).astype(dtype) for _ in range(2))
    x = opset.parameter(shape, dtype, name="x")
    attrs = {"normalize_variance": normalize_variance, "eps": 1e-5, "eps_mode": eps_mode}
    normed = opset.mvn(x, np.array(axes, np.int64), normalize_variance, 1e-5, eps_mode)
    model = hs.Model([opset.add(opset.multiply(normed, gamma), beta)], [x])
    fused = hs.Model([layer_norm(x, np.array(axes, np.int64), gamma, beta, attrs)], [x])
    value = (rng.standard_normal(shape) * 4 + 2).astype(dtype)
    result = hs.Core().compile_model(fused, "TEMPLATE")(value)[0]
    np.testing.assert_array_equal(result, evaluate(model, [value])[0])


@settings(max_examples=20, deadline=None)
@given(
    shape=st.sampled_from([(1, 1, 16), (2, 3, 8), (5,)]),
    dtype=st.sampled_from([np.float32, np.float64]),
    swap=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_a_gated_silu_fuses_and_computes_as_before(shape, dtype, swap, seed) -> None:
    """Llama's MLP gate: ``(a * sigmoid(a)) * b`` becomes TemplateSwiGLU, bit for bit."""
    a, b = opset.parameter(list(shape), dtype, name="a"), opset.parameter(list(shape), dtype, name="b")
    sigmoid = opset.sigmoid(a, name="sigmoid")
    silu = opset.multiply(sigmoid, a) if swap else opset.multiply(a, sigmoid, name="silu")
    y = opset.multiply(b, silu, name="gated") if swap else opset.multiply(silu, b, name="gated")
    model = hs.Model([y], [a, b])
    fused, transformed = _template(model, fuse=True)
    assert _kinds(transformed) == ["TemplateSwiGLU"]
    (node,) = [n for n in transformed.get_ops() if n.type_name == "TemplateSwiGLU"]
    assert node.friendly_name == "gated" and "sigmoid" in fused_names(node)
    rng = np.random.default_rng(seed)
    x, z = (rng.standard_normal(shape).astype(dtype) * 4 for _ in range(2))
    result = fused([x, z])[0]
    np.testing.assert_array_equal(result, _template(model, fuse=False)[0]([x, z])[0])
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(result, x64 / (1 + np.exp(-x64)) * z, rtol=1e-5 if dtype == np.float32 else 1e-12)
