"""TEMPLATE's pipeline: MatMul + bias Add (+ activation) fuse into TemplateFullyConnected."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.ops.linear_algebra import matmul
from hetero_sdk.plugin.query import get_supported_nodes
from hetero_sdk.reference import evaluate
from hetero_sdk.transformations import fused_names
from template_plugin.fused_ops import fully_connected
from template_plugin.transformations import transform_model

ACTIVATIONS = {
    None: None,
    "relu": opset.relu,
    "sigmoid": opset.sigmoid,
    "tanh": opset.tanh,
    "gelu_erf": lambda v, name: opset.gelu(v, "ERF", name=name),
    "gelu_tanh": lambda v, name: opset.gelu(v, "TANH", name=name),
}


def _types(model: hs.Model) -> list[str]:
    return [n.type_name for n in model.get_ops()]


def _fused(model: hs.Model) -> list[hs.Node]:
    return [n for n in model.get_ops() if n.type_name == "TemplateFullyConnected"]


@st.composite
def dense_cases(draw):
    batch = draw(st.sampled_from([(), (2,), (1, 2)]))
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    transpose_a, transpose_b = draw(st.booleans()), draw(st.booleans())
    bias_shape = draw(st.sampled_from([(), (1,), (n,), (1, n), (1,) * (len(batch) + 1) + (n,)]))
    activation = draw(st.sampled_from(sorted(ACTIVATIONS, key=str)))
    seed = draw(st.integers(0, 2**16))
    return batch, m, k, n, transpose_a, transpose_b, bias_shape, activation, seed


@settings(max_examples=40, deadline=None)
@given(case=dense_cases())
def test_the_fused_model_computes_what_the_original_computes(case) -> None:
    batch, m, k, n, transpose_a, transpose_b, bias_shape, activation, seed = case
    rng = np.random.default_rng(seed)
    a_shape = (*batch, k, m) if transpose_a else (*batch, m, k)
    b_shape = (n, k) if transpose_b else (k, n)
    x = opset.parameter(list(a_shape), name="x")
    w = opset.constant(rng.standard_normal(b_shape).astype(np.float32), name="w")
    bias = opset.constant(rng.standard_normal(bias_shape).astype(np.float32), name="b")
    y = opset.add(matmul(x, w, transpose_a, transpose_b, name="mm"), bias, name="add")
    last = "add"
    if activation is not None:
        y = ACTIVATIONS[activation](y, name="act")
        last = "act"
    y.output(0).set_names({"y"})
    model = hs.Model([y], [x], name="dense")
    original = model.clone()
    transform_model(model)
    (fc,) = _fused(model)
    assert _types(model) == ["Parameter", "Constant", "Constant", "TemplateFullyConnected", "Result"]
    assert fc.friendly_name == last and model.outputs[0].names == {"y"}
    assert fc.attrs == {
        "transpose_a": transpose_a, "transpose_b": transpose_b, "activation": activation or "none",
    }  # fmt: skip
    assert fused_names(fc) == {"mm", "add"} | ({"act"} if activation else set())
    value = rng.standard_normal(a_shape).astype(np.float32)
    np.testing.assert_allclose(evaluate(model, [value])[0], evaluate(original, [value])[0], rtol=1e-5, atol=1e-5)


def test_the_fused_kernel_matches_a_closed_form() -> None:
    a = np.float32([[1, -2], [0.5, 3]])
    b = np.float32([[2, 0, -1], [1, 1, 1]])
    bias = np.float32([0.5, -4, 1])
    x = opset.parameter([2, 2], name="x")
    model = hs.Model([fully_connected(x, b, bias, activation="gelu_erf", name="fc")], [x])
    pre = a @ b + bias
    gelu = np.array([[0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in row] for row in pre.astype(np.float64)])
    np.testing.assert_allclose(evaluate(model, [a])[0], gelu.astype(np.float32), rtol=1e-6)


def test_integer_fusion_wraps_like_the_original() -> None:
    x = opset.parameter([1, 2], hs.Type.i32, name="x")
    w = opset.constant(np.int32([[2**30, 1], [2**30, -1]]), name="w")
    y = opset.relu(opset.add(matmul(x, w, name="mm"), np.int32([5, 5]), name="add"), name="r")
    model = hs.Model([y], [x])
    original = model.clone()
    transform_model(model)
    assert len(_fused(model)) == 1
    value = np.int32([[1, 3]])
    np.testing.assert_array_equal(evaluate(model, [value])[0], evaluate(original, [value])[0])


def test_f16_fusion_stays_close_to_the_original() -> None:
    rng = np.random.default_rng(1)
    x = opset.parameter([3, 8], hs.Type.f16, name="x")
    w = opset.constant(rng.standard_normal((8, 4)).astype(np.float16), name="w")
    model = hs.Model([opset.add(matmul(x, w), np.float16([1, 2, 3, 4]))], [x])
    original = model.clone()
    transform_model(model)
    assert len(_fused(model)) == 1
    value = rng.standard_normal((3, 8)).astype(np.float16)
    np.testing.assert_allclose(
        evaluate(model, [value])[0].astype(np.float32), evaluate(original, [value])[0].astype(np.float32), rtol=1e-2
    )


def _dense(bias=None, extra_use: str | None = None, activation=opset.relu) -> hs.Model:
    bias = np.float32([1, 2, 3]) if bias is None else bias
    x = opset.parameter([2, 4], name="x")
    w = opset.constant(np.ones((4, 3), np.float32), name="w")
    mm = matmul(x, w, name="mm")
    add = opset.add(mm, bias, name="add")
    outputs = [activation(add, name="act") if activation else add]
    if extra_use == "matmul":
        outputs.append(mm)
    elif extra_use == "add":
        outputs.append(add)
    params = [x, bias] if isinstance(bias, hs.Node) and bias.type_name == "Parameter" else [x]
    return hs.Model(outputs, params)


def test_a_matmul_with_a_second_use_is_not_fused() -> None:
    model = _dense(extra_use="matmul")
    transform_model(model)
    assert _fused(model) == []


def test_a_non_constant_bias_is_not_fused() -> None:
    model = _dense(bias=opset.parameter([3], name="bias"))
    transform_model(model)
    assert _fused(model) == []


@pytest.mark.parametrize("shape", [(2, 1), (2, 3), (1, 1, 3)])
def test_a_bias_that_is_not_along_the_last_axis_only_is_not_fused(shape) -> None:
    model = _dense(bias=np.ones(shape, np.float32))
    original = model.clone()
    transform_model(model)
    assert _fused(model) == []
    value = np.ones((2, 4), np.float32)
    np.testing.assert_array_equal(evaluate(model, [value])[0], evaluate(original, [value])[0])


def test_the_activation_stays_outside_when_the_add_has_a_second_use() -> None:
    model = _dense(extra_use="add")
    transform_model(model)
    (fc,) = _fused(model)
    assert fc.attrs["activation"] == "none" and fc.friendly_name == "add"
    assert "Relu" in _types(model)


def test_an_unknown_follower_is_not_fused() -> None:
    model = _dense(activation=opset.exp)
    transform_model(model)
    (fc,) = _fused(model)
    assert fc.attrs["activation"] == "none" and "Exp" in _types(model)


def test_disabling_the_fusion_keeps_the_primitive_ops() -> None:
    model = _dense()
    manager = transform_model(model, disabled=("TemplateFullyConnectedFusion",))
    assert _fused(model) == []
    assert [r.name for r in manager.records if r.skipped] == ["TemplateFullyConnectedFusion"]


def test_disabling_the_common_optimizations_skips_folding() -> None:
    x = opset.parameter([2, 4], name="x")
    w = opset.convert(opset.constant(np.ones((4, 3), np.float16), name="w16"), hs.Type.f32, name="w")
    model = hs.Model([opset.add(matmul(x, w, name="mm"), np.float32([1, 2, 3]), name="add")], [x])
    transform_model(model, disabled=("CommonOptimizations",))
    assert "Convert" in _types(model) and len(_fused(model)) == 1
    transform_model(model)
    assert "Convert" not in _types(model)
    folded = _fused(model)[0].input_value(1).node
    assert folded.type_name == "Constant" and fused_names(folded) == {"w"}


def test_the_pipeline_is_idempotent() -> None:
    model = _dense()
    transform_model(model)
    snapshot = [(n.friendly_name, n.type_name) for n in model.get_ops()]
    manager = transform_model(model)
    assert not any(r.changed for r in manager.records)
    assert [(n.friendly_name, n.type_name) for n in model.get_ops()] == snapshot


def test_two_dense_layers_fuse_separately_and_keep_their_names() -> None:
    x = opset.parameter([1, 4], name="x")
    h = opset.relu(opset.add(matmul(x, np.ones((4, 5), np.float32), name="mm1"), np.float32(1), name="add1"), name="h")
    y = opset.add(matmul(h, np.ones((5, 2), np.float32), name="mm2"), np.float32([0, 1]), name="logits")
    model = hs.Model([y], [x])
    original = model.clone()
    transform_model(model)
    assert [(f.friendly_name, sorted(fused_names(f))) for f in _fused(model)] == [
        ("h", ["add1", "h", "mm1"]),
        ("logits", ["logits", "mm2"]),
    ]
    value = np.float32([[1, -1, 2, 0]])
    np.testing.assert_allclose(evaluate(model, [value])[0], evaluate(original, [value])[0])
    np.testing.assert_allclose(evaluate(model, [value])[0], np.float32([[15, 16]]))  # 5 * relu(2 + 1) + [0, 1]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"bias": np.ones((2, 3), np.float32)}, r"bias \[2,3\] must have rank <= 2"),
        ({"activation": "swish"}, "attribute activation='swish' is invalid"),
        ({"bias": np.ones(3, np.float16)}, "inputs must share one element type"),
    ],
)
def test_bad_fully_connected_nodes_raise_naming_the_node(kwargs, message) -> None:
    x = opset.parameter([2, 4], name="x")
    args = {"bias": np.ones(3, np.float32), **kwargs}
    with pytest.raises(ModelValidationError, match=f"TemplateFullyConnected 'fc': .*{message}"):
        fully_connected(x, np.ones((4, 3), np.float32), name="fc", **args)


def test_a_non_bool_transpose_flag_is_rejected() -> None:
    x = opset.parameter([2, 4], name="x")
    inputs = [
        x.output(0),
        opset.constant(np.ones((4, 3), np.float32)).output(0),
        opset.constant(np.float32(1)).output(0),
    ]
    attrs = {"transpose_a": False, "transpose_b": "yes", "activation": "none"}
    with pytest.raises(ModelValidationError, match="TemplateFullyConnected 'fc': attribute transpose_b='yes' must be"):
        hs.Node("TemplateFullyConnected", inputs, attrs, name="fc")


def test_a_real_activation_on_integers_is_rejected() -> None:
    x = opset.parameter([2, 4], hs.Type.i32, name="x")
    with pytest.raises(ModelValidationError, match="TemplateFullyConnected 'fc': activation 'tanh' needs a real"):
        fully_connected(x, np.ones((4, 3), np.int32), np.int32(1), activation="tanh", name="fc")


@st.composite
def random_models(draw):
    """Small random graphs mixing foldable constants, no-ops, dense blocks, shape and select subgraphs."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = opset.parameter([2, 3], name="x")
    pool: list = [x]

    def pick():
        return pool[draw(st.integers(0, len(pool) - 1))]

    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["unary", "binary", "const", "nop", "dense", "shape", "select"]))
        if kind == "unary":
            value = draw(st.sampled_from([opset.relu, opset.tanh, opset.negative]))(pick())
        elif kind == "binary":
            value = draw(st.sampled_from([opset.add, opset.multiply]))(pick(), pick())
        elif kind == "const":
            value = opset.constant(rng.standard_normal(draw(st.sampled_from([(2, 3), (3,)]))).astype(np.float32))
            if value.output(0).partial_shape != [2, 3]:
                value = opset.add(value, np.zeros((2, 3), np.float32))
        elif kind == "nop":
            source = pick()
            nop = draw(st.sampled_from(["convert", "reshape", "transpose"]))
            if nop == "convert":
                value = opset.convert(source, hs.Type.f32)
            elif nop == "reshape":
                value = opset.reshape(source, np.int64([2, 3]), False)
            else:
                value = opset.transpose(source, np.int64([0, 1]))
        elif kind == "dense":
            dense = opset.add(matmul(pick(), rng.standard_normal((3, 3)).astype(np.float32)), np.float32([1, 2, 3]))
            value = opset.relu(dense) if draw(st.booleans()) else dense
        elif kind == "shape":
            source = pick()
            value = opset.reshape(source, opset.shape_of(opset.negative(source)), False)
        else:
            cond = np.full((2, 3), draw(st.booleans()))
            value = opset.select(cond, pick(), pick())
        pool.append(value)
    outputs = [pool[-1]] + ([pick()] if draw(st.booleans()) else [])
    return hs.Model(outputs, [x], name="random"), rng.standard_normal((2, 3)).astype(np.float32)


@settings(max_examples=50, deadline=None)
@given(case=random_models())
def test_the_pipeline_preserves_values_names_and_is_idempotent_on_random_graphs(case) -> None:
    model, value = case
    original = model.clone()
    transform_model(model)
    assert [sorted(o.names) for o in model.outputs] == [sorted(o.names) for o in original.outputs]
    assert [sorted(i.names) for i in model.inputs] == [["x"]]
    for got, expected in zip(evaluate(model, [value]), evaluate(original, [value])):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert not any(r.changed for r in transform_model(model).records)
    originals = {n.friendly_name for n in original.get_ops()}
    assert all(fused_names(node) <= originals for node in model.get_ops())
    assert get_supported_nodes(original, transform_model, lambda n: True) == originals
