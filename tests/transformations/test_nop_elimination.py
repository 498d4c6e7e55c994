"""NopElimination: ops that return their input unchanged are removed."""

from __future__ import annotations

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.reference import evaluate
from hetero_sdk.transformations import NopElimination, fused_names, is_nop

X = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5

NOPS = {
    "convert_same_type": lambda r: opset.convert(r, hs.Type.f32),
    "reshape_same_shape": lambda r: opset.reshape(r, np.int64([2, 3]), False),
    "reshape_special_zero": lambda r: opset.reshape(r, np.int64([0, -1]), True),
    "transpose_identity": lambda r: opset.transpose(r, np.int64([0, 1])),
    "squeeze_nothing": lambda r: opset.squeeze(r),
    "tile_ones": lambda r: opset.tile(r, np.int64([1, 1])),
    "broadcast_same": lambda r: opset.broadcast(r, np.int64([2, 3])),
    "concat_single": lambda r: opset.concat([r], 0),
}

NOT_NOPS = {
    "convert_other_type": (lambda r: opset.convert(r, hs.Type.f16), lambda v: v.astype(np.float16)),
    "reshape_other_shape": (lambda r: opset.reshape(r, np.int64([3, 2]), False), lambda v: v.reshape(3, 2)),
    "transpose_swap": (lambda r: opset.transpose(r, np.int64([1, 0])), lambda v: v.T),
    "tile_twice": (lambda r: opset.tile(r, np.int64([1, 2])), lambda v: np.tile(v, (1, 2))),
    "unsqueeze": (lambda r: opset.unsqueeze(r, np.int64([0])), lambda v: v[None]),
}


def _model(build) -> tuple[hs.Model, hs.Node, hs.Node]:
    x = opset.parameter([2, 3], name="x")
    r = opset.relu(x, name="r")
    op = build(r)
    op.friendly_name = "op"
    return hs.Model([opset.negative(op, name="n")], [x]), r, op


@pytest.mark.parametrize("case", sorted(NOPS))
def test_a_no_op_is_removed_and_the_values_stay(case: str) -> None:
    model, relu, op = _model(NOPS[case])
    assert is_nop(op)
    expected = evaluate(model.clone(), [X])[0]
    assert NopElimination().run(model) is True
    assert [n.type_name for n in model.get_ops() if n.type_name not in ("Constant",)] == [
        "Parameter", "Relu", "Negative", "Result",
    ]  # fmt: skip
    np.testing.assert_array_equal(evaluate(model, [X])[0], expected)
    np.testing.assert_array_equal(expected, -np.maximum(X, 0))
    assert fused_names(relu) == {"r", "op"}
    assert NopElimination().run(model) is False


@pytest.mark.parametrize("case", sorted(NOT_NOPS))
def test_an_op_that_changes_its_input_stays(case: str) -> None:
    build, closed_form = NOT_NOPS[case]
    model, _, op = _model(build)
    assert not is_nop(op)
    assert NopElimination().run(model) is False
    np.testing.assert_array_equal(evaluate(model, [X])[0], -closed_form(np.maximum(X, 0)))


def test_a_transpose_with_a_computed_order_stays() -> None:
    x = opset.parameter([2, 3], name="x")
    order = opset.parameter([2], hs.Type.i64, name="order")
    model = hs.Model([opset.transpose(x, order)], [x, order])
    assert NopElimination().run(model) is False


def test_a_reshape_of_a_dynamic_shape_stays() -> None:
    x = opset.parameter([-1, 3], name="x")
    model = hs.Model([opset.negative(opset.reshape(x, np.int64([0, 3]), True))], [x])
    assert NopElimination().run(model) is False


def test_chained_no_ops_all_go_in_one_run() -> None:
    x = opset.parameter([2, 3], name="x")
    r = opset.relu(x, name="r")
    chain = opset.convert(opset.transpose(opset.convert(r, hs.Type.f32, name="c1"), np.int64([0, 1]), name="t"), "f32")
    chain.friendly_name = "c2"
    model = hs.Model([opset.negative(chain, name="n")], [x])
    assert NopElimination().run(model)
    assert fused_names(r) == {"r", "c1", "t", "c2"}
    np.testing.assert_array_equal(evaluate(model, [X])[0], -np.maximum(X, 0))


def test_a_no_op_read_by_a_result_keeps_the_models_output_name() -> None:
    x = opset.parameter([2, 3], name="x")
    y = opset.convert(opset.relu(x, name="r"), hs.Type.f32, name="y")
    model = hs.Model([y], [x])
    assert NopElimination().run(model)
    assert model.outputs[0].names == {"y"}
    np.testing.assert_array_equal(evaluate(model, {"x": X})[0], np.maximum(X, 0))


def test_a_no_op_between_a_parameter_and_a_result_stays_so_both_names_survive() -> None:
    x = opset.parameter([2, 3], name="x")
    model = hs.Model([opset.convert(x, hs.Type.f32, name="y")], [x])
    assert NopElimination().run(model) is False
    assert model.inputs[0].names == {"x"} and model.outputs[0].names == {"y"}
