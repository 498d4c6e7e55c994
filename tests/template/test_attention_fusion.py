"""TEMPLATE's attention fusion: torch's decomposed scaled dot-product attention over a key/value cache (with or
without grouped-query repeats, with or without the NaN guard) becomes one ``TemplateAttention`` whose results
equal numpy's attention written here and TEMPLATE's unfused kernels (up to the summation order of the matrix
products), also where the shape vectors at run time do not repeat the key per head; blocks off the pattern
stay as they are."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.transformations import fused_names
from template_plugin.attention_ops import attention
from template_plugin.transformations import transform_model


def _kinds(model: hs.Model) -> list[str]:
    return [n.type_name for n in model.get_ops() if n.type_name not in ("Parameter", "Constant", "Result")]


def _template(model: hs.Model, *, fuse: bool) -> tuple[hs.CompiledModel, hs.Model]:
    transformed = model.clone()
    transform_model(transformed, disabled=() if fuse else ("TemplateAttentionFusion",))
    compiled = hs.Core().compile_model(transformed, "TEMPLATE", {"TEMPLATE_DISABLE_TRANSFORMATIONS": True})
    return compiled, transformed


def _attention_block(
    heads: int, kv_heads: int, dtype: type, *, nan: bool = True, swap: bool = False, other_use: bool = False
) -> hs.Model:
    """torch's export: ``softmax(q * 0.5 @ (K^T * 0.5) + bias)`` [NaN -> 0] ``@ V``, K and V repeated per head
    by Unsqueeze/Broadcast/Reshape of the shape vectors ``target``/``pattern`` when ``kv_heads < heads``."""
    q = opset.parameter([-1, heads, -1, 8], dtype, name="q")
    k = opset.parameter([-1, kv_heads, -1, 8], dtype, name="k")
    v = opset.parameter([-1, kv_heads, -1, 8], dtype, name="v")
    bias = opset.parameter([-1, 1, -1, -1], dtype, name="bias")
    params = [q, k, v, bias]
    half = np.array(0.5, dtype)
    if kv_heads < heads:
        target = opset.parameter([5], np.int64, name="target")
        pattern = opset.parameter([4], np.int64, name="pattern")
        params += [target, pattern]

        def repeat(x):
            expanded = opset.broadcast(opset.unsqueeze(x, np.array([2], np.int64)), target, mode="bidirectional")
            return opset.reshape(expanded, pattern, False)

        keys, values = repeat(k), repeat(v)
    else:
        keys, values = k, v
    scaled_q = opset.multiply(half, q) if swap else opset.multiply(q, half)
    scaled_k = opset.multiply(opset.transpose(keys, np.array([0, 1, 3, 2], np.int64)), half)
    scores = opset.matmul(scaled_q, scaled_k, name="scores")
    masked = opset.add(bias, scores) if swap else opset.add(scores, bias)
    p = opset.softmax(masked, -1, name="softmax")
    if nan:
        p = opset.select(opset.not_equal(p, p), np.array(0.0, dtype), p, name="nan_to_zero")
    y = opset.matmul(p, values, name="sdpa")
    y.output(0).set_names({"y"})
    outputs = [y, opset.relu(p)] if other_use else [y]
    return hs.Model(outputs, params)


def _expected(q, k, v, bias, groups: int) -> np.ndarray:
    """Attention in float64, the key and value repeated per head, NaN rows as 0."""
    k64, v64 = (np.repeat(x.astype(np.float64), groups, axis=1) for x in (k, v))
    scores = (q.astype(np.float64) * 0.5) @ (np.swapaxes(k64, -1, -2) * 0.5) + bias
    with np.errstate(invalid="ignore"):
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        p = e / e.sum(axis=-1, keepdims=True)
    return np.nan_to_num(p, nan=0.0) @ v64


@settings(max_examples=25, deadline=None)
@given(
    kv_heads=st.sampled_from([1, 2, 4]),
    batch=st.integers(1, 2),
    positions=st.integers(1, 3),
    past=st.integers(0, 20),
    dtype=st.sampled_from([np.float32, np.float64]),
    swap=st.booleans(),
    masked_row=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_an_attention_fuses_and_computes_as_numpy(kv_heads, batch, positions, past, dtype, swap, masked_row, seed):
    heads = 4
    model = _attention_block(heads, kv_heads, dtype, swap=swap)
    fused, transformed = _template(model, fuse=True)
    assert _kinds(transformed) == ["TemplateAttention"]
    (node,) = [n for n in transformed.get_ops() if n.type_name == "TemplateAttention"]
    assert node.friendly_name == "sdpa" and transformed.outputs[0].names == {"y"}
    assert {"scores", "softmax", "nan_to_zero"} <= fused_names(node)
    rng = np.random.default_rng(seed)
    total = past + positions
    q = rng.standard_normal((batch, heads, positions, 8)).astype(dtype)
    k, v = (rng.standard_normal((batch, kv_heads, total, 8)).astype(dtype) for _ in range(2))
    causal = np.arange(total)[None, :] <= np.arange(past, total)[:, None]
    bias = np.where(causal, 0.0, -3.4028234663852886e38)[None, None].repeat(batch, 0).astype(dtype)
    if masked_row:
        bias[0, 0, 0, :] = -np.inf  # a fully masked row: NaN in the softmax, 0 after the guard
    groups = heads // kv_heads
    inputs = [q, k, v, bias]
    if groups > 1:
        inputs += [np.array([batch, kv_heads, groups, total, 8]), np.array([batch, heads, total, 8])]
    result = fused(inputs)[0]
    assert result.dtype == dtype and result.shape == (batch, heads, positions, 8)
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(result, _expected(q, k, v, bias, groups), rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(result, _template(model, fuse=False)[0](inputs)[0], rtol=tolerance, atol=tolerance)
    if masked_row:
        assert not result[0, :, 0].any()


def test_shape_vectors_that_do_not_repeat_per_head_compute_as_the_unfused_ops() -> None:
    """A key of one position broadcast to three by the target (bidirectional): the definition's path."""
    model = _attention_block(4, 2, np.float32)
    fused, _ = _template(model, fuse=True)
    rng = np.random.default_rng(3)
    q = rng.standard_normal((1, 4, 2, 8)).astype(np.float32)
    k, v = (rng.standard_normal((1, 2, 1, 8)).astype(np.float32) for _ in range(2))
    bias = np.zeros((1, 1, 2, 3), np.float32)
    inputs = [q, k, v, bias, np.array([1, 2, 2, 3, 8]), np.array([1, 4, 3, 8])]
    result = fused(inputs)[0]
    np.testing.assert_allclose(result, _template(model, fuse=False)[0](inputs)[0], rtol=1e-6)
    k3, v3 = (np.repeat(x, 3, axis=2) for x in (k, v))
    np.testing.assert_allclose(result, _expected(q, k3, v3, bias, 2), rtol=1e-5, atol=1e-6)


