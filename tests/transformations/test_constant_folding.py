"""ConstantFolding: constant subgraphs become Constants computing the same values."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.reference import evaluate
from hetero_sdk.transformations import DISABLE_CONSTANT_FOLDING, ConstantFolding, fused_names


def _types(model: hs.Model) -> list[str]:
    return [n.type_name for n in model.get_ops()]


def _by_name(model: hs.Model, name: str) -> hs.Node:
    return next(n for n in model.get_ops() if n.friendly_name == name)


floats = hnp.arrays(np.float32, (2, 3), elements=st.floats(-4, 4, width=32))


@settings(max_examples=30, deadline=None)
@given(a=floats, b=floats, c=floats, x=floats)
def test_a_constant_subgraph_folds_to_one_constant_with_the_same_values(a, b, c, x) -> None:
    p = opset.parameter([2, 3], name="x")
    folded = opset.subtract(
        opset.add(opset.constant(a, name="a"), opset.constant(b, name="b"), name="ab"),
        opset.relu(opset.constant(c, name="c"), name="rc"),
        name="k",
    )
    model = hs.Model([opset.multiply(p, folded, name="y")], [p])
    original = model.clone()
    assert ConstantFolding().run(model) is True
    assert _types(model) == ["Parameter", "Constant", "Multiply", "Result"]
    k = _by_name(model, "k")
    assert k.type_name == "Constant"
    np.testing.assert_allclose(k.attrs["value"], (a + b) - np.maximum(c, 0), rtol=1e-6)
    assert fused_names(k) == {"ab", "rc", "k"}
    np.testing.assert_array_equal(evaluate(model, [x])[0], evaluate(original, [x])[0])
    assert ConstantFolding().run(model) is False


def test_shape_of_a_static_shape_folds_whatever_produces_it() -> None:
    x = opset.parameter([2, 3, 4], name="x")
    shape = opset.shape_of(opset.relu(x, name="r"), output_type=hs.Type.i32, name="s")
    last_two = opset.gather(shape, np.int64([1, 2]), 0, name="g")
    flat = opset.reshape(
        x, opset.concat([np.int32([-1]), opset.reduce_prod(last_two, np.int64(0), keep_dims=True)], 0), False
    )
    flat.friendly_name = "flat"
    model = hs.Model([flat], [x])
    original = model.clone()
    assert ConstantFolding().run(model)
    assert sorted(_types(model)) == sorted(["Parameter", "Constant", "Reshape", "Result"])
    target = model.get_results()[0].input_value(0).node.input_value(1).node
    np.testing.assert_array_equal(target.attrs["value"], np.int32([-1, 12]))
    assert {"s", "g"} <= fused_names(target)
    value = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(evaluate(model, [value])[0], value.reshape(2, 12))
    np.testing.assert_array_equal(evaluate(original, [value])[0], value.reshape(2, 12))


def test_shape_of_a_dynamic_shape_is_left_alone() -> None:
    x = opset.parameter([-1, 3], name="x")
    model = hs.Model([opset.shape_of(x, name="s")], [x])
    assert ConstantFolding().run(model) is False
    assert "ShapeOf" in _types(model)


def test_a_folded_op_read_by_a_result_keeps_the_output_names() -> None:
    x = opset.parameter([1], name="x")
    sum_ = opset.add(np.float32([1.0]), np.float32([2.0]), name="y")
    sum_.output(0).set_names({"y", "why"})
    model = hs.Model([sum_, x], [x])
    ConstantFolding().run(model)
    assert model.outputs[0].names == {"y", "why"}
    assert model.get_results()[0].input_value(0).node.friendly_name == "y"
    np.testing.assert_array_equal(evaluate(model, [np.float32([0])])[0], np.float32([3]))


def test_each_used_output_of_a_multi_output_op_folds_to_its_own_constant() -> None:
    x = opset.parameter([2], name="x")
    parts = opset.split(opset.constant(np.float32([1, 2, 3, 4, 5, 6]), name="data"), 0, 3, name="sp")
    model = hs.Model([opset.add(x, parts.output(0), name="u"), opset.add(x, parts.output(2), name="v")], [x])
    assert ConstantFolding().run(model)
    constants = {n.friendly_name: n for n in model.get_ops() if n.type_name == "Constant"}
    assert set(constants) == {"sp", "sp:2"}
    np.testing.assert_array_equal(constants["sp"].attrs["value"], np.float32([1, 2]))
    np.testing.assert_array_equal(constants["sp:2"].attrs["value"], np.float32([5, 6]))
    assert constants["sp:2"].output(0).names == {"sp:2"}
    assert fused_names(constants["sp"]) == fused_names(constants["sp:2"]) == {"sp"}
    u, v = evaluate(model, [np.float32([10, 20])])
    np.testing.assert_array_equal(u, np.float32([11, 22]))
    np.testing.assert_array_equal(v, np.float32([15, 26]))


def test_outputs_beyond_the_size_limit_are_not_folded() -> None:
    x = opset.parameter([4, 4], name="x")
    big = opset.add(np.ones((4, 4), np.float32), np.float32(1), name="big")
    model = hs.Model([opset.multiply(x, big)], [x])
    assert ConstantFolding(max_elements=15).run(model) is False
    assert ConstantFolding(max_elements=16).run(model) is True


def test_disable_constant_folding_in_rt_info_is_respected() -> None:
    x = opset.parameter([1], name="x")
    kept = opset.add(np.float32([1]), np.float32([2]), name="kept")
    kept.get_rt_info()[DISABLE_CONSTANT_FOLDING] = True
    model = hs.Model([opset.add(x, kept)], [x])
    assert ConstantFolding().run(model) is False
    assert "kept" in {n.friendly_name for n in model.get_ops()}


def test_a_kernel_error_on_constant_inputs_leaves_the_op_for_inference_time() -> None:
    x = opset.parameter([1], hs.Type.i32, name="x")
    bad = opset.divide(np.int32([1]), np.int32([0]), name="bad")
    model = hs.Model([opset.add(x, bad)], [x])
    assert ConstantFolding().run(model) is False
    assert "Divide" in _types(model)


def test_parameters_constants_and_results_are_never_folded() -> None:
    c = opset.constant(np.float32([1, 2]), name="c")
    x = opset.parameter([2], name="x")
    model = hs.Model([c, x], [x])
    assert ConstantFolding().run(model) is False
    assert _types(model) == ["Parameter", "Constant", "Result", "Result"]


def test_records_of_folded_inputs_carry_into_the_next_fold() -> None:
    x = opset.parameter([3], name="x")
    shape = opset.shape_of(x, name="s")
    doubled = opset.multiply(shape, np.int64(2), name="m")
    model = hs.Model([opset.convert(doubled, hs.Type.f32, name="f")], [x])
    ConstantFolding().run(model)
    folded = model.get_results()[0].input_value(0).node
    assert folded.type_name == "Constant" and folded.friendly_name == "f"
    assert fused_names(folded) == {"s", "m", "f"}
    np.testing.assert_array_equal(folded.attrs["value"], np.float32([6]))
