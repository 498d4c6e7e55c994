"""Model.reshape: shapes by name, index, port or dimension name; dynamic and static; all or nothing;
control-flow bodies follow; values checked against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError, PortNotFoundError
from hetero_sdk.reference import evaluate
from hetero_sdk.serialization import model_to_bytes

F32, I64 = np.float32, np.int64


def _two_inputs() -> hs.Model:
    """``out = relu(x) * y`` and ``total = sum(x, axis 1)`` with x, y of shape [2, 3]."""
    x = opset.parameter([2, 3], F32, name="x")
    y = opset.parameter([2, 3], F32, name="y")
    out = opset.multiply(opset.relu(x, name="relu"), y, name="out")
    total = opset.reduce_sum(x, opset.constant(np.array([1], I64), name="axis"), name="total")
    return hs.Model([out, total], [x, y], name="two")


def _shapes(model: hs.Model) -> list[tuple[str, str]]:
    return [(n.friendly_name, ",".join(str(o.partial_shape) for o in n.outputs())) for n in model.get_ops()]


def test_one_shape_reshapes_a_one_input_model_to_dynamic_then_static() -> None:
    x = opset.parameter([2, 3], F32, name="x")
    model = hs.Model([opset.add(x, opset.constant(np.ones(3, F32), name="c"), name="y")], [x], name="one")
    model.reshape([-1, 3])
    assert model.input().partial_shape == [-1, 3] and model.output().partial_shape == [-1, 3]
    assert model.is_dynamic()
    model.reshape(hs.PartialShape([5, 3]))
    assert model.output().partial_shape == [5, 3] and not model.is_dynamic()
    value = np.arange(15, dtype=F32).reshape(5, 3)
    np.testing.assert_array_equal(evaluate(model, [value])[0], value + 1)


def test_inputs_by_name_index_and_port_others_keep_their_shapes() -> None:
    model = _two_inputs()
    model.reshape({"x": [1, 3]})  # y is not named: it keeps [2, 3], and x broadcasts with it
    assert [p.partial_shape for p in model.inputs] == [[1, 3], [2, 3]]
    assert [o.partial_shape for o in model.outputs] == [[2, 3], [1]]
    model.reshape({0: [-1, 5], model.input(1): [-1, 5]})
    assert [str(o.partial_shape) for o in model.outputs] == ["[?,5]", "[?]"]
    model.reshape({-1: [3, 5], "x": [3, 5]})
    x, y = np.linspace(-2, 2, 15, dtype=F32).reshape(3, 5), np.arange(15, dtype=F32).reshape(3, 5)
    out, total = evaluate(model, [x, y])
    np.testing.assert_allclose(out, np.maximum(x, 0) * y)
    np.testing.assert_allclose(total, x.sum(axis=1), rtol=1e-6, atol=1e-6)


def test_ranks_may_change() -> None:
    x = opset.parameter([2, 3], F32, name="x")
    model = hs.Model([opset.sigmoid(x, name="y")], [x], name="m")
    model.reshape([2, 3, 4])
    assert model.output().partial_shape == [2, 3, 4]
    value = np.linspace(-3, 3, 24, dtype=F32).reshape(2, 3, 4)
    np.testing.assert_allclose(evaluate(model, [value])[0], 1 / (1 + np.exp(-value)), rtol=1e-6)


def test_one_shape_for_a_model_with_several_inputs_is_refused() -> None:
    with pytest.raises(ModelValidationError, match=r"model 'two' has 2 inputs \(x, y\); one shape fits a one-input"):
        _two_inputs().reshape([4, 3])


def test_unknown_inputs_raise_a_key_error_listing_the_inputs() -> None:
    model = _two_inputs()
    with pytest.raises(PortNotFoundError, match="model 'two' has no input named 'xx'; did you mean x\\?"):
        model.reshape({"xx": [1, 3]})
    with pytest.raises(KeyError, match="has no input named 'batch'; inputs: x, y"):
        model.reshape({"batch": [1, 3]})
    with pytest.raises(PortNotFoundError, match="has 2 input\\(s\\); index 2 does not exist; inputs: 0: \\['x'\\]"):
        model.reshape({2: [1, 3]})
    with pytest.raises(PortNotFoundError, match="is not one of its inputs"):
        model.reshape({model.output(0): [1, 3]})
    with pytest.raises(PortNotFoundError, match="has no output named 'nope'; outputs: out, total"):
        model.output("nope")


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        ([-2, 3], "must hold ints >= 0, or -1"),
        ([1.5, 3], "must hold ints >= 0, or -1"),
        ("2,3", "must be a PartialShape or a list of ints"),
        (3, "must be a PartialShape or a list of ints"),
    ],
)
def test_malformed_shapes_are_refused(shape, message) -> None:
    with pytest.raises(ModelValidationError, match=f"the shape for input 'x' {message}"):
        _two_inputs().reshape({"x": shape})


def test_one_input_given_two_shapes_is_refused() -> None:
    with pytest.raises(ModelValidationError, match="input 'x' is given two shapes, \\[1,3\\] and \\[2,3\\]"):
        _two_inputs().reshape({"x": [1, 3], 0: [2, 3]})


def test_shapes_the_graph_refuses_leave_the_model_exactly_as_it_was() -> None:
    model = _two_inputs()
    before, saved = _shapes(model), model_to_bytes(model)
    with pytest.raises(ModelValidationError) as caught:
        model.reshape({"x": [4, 3]})  # y stays [2, 3]: Multiply cannot broadcast them
    message = str(caught.value)
    assert "model 'two' does not accept the input shapes {'x': [4,3]}" in message
    assert "Multiply 'out'" in message and "model is unchanged" in message
    assert _shapes(model) == before and model_to_bytes(model) == saved
    assert model.input(0).node.attrs["shape"] == [2, 3]


def test_a_fixed_reshape_target_refuses_other_sizes_and_names_the_node() -> None:
    x = opset.parameter([2, 3], F32, name="x")
    flat = opset.reshape(x, opset.constant(np.array([6], I64), name="six"), special_zero=False, name="flat")
    model = hs.Model([flat], [x], name="m")
    with pytest.raises(ModelValidationError, match="Reshape 'flat'"):
        model.reshape([4, 3])
    assert model.output().partial_shape == [6]
    model.reshape([3, 2])  # the same element count is accepted
    assert model.output().partial_shape == [6]


def test_dimension_names_from_rt_info_set_every_dimension_so_named() -> None:
    model = _two_inputs()
    for parameter in model.get_parameters():
        parameter.get_rt_info()["dim_names"] = ["batch", None]
    model.reshape(dims={"batch": 7})
    assert [p.partial_shape for p in model.inputs] == [[7, 3], [7, 3]]
    model.reshape(dims={"batch": -1})
    assert [str(o.partial_shape) for o in model.outputs] == ["[?,3]", "[?]"]
    model.reshape({"y": [2, 3]}, dims={"batch": 2})  # explicit shapes win where both apply
    assert [p.partial_shape for p in model.inputs] == [[2, 3], [2, 3]]
    with pytest.raises(PortNotFoundError, match="no input has a dimension named 'bach'; did you mean batch\\?"):
        model.reshape(dims={"bach": 1})
    model.reshape({"x": [2, 3, 1], "y": [2, 3, 1]})  # a new rank: the names no longer fit and are dropped
    assert all("dim_names" not in p.get_rt_info() for p in model.get_parameters())


def test_reshape_needs_something_to_do() -> None:
    with pytest.raises(TypeError, match=r"Model\.reshape needs shapes"):
        _two_inputs().reshape()


def _if_model() -> tuple[hs.Model, hs.Model]:
    """``out = cond ? x * 2 : -x`` with bodies declaring static [3] Parameters."""
    a = opset.parameter([3], F32, name="a")
    then_body = hs.Model([opset.multiply(a, 2.0, name="twice")], [a], name="then")
    b = opset.parameter([3], F32, name="b")
    else_body = hs.Model([opset.negative(b, name="minus")], [b], name="else")
    cond = opset.parameter([], np.bool_, name="cond")
    x = opset.parameter([3], F32, name="x")
    node = opset.if_op(cond, then_body, else_body, [x], name="if")
    return hs.Model([node], [cond, x], name="choose"), then_body


def test_if_bodies_follow_the_shapes_they_receive() -> None:
    model, then_body = _if_model()
    model.reshape({"x": [2, 4]})
    assert model.output().partial_shape == [2, 4]
    assert then_body.input().partial_shape == [2, 4] and then_body.output().partial_shape == [2, 4]
    x = np.arange(8, dtype=F32).reshape(2, 4) - 3
    np.testing.assert_array_equal(evaluate(model, [np.array(True), x])[0], x * 2)
    np.testing.assert_array_equal(evaluate(model, [np.array(False), x])[0], -x)
    model.reshape({"x": [-1]})
    assert model.output().partial_shape == [-1]
    for n in (1, 6):
        v = np.linspace(-1, 1, n, dtype=F32)
        np.testing.assert_array_equal(evaluate(model, [np.array(False), v])[0], -v)
    assert then_body.input().partial_shape == [-1]


def test_a_body_that_refuses_the_new_shapes_names_the_if_and_leaves_every_body_as_it_was() -> None:
    a = opset.parameter([3], F32, name="a")
    column = opset.reshape(a, opset.constant(np.array([3, 1], I64)), special_zero=False, name="column")
    fixed = hs.Model([column], [a], name="fixed")
    b = opset.parameter([3], F32, name="b")
    free = hs.Model([opset.unsqueeze(b, opset.constant(np.array([1], I64)), name="stand")], [b], name="free")
    x = opset.parameter([3], F32, name="x")
    c = opset.parameter([], np.bool_, name="c")
    model = hs.Model([opset.if_op(c, free, fixed, [x], name="if")], [c, x], name="m")
    before = model_to_bytes(model)
    with pytest.raises(ModelValidationError, match=r"If 'if': else_body does not accept .*f32\[4\].*Reshape 'column'"):
        model.reshape({"x": [4]})  # the then_body accepts [4] and was reshaped before the else_body refused
    assert model.output().partial_shape == [3, 1]
    assert free.input().partial_shape == [3] and free.output().partial_shape == [3, 1]
    assert model_to_bytes(model) == before


def test_scan_and_loop_follow_reshaped_inputs() -> None:
    state, piece = opset.parameter([3], F32, name="state"), opset.parameter([3], F32, name="piece")
    total = opset.add(state, piece, name="total")
    body = hs.Model([total, total], [state, piece], name="body")
    x = opset.parameter([4, 3], F32, name="x")
    init = opset.parameter([3], F32, name="init")
    node = opset.scan(body, [init], [x], name="scan")
    model = hs.Model(node.outputs(), [init, x], name="running")
    model.reshape({"x": [-1, 5], "init": [5]})
    assert [str(o.partial_shape) for o in model.outputs] == ["[5]", "[?,5]"]
    xs = np.arange(10, dtype=F32).reshape(2, 5)
    final, stacked = evaluate(model, [np.zeros(5, F32), xs])
    np.testing.assert_array_equal(stacked, np.cumsum(xs, axis=0))
    np.testing.assert_array_equal(final, xs.sum(axis=0))

    i, go = opset.parameter([], I64, name="i"), opset.parameter([], np.bool_, name="go")
    acc, step = opset.parameter([2], F32, name="acc"), opset.parameter([2], F32, name="step")
    loop_body = hs.Model([go, opset.add(acc, step, name="next")], [i, go, acc, step], name="loop_body")
    start, inc = opset.parameter([2], F32, name="start"), opset.parameter([2], F32, name="inc")
    loop = opset.loop(np.array(3, I64), True, loop_body, [start], [inc], name="loop")
    counted = hs.Model(loop.outputs(), [start, inc], name="counted")
    counted.reshape({"start": [-1], "inc": [-1]})
    assert counted.output().partial_shape == [-1]
    got = evaluate(counted, [np.zeros(4, F32), np.arange(4, dtype=F32)])[0]
    np.testing.assert_array_equal(got, 3 * np.arange(4, dtype=F32))


def test_a_loop_whose_carried_value_grows_gets_a_dynamic_dimension() -> None:
    i, go = opset.parameter([], I64, name="i"), opset.parameter([], np.bool_, name="go")
    acc = opset.parameter([1], F32, name="acc")
    grown = opset.concat([acc, opset.constant(np.ones(1, F32), name="one")], 0, name="grown")
    body = hs.Model([go, grown], [i, go, acc], name="body")
    start = opset.parameter([1], F32, name="start")
    model = hs.Model(opset.loop(np.array(3, I64), True, body, [start], name="loop").outputs(), [start], name="m")
    assert model.output().partial_shape == [-1]
    model.reshape([2])
    assert model.output().partial_shape == [-1]
    np.testing.assert_array_equal(evaluate(model, [np.zeros(2, F32)])[0], [0, 0, 1, 1, 1])


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 6), cols=st.integers(1, 6), dynamic=st.booleans())
def test_reshaped_models_compute_what_numpy_does(rows: int, cols: int, dynamic: bool) -> None:
    model = _two_inputs()
    shape = [-1, cols] if dynamic else [rows, cols]
    model.reshape({"x": shape, "y": shape})
    assert model.output(1).partial_shape == [-1 if dynamic else rows]
    rng = np.random.default_rng(rows * 7 + cols)
    x, y = (rng.standard_normal((rows, cols)).astype(F32) for _ in range(2))
    out, total = evaluate(model, [x, y])
    np.testing.assert_allclose(out, np.maximum(x, 0) * y, rtol=1e-6)
    np.testing.assert_allclose(total, x.sum(axis=1), rtol=1e-5, atol=1e-6)