def test_a_pattern_vector_that_does_not_fit_fails_as_the_unfused_reshape() -> None:
    model = _attention_block(4, 2, np.float32)
    fused, _ = _template(model, fuse=True)
    x = np.ones((1, 4, 1, 8), np.float32)
    k = np.ones((1, 2, 3, 8), np.float32)
    with pytest.raises(hs.errors.InferenceError, match="sdpa"):
        fused([x, k, k, np.zeros((1, 1, 1, 3), np.float32), np.array([1, 2, 2, 3, 8]), np.array([1, 5, 3, 8])])


@pytest.mark.parametrize("variant", ["probabilities used elsewhere", "no NaN guard"])
def test_attention_variants(variant) -> None:
    model = _attention_block(2, 2, np.float32, nan=variant != "no NaN guard", other_use=variant != "no NaN guard")
    fused, transformed = _template(model, fuse=True)
    if variant == "probabilities used elsewhere":
        assert "TemplateAttention" not in _kinds(transformed) and "Softmax" in _kinds(transformed)
        return
    assert _kinds(transformed) == ["TemplateAttention"]
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 2, 3, 8)).astype(np.float32) for _ in range(3))
    bias = np.zeros((1, 1, 3, 3), np.float32)
    np.testing.assert_allclose(fused([q, k, v, bias])[0], _expected(q, k, v, bias, 1), rtol=1e-5, atol=1e-6)


def test_a_bad_attention_node_raises_naming_it() -> None:
    q = opset.parameter([1, 4, 8], np.float32, name="q")
    k = opset.parameter([1, 4, 3, 8], np.float32, name="k")
    half = np.array(0.5, np.float32)
    with pytest.raises(ModelValidationError, match=r"'att': .*rank 4"):
        attention(q, half, k, half, np.zeros((1, 1, 1, 3), np.float32), k, name="att")


@pytest.mark.parametrize("kv_heads", [2, 4])
def test_an_attention_over_an_appended_cache_returns_the_cache_too(kv_heads) -> None:
    """Concat(past, new) feeding the key and the value (and the model's outputs) joins the attention."""
    heads, dtype = 4, np.float32
    q = opset.parameter([-1, heads, -1, 8], dtype, name="q")
    past_k, new_k, past_v, new_v = (
        opset.parameter([-1, kv_heads, -1, 8], dtype, name=n) for n in ("past_k", "new_k", "past_v", "new_v")
    )
    bias = opset.parameter([-1, 1, -1, -1], dtype, name="bias")
    key, value = opset.concat([past_k, new_k], -2), opset.concat([past_v, new_v], -2)
    key.output(0).set_names({"present.key"})
    value.output(0).set_names({"present.value"})
    block = _attention_block(heads, kv_heads, dtype)  # the same ops, read from the block's parameters
    inner = {p.friendly_name: p for p in block.get_parameters()}
    feeds = {"q": q.output(0), "k": key.output(0), "v": value.output(0), "bias": bias.output(0)}
    for name, port in feeds.items():
        hs.transformations.replace_output(block, inner[name].output(0), port)
    params = [q, past_k, new_k, past_v, new_v, bias, *(inner[n] for n in ("target", "pattern") if n in inner)]
    model = hs.Model([block.get_results()[0].input_value(0), key, value], params)
    fused, transformed = _template(model, fuse=True)
    assert _kinds(transformed) == ["TemplateCachedAttention"]
    assert [o.names for o in transformed.outputs] == [{"y"}, {"present.key"}, {"present.value"}]
    rng = np.random.default_rng(kv_heads)
    arrays = [
        rng.standard_normal(s).astype(dtype) for s in [(1, heads, 1, 8), *[(1, kv_heads, n, 8) for n in (5, 1)] * 2]
    ]
    x, pk, nk, pv, nv = arrays
    inputs = [x, pk, nk, pv, nv, np.zeros((1, 1, 1, 6), dtype)]
    if kv_heads < heads:
        inputs += [np.array([1, kv_heads, heads // kv_heads, 6, 8]), np.array([1, heads, 6, 8])]
    result = fused(inputs)
    k, v = np.concatenate([pk, nk], axis=2), np.concatenate([pv, nv], axis=2)
    np.testing.assert_array_equal(result[1], k)
    np.testing.assert_array_equal(result[2], v)
    bias_array = inputs[5]
    expected = _expected(x, k, v, bias_array, heads // kv_heads)
    np.testing.assert_allclose(result[0], expected, rtol=1e-5, atol=1e-6)
