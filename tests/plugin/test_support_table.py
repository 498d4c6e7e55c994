"""SupportTable: op types x element types x limits, answering query_model with a reason per declined op."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.ops.linear_algebra import matmul
from hetero_sdk.plugin import Limit, SupportTable, get_supported_nodes
from template_plugin.transformations import transform_model


def _table() -> SupportTable:
    table = SupportTable("DEV")
    table.add(["Add", "Relu"], element_types={hs.Type.f32})
    table.add("MatMul", limits=[Limit("transpose_a=True", lambda n: not n.attrs["transpose_a"])])
    table.add("Reshape", element_types={hs.Type.f32})
    return table


def _model(dtype: hs.Type = hs.Type.f32, transpose_a: bool = False) -> hs.Model:
    x = opset.parameter([2, 2], dtype, name="x")
    w = opset.constant(np.ones((2, 2), dtype.numpy), name="w")
    y = opset.relu(opset.add(matmul(x, w, transpose_a=transpose_a, name="mm"), w, name="add"), name="relu")
    return hs.Model([opset.result(y, name="out")], [x], name="m")


def test_every_declared_op_is_claimed_with_no_reasons() -> None:
    answer = _table().query(_model())
    assert answer.supported == {"x", "w", "mm", "add", "relu", "out"}
    assert answer.declined == {}
    assert answer.claims("DEV.1") == dict.fromkeys(["add", "mm", "out", "relu", "w", "x"], "DEV.1")


def test_an_element_type_outside_the_entry_is_declined_naming_the_type_and_port() -> None:
    answer = _table().query(_model(hs.Type.f16))
    assert answer.supported == {"x", "w", "mm"}  # MatMul takes any type, and w feeds it
    assert answer.declined["add"] == "DEV runs Add on f32 only, not f16 (input 0)"
    assert answer.declined["relu"] == "DEV runs Relu on f32 only, not f16 (input 0)"
    assert answer.declined["out"] == "the op it returns, 'relu', is declined"
    assert answer.supported | set(answer.declined) == {"x", "w", "mm", "add", "relu", "out"}


def test_a_failing_limit_declines_with_its_reason() -> None:
    answer = _table().query(_model(transpose_a=True))
    assert answer.declined == {
        "mm": "DEV does not run MatMul with transpose_a=True",
        "x": "every op it feeds is declined",
    }


def test_an_op_type_never_added_is_declined_and_a_constant_feeding_only_it_too() -> None:
    x = opset.parameter([2], name="x")
    c = opset.constant(np.float32([1, 2]), name="c")
    model = hs.Model([opset.result(opset.add(opset.subtract(x, c, name="sub"), x, name="add"), name="o")], [x])
    answer = _table().query(model)
    assert answer.declined == {"sub": "DEV does not run op type Subtract", "c": "every op it feeds is declined"}
    assert answer.supported == {"x", "add", "o"}


def test_inputs_that_decide_shapes_are_not_type_checked() -> None:
    x = opset.parameter([2, 3], name="x")
    flat = opset.reshape(x, opset.constant(np.int64([-1]), name="shape"), False, name="flat")
    model = hs.Model([opset.result(flat, name="o")], [x])
    assert _table().query(model).declined == {}


def test_a_check_function_and_an_in_context_check_give_their_own_reasons() -> None:
    table = SupportTable("DEV").add(["MatMul", "Add", "Relu"], limits=[lambda n: None])
    answer = table.query(_model(), in_context=lambda n: "its B is a Constant" if n.type_name == "MatMul" else None)
    assert answer.declined == {"mm": "its B is a Constant", "x": "every op it feeds is declined"}


def test_reasons_follow_the_fused_names_through_transformations() -> None:
    x = opset.parameter([2, 4], name="x")
    w = opset.constant(np.ones((4, 3), np.float32), name="w")
    b = opset.constant(np.float32([1, 2, 3]), name="b")
    dense = opset.add(matmul(x, w, name="mm"), b, name="add")
    model = hs.Model([opset.result(dense, name="out")], [x])
    table = SupportTable("DEV").add(["MatMul", "Add"])
    answer = table.query(model, transform_model)  # TEMPLATE fuses MatMul+Add into one op
    assert set(answer.declined) == {"x", "w", "b", "mm", "add", "out"}
    assert answer.declined["mm"].startswith("DEV does not run op type TemplateFullyConnected")
    assert "after the device's transformations" in answer.declined["mm"]


@given(st.sets(st.sampled_from(["Add", "Relu", "MatMul"])), st.sampled_from([hs.Type.f32, hs.Type.f16]))
def test_the_table_agrees_with_get_supported_nodes_on_its_predicate(declared: set[str], dtype: hs.Type) -> None:
    table = SupportTable("DEV").add(sorted(declared), element_types={hs.Type.f32})
    model = _model(dtype)
    answer = table.query(model)
    assert answer.supported == get_supported_nodes(model, lambda m: None, table)
    assert answer.supported.isdisjoint(answer.declined)
    assert answer.supported | set(answer.declined) == {n.friendly_name for n in model.get_ops()}
    expected_compute = {"mm": "MatMul", "add": "Add", "relu": "Relu"}
    for name, op_type in expected_compute.items():
        runs = op_type in declared and dtype == hs.Type.f32
        assert (name in answer.supported) == runs


def test_check_raises_naming_every_declined_op() -> None:
    with pytest.raises(UnsupportedOperationError, match=r"DEV\.0 cannot run 2 op\(s\).*'add' \(DEV runs Add on f32"):
        _table().check(_model(hs.Type.f16), "DEV.0")
    _table().check(_model(), "DEV.0")


def test_the_summary_lists_op_types_and_their_types() -> None:
    assert _table().summary() == {"Add": "f32", "MatMul": "any", "Relu": "f32", "Reshape": "f32"}
