"""If, Loop and Scan on XLA: lax.cond, lax.while_loop and lax.scan give the values plain Python loops
give; what XLA cannot compile with static shapes is declined, and HETERO sends it elsewhere."""

from __future__ import annotations

import hetero_sdk as hs
import numpy as np
import pytest
from hetero_sdk import Model, opset
from hetero_sdk.hetero.plugin import HeteroPlugin
from hypothesis import given, settings
from hypothesis import strategies as st
from template_plugin import TemplatePlugin
from xla_helpers import core, run_xla

from hetero_sdk_jax import XlaPlugin

F32, I64 = np.float32, np.int64


def _branches() -> tuple[Model, Model]:
    a, b = opset.parameter([3], F32), opset.parameter([3], F32)
    return Model([opset.multiply(a, 2.0)], [a], name="then"), Model([opset.exp(b)], [b], name="else")


@pytest.mark.parametrize("flag", [True, False])
def test_if_with_a_runtime_condition_runs_lax_cond(flag: bool) -> None:
    cond, x = opset.parameter([], np.bool_, name="cond"), opset.parameter([3], F32, name="x")
    model = Model([opset.if_op(cond, *_branches(), [x])], [cond, x], name="choose")
    data = np.array([0.5, -1.0, 2.0], F32)
    got = run_xla(model, [np.array(flag), data])[0]
    np.testing.assert_allclose(got, data * 2 if flag else np.exp(data), rtol=1e-6)


@settings(max_examples=10, deadline=None)
@given(trips=st.integers(0, 6), limit=st.integers(1, 8))
def test_loop_without_stacked_outputs_runs_a_while_loop(trips: int, limit: int) -> None:
    i, go, total = opset.parameter([], I64), opset.parameter([], np.bool_), opset.parameter([], F32)
    body = Model(
        [opset.less(opset.add(i, 1), limit), opset.add(total, opset.convert(i, F32))], [i, go, total], name="b"
    )
    count = opset.parameter([], I64, name="count")
    model = Model(opset.loop(count, True, body, [np.array(0.0, F32)]).outputs(), [count], name="m")
    ran = min(trips, limit) if trips else 0
    assert float(run_xla(model, [np.array(trips, I64)])[0]) == sum(range(ran))


def test_loop_with_a_known_count_stacks_through_lax_scan() -> None:
    i, go, acc = opset.parameter([], I64), opset.parameter([], np.bool_), opset.parameter([2], F32)
    step = opset.parameter([2], F32, name="step")
    as_float = opset.convert(i, F32)
    body = Model([go, opset.add(acc, step), opset.multiply(as_float, as_float)], [i, go, acc, step], name="b")
    loop = opset.loop(np.array(5, I64), True, body, [np.zeros(2, F32)], [step])
    model = Model(loop.outputs(), [step], name="m")
    final, squares = run_xla(model, [np.array([1.0, -2.0], F32)])
    assert final.tolist() == [5.0, -10.0] and squares.tolist() == [0.0, 1.0, 4.0, 9.0, 16.0]


def test_loop_whose_stack_length_is_unknown_is_declined_and_hetero_runs_it_on_template() -> None:
    i, go, total = opset.parameter([], I64), opset.parameter([], np.bool_), opset.parameter([], I64)
    body = Model([go, opset.add(total, i), opset.multiply(i, 2)], [i, go, total], name="b")
    count = opset.parameter([], I64, name="count")
    start = opset.parameter([], I64, name="start")  # a traced carried value: the Loop cannot fold
    loop = opset.loop(count, True, body, [start], name="loop")
    model = Model([opset.relu(loop.output(0), name="after"), loop.output(1)], [count, start], name="m")
    the_core = hs.Core(plugins={"XLA": XlaPlugin, "TEMPLATE": TemplatePlugin, "HETERO": HeteroPlugin}, autoload=False)
    assert "loop" not in the_core.query_model(model, "XLA")
    placement = the_core.query_model(model, "HETERO:XLA,TEMPLATE")
    assert placement["loop"] == "TEMPLATE" and placement["after"] == "XLA"
    inputs = {"count": np.array(4, I64), "start": np.array(10, I64)}
    total, doubled = the_core.compile_model(model, "HETERO:XLA,TEMPLATE")(inputs).to_tuple()
    assert int(total) == 16 and doubled.tolist() == [0, 2, 4, 6]


def test_loop_whose_count_is_a_model_input_and_inputs_are_known_runs_per_count() -> None:
    i, go, total = opset.parameter([], I64), opset.parameter([], np.bool_), opset.parameter([], I64)
    body = Model([go, opset.add(total, i), opset.multiply(i, 3)], [i, go, total], name="b")
    count = opset.parameter([], I64, name="count")
    loop = opset.loop(count, True, body, [np.array(0, I64)], name="loop")
    compiled = core().compile_model(Model(loop.outputs(), [count], name="m"), "XLA")
    for trips in (4, 2, 4):
        total, tripled = compiled([np.array(trips, I64)]).to_tuple()
        assert int(total) == sum(range(trips)) and tripled.tolist() == [3 * k for k in range(trips)]
    assert compiled.by_value is not None and compiled.by_value.compile_count == 2


def test_body_ops_xla_cannot_run_decline_the_whole_node() -> None:
    p = opset.parameter([4], F32)
    nonzero = Model([opset.convert(opset.non_zero(p), F32)], [p], name="nz")
    q = opset.parameter([4], F32)
    plain = Model([opset.reshape(q, [1, 4], special_zero=False)], [q], name="plain")
    cond, x = opset.parameter([], np.bool_, name="cond"), opset.parameter([4], F32, name="x")
    model = Model([opset.if_op(cond, nonzero, plain, [x], name="if")], [cond, x], name="m")
    assert "if" not in core().query_model(model, "XLA")


def test_scan_runs_lax_scan_in_both_directions() -> None:
    state, piece = opset.parameter([2], F32), opset.parameter([2], F32)
    total = opset.add(state, piece)
    body = Model([total, opset.multiply(total, 10.0)], [state, piece], name="b")
    xs = opset.parameter([3, 2], F32, name="xs")
    node = opset.scan(body, [np.zeros(2, F32)], [xs], scan_input_directions=[1], scan_output_directions=[1])
    data = np.arange(6, dtype=F32).reshape(3, 2)
    final, stacked = run_xla(Model(node.outputs(), [xs], name="m"), [data])
    sums = np.cumsum(data[::-1], axis=0)
    np.testing.assert_array_equal(final, sums[-1])
    np.testing.assert_array_equal(stacked, (sums * 10)[::-1])
