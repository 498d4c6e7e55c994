"""TEMPLATE's fusions of views: a MatMul between the Reshapes of a 2-D Gemm (``TemplateReshapedMatMul``) and
chains of Reshape/Transpose/Unsqueeze/Squeeze (``TemplateViewChain``) become one op each whose results equal
numpy written here and TEMPLATE's unfused kernels bit for bit; off the pattern they stay."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import InferenceError, ModelValidationError
from hetero_sdk.transformations import fused_names
from template_plugin.transformations import transform_model
from template_plugin.view_chain import view_chain

FUSIONS = ("TemplateReshapedMatMulFusion", "TemplateViewChainFusion")


def _kinds(model: hs.Model) -> list[str]:
    return [n.type_name for n in model.get_ops() if n.type_name not in ("Parameter", "Constant", "Result")]


def _template(model: hs.Model, *, fuse: bool) -> tuple[hs.CompiledModel, hs.Model]:
    transformed = model.clone()
    transform_model(transformed, disabled=() if fuse else FUSIONS)
    compiled = hs.Core().compile_model(transformed, "TEMPLATE", {"TEMPLATE_DISABLE_TRANSFORMATIONS": True})
    return compiled, transformed


def _gemm_block(dtype: type, outputs: int, *, shared: bool = False) -> hs.Model:
    """GPT-2's linear layer: Reshape to [-1, features], MatMul, Reshape to [batch, seq, outputs] read from x."""
    x = opset.parameter([-1, -1, 8], dtype, name="x")
    w = np.random.default_rng(outputs).standard_normal((8, outputs)).astype(dtype)
    flat = opset.reshape(x, np.array([-1, 8], np.int64), False, name="flat")
    product = opset.matmul(flat, w, name="gemm")
    dims = opset.shape_of(x)
    lead = opset.slice(dims, np.array([0], np.int64), np.array([2], np.int64), np.array([1], np.int64))
    y = opset.reshape(product, opset.concat([lead, np.array([outputs], np.int64)], 0), False, name="view")
    y.output(0).set_names({"y"})
    return hs.Model([y, opset.relu(product)] if shared else [y], [x])


@settings(max_examples=20, deadline=None)
@given(
    batch=st.integers(1, 3),
    seq=st.integers(1, 4),
    outputs=st.sampled_from([4, 24]),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_a_gemm_between_reshapes_fuses_and_computes_as_before(batch, seq, outputs, dtype) -> None:
    model = _gemm_block(dtype, outputs)
    fused, transformed = _template(model, fuse=True)
    assert _kinds(transformed).count("TemplateReshapedMatMul") == 1 and "MatMul" not in _kinds(transformed)
    (node,) = [n for n in transformed.get_ops() if n.type_name == "TemplateReshapedMatMul"]
    assert node.friendly_name == "view" and {"flat", "gemm"} <= fused_names(node)
    x = np.random.default_rng(batch * seq).standard_normal((batch, seq, 8)).astype(dtype)
    result = fused(x)[0]
    w = np.random.default_rng(outputs).standard_normal((8, outputs)).astype(dtype)
    np.testing.assert_array_equal(result, (x.reshape(-1, 8) @ w).reshape(batch, seq, outputs))
    np.testing.assert_array_equal(result, _template(model, fuse=False)[0](x)[0])


def test_a_gemm_whose_product_is_used_elsewhere_stays() -> None:
    _, transformed = _template(_gemm_block(np.float32, 4, shared=True), fuse=True)
    assert "TemplateReshapedMatMul" not in _kinds(transformed) and "MatMul" in _kinds(transformed)


def _heads_block(*, order: tuple[int, ...] = (0, 2, 1, 3), merge: bool = True) -> hs.Model:
    """Split into heads (Reshape by a computed pattern, Transpose), then merged back (Transpose, Reshape)."""
    x = opset.parameter([-1, -1, 12], np.float32, name="x")
    dims = opset.shape_of(x)
    lead = opset.slice(dims, np.array([0], np.int64), np.array([2], np.int64), np.array([1], np.int64))
    heads = opset.reshape(x, opset.concat([lead, np.array([-1, 4], np.int64)], 0), False, name="view")
    turned = opset.transpose(heads, np.array(order, np.int64), name="heads")
    y = opset.sigmoid(turned)
    if merge:
        back = opset.transpose(y, np.array([0, 2, 1, 3], np.int64))
        y = opset.unsqueeze(opset.reshape(back, np.array([0, 0, -1], np.int64), True), np.array([0], np.int64))
        y = opset.squeeze(y, np.array([0], np.int64), name="merged")
    return hs.Model([y], [x])


@pytest.mark.parametrize("shape", [(1, 1, 12), (2, 3, 12)])
def test_views_in_a_row_fuse_and_compute_as_before(shape) -> None:
    model = _heads_block()
    fused, transformed = _template(model, fuse=True)
    assert _kinds(transformed).count("TemplateViewChain") == 2
    assert not {"Transpose", "Reshape", "Unsqueeze", "Squeeze"} & set(_kinds(transformed))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    result = fused(x)[0]
    heads = x.reshape(shape[0], shape[1], 3, 4).transpose(0, 2, 1, 3)
    expected = (1 / (1 + np.exp(-heads))).transpose(0, 2, 1, 3).reshape(shape)
    np.testing.assert_allclose(result, expected, rtol=1e-6)
    np.testing.assert_array_equal(result, _template(model, fuse=False)[0](x)[0])


def test_a_transpose_order_that_does_not_fit_the_data_fails_naming_the_node() -> None:
    x = opset.parameter([-1, -1], np.float32, name="x")
    pattern = opset.parameter([-1], np.int64, name="pattern")
    chain = view_chain(x, ["Reshape", "Transpose"], [pattern, np.array([1, 0], np.int64)], [0, 0],
                       hs.PartialShape([-1, -1]), name="chain")  # fmt: skip
    compiled = hs.Core().compile_model(hs.Model([chain], [x, pattern]), "TEMPLATE")
    np.testing.assert_array_equal(compiled([np.ones((2, 3), np.float32), np.array([3, 2])])[0], np.ones((2, 3)))
    with pytest.raises(InferenceError, match=r"'chain'.*permutation"):
        compiled([np.ones((2, 3), np.float32), np.array([6])])


def test_a_bad_view_chain_node_raises_naming_it() -> None:
    x = opset.parameter([2, 3], np.float32, name="x")
    with pytest.raises(ModelValidationError, match=r"'c': stages"):
        view_chain(x, ["Reshape", "Gather"], [np.array([3, 2]), np.array([0])], [0, 0], hs.PartialShape([3, 2]), "c")


def _split_heads_block(*, shared: bool = False) -> hs.Model:
    """GPT-2's query/key/value: Split in three along the features, each part Reshaped to heads and
    Transposed; the last part also Unsqueezed (a one-op view)."""
    x = opset.parameter([-1, -1, 12], np.float32, name="x")
    dims = opset.shape_of(x)
    lead = opset.slice(dims, np.array([0], np.int64), np.array([2], np.int64), np.array([1], np.int64))
    pattern = opset.concat([lead, np.array([-1, 2], np.int64)], 0)
    parts = opset.split(x, np.array(2, np.int64), 3, name="split")
    outputs = []
    for index, part in enumerate(parts.outputs()):
        if index == 2:
            view = opset.unsqueeze(part, np.array([0], np.int64), name="v")
        else:
            view = opset.transpose(opset.reshape(part, pattern, False), np.array([0, 2, 1, 3], np.int64))
        view.output(0).set_names({f"part{index}"})
        outputs.append(view)
    if shared:
        outputs.append(opset.relu(parts.output(0)))
    return hs.Model(outputs, [x])


@pytest.mark.parametrize("shape", [(1, 1, 12), (2, 3, 12)])
def test_a_split_into_heads_fuses_and_computes_as_before(shape) -> None:
    model = _split_heads_block()
    fused, transformed = _template(model, fuse=True)
    assert _kinds(transformed) == ["ShapeOf", "Slice", "Concat", "TemplateSplitViews"]
    assert [o.names for o in transformed.outputs] == [{"part0"}, {"part1"}, {"part2"}]
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    results = fused(x)
    q, k, v = np.split(x, 3, axis=2)
    heads = [p.reshape(shape[0], shape[1], -1, 2).transpose(0, 2, 1, 3) for p in (q, k)]
    for index, expected in enumerate([*heads, v[np.newaxis]]):
        np.testing.assert_array_equal(results[index], expected)
    unfused = _template(model, fuse=False)[0](x)
    for index in range(3):
        np.testing.assert_array_equal(results[index], unfused[index])


def test_a_split_whose_part_is_used_twice_stays() -> None:
    _, transformed = _template(_split_heads_block(shared=True), fuse=True)
    assert "Split" in _kinds(transformed) and "TemplateSplitViews" not in _kinds(transformed)


def _gpt2_mlp_block() -> hs.Model:
    """GPT-2's attention output and MLP: heads merged (Transpose, Reshape) into a Gemm whose result joins the
    residual (Add); then a Gemm through the tanh GELU and a Gemm joining the residual again."""
    heads = opset.parameter([-1, 2, -1, 4], np.float32, name="heads")
    residual = opset.parameter([-1, -1, 8], np.float32, name="residual")
    rng = np.random.default_rng(5)
    w1, w2, w3 = (rng.standard_normal(s).astype(np.float32) for s in ((8, 8), (8, 16), (16, 8)))
    dims = opset.shape_of(residual)
    lead = opset.slice(dims, np.array([0], np.int64), np.array([2], np.int64), np.array([1], np.int64))

    def gemm(x, w, name):
        flat = opset.reshape(x, np.array([-1, w.shape[0]], np.int64), True)
        return opset.reshape(opset.matmul(flat, w), opset.concat([lead, np.array([w.shape[1]], np.int64)], 0), False,
                             name=name)  # fmt: skip

    merged = opset.transpose(heads, np.array([0, 2, 1, 3], np.int64))
    hidden = opset.add(gemm(merged, w1, "out_proj"), residual, name="residual_1")
    up = gemm(hidden, w2, "fc")
    cube = opset.multiply(opset.power(up, np.array(3.0, np.float32)), np.array(0.044715, np.float32))
    inner = opset.multiply(opset.add(up, cube), np.array(0.7978846, np.float32))
    gelu = opset.multiply(opset.multiply(up, np.array(0.5, np.float32)),
                          opset.add(opset.tanh(inner), np.array(1.0, np.float32)))  # fmt: skip
    y = opset.add(hidden, gemm(gelu, w3, "proj"), name="residual_2")
    y.output(0).set_names({"y"})
    return hs.Model([y], [heads, residual])


@pytest.mark.parametrize("batch", [1, 2])
def test_gemms_take_the_heads_transpose_the_gelu_and_the_residual(batch) -> None:
    model = _gpt2_mlp_block()
    fused, transformed = _template(model, fuse=True)
    kinds = _kinds(transformed)
    assert kinds.count("TemplateReshapedMatMul") == 3
    assert not {"Transpose", "MatMul", "TemplateGeluTanh", "Add"} & set(kinds)
    rng = np.random.default_rng(batch)
    heads = rng.standard_normal((batch, 2, 3, 4)).astype(np.float32)
    residual = rng.standard_normal((batch, 3, 8)).astype(np.float32)
    result = fused([heads, residual])[0]
    np.testing.assert_array_equal(result, _template(model, fuse=False)[0]([heads, residual])[0])
    weights = np.random.default_rng(5)
    w1, w2, w3 = (weights.standard_normal(s) for s in ((8, 8), (8, 16), (16, 8)))
    hidden = heads.astype(np.float64).transpose(0, 2, 1, 3).reshape(batch, 3, 8) @ w1 + residual
    up = hidden @ w2
    gelu = 0.5 * up * (1 + np.tanh(0.7978846 * (up + 0.044715 * up**3)))
    np.testing.assert_allclose(result, hidden + gelu @ w3, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("eps_mode", ["inside_sqrt", "outside_sqrt"])
def test_a_gemm_takes_the_layer_norm_before_it(eps_mode) -> None:
    """GPT-2's ln_1 then its query/key/value Gemm: the layer norm joins the Gemm, bit for bit."""
    x = opset.parameter([-1, -1, 8], np.float32, name="x")
    rng = np.random.default_rng(2)
    gamma, beta = (rng.standard_normal(8).astype(np.float32) for _ in range(2))
    w = rng.standard_normal((8, 6)).astype(np.float32)
    normed = opset.mvn(x, np.array([-1], np.int64), True, 1e-5, eps_mode)
    ln = opset.add(opset.multiply(normed, gamma), beta, name="ln")
    flat = opset.reshape(ln, np.array([-1, 8], np.int64), False)
    dims = opset.shape_of(x)
    lead = opset.slice(dims, np.array([0], np.int64), np.array([2], np.int64), np.array([1], np.int64))
    y = opset.reshape(opset.matmul(flat, w), opset.concat([lead, np.array([6], np.int64)], 0), False, name="qkv")
    model = hs.Model([y], [x])
    fused, transformed = _template(model, fuse=True)
    assert "TemplateLayerNorm" not in _kinds(transformed) and "TemplateReshapedMatMul" in _kinds(transformed)
    value = (rng.standard_normal((2, 3, 8)) * 3 + 1).astype(np.float32)
    result = fused(value)[0]
    np.testing.assert_array_equal(result, _template(model, fuse=False)[0](value)[0])
    centered = value.astype(np.float64) - value.mean(axis=-1, keepdims=True, dtype=np.float64)
    variance = (centered**2).mean(axis=-1, keepdims=True)
    scale = np.sqrt(variance + 1e-5) if eps_mode == "inside_sqrt" else np.sqrt(variance) + 1e-5
    np.testing.assert_allclose(result, (centered / scale * gamma + beta) @ w, rtol=1e-4, atol=1e-4)
