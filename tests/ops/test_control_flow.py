"""If, Loop and Scan: definitions, shape inference, errors, and values against plain Python loops."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate
from hetero_sdk.serialization import model_from_bytes, model_to_bytes

F32, I64 = np.float32, np.int64


def _branches() -> tuple[hs.Model, hs.Model]:
    a = opset.parameter([-1], F32, name="a")
    b = opset.parameter([-1], F32, name="b")
    return (
        hs.Model([opset.multiply(a, 2.0, name="twice")], [a], name="then"),
        hs.Model([opset.negative(b, name="minus")], [b], name="else"),
    )


def _if_model() -> hs.Model:
    cond = opset.parameter([], np.bool_, name="cond")
    x = opset.parameter([3], F32, name="x")
    then_body, else_body = _branches()
    return hs.Model([opset.if_op(cond, then_body, else_body, [x], name="if")], [cond, x], name="choose")


def _counting_loop(trip_count: object, scanned: bool = True) -> tuple[hs.Model, hs.Node]:
    """sum of the iteration numbers, and (scanned) each iteration's square."""
    i = opset.parameter([], I64, name="i")
    go = opset.parameter([], np.bool_, name="go")
    total = opset.parameter([], I64, name="total")
    results = [go, opset.add(total, i, name="next")] + ([opset.multiply(i, i, name="square")] if scanned else [])
    body = hs.Model(results, [i, go, total], name="body")
    node = opset.loop(trip_count, True, body, [np.array(0, I64)], name="loop")
    return body, node


def test_if_runs_the_branch_its_condition_names() -> None:
    model, x = _if_model(), np.array([1.0, -2.0, 3.0], F32)
    np.testing.assert_array_equal(evaluate(model, [np.array(True), x])[0], x * 2)
    np.testing.assert_array_equal(evaluate(model, [np.array(False), x])[0], -x)


def test_if_output_shapes_join_the_branches_and_follow_a_known_condition() -> None:
    x = opset.parameter([3], F32)
    p, q = opset.parameter([3], F32), opset.parameter([3], F32)
    wide = hs.Model([opset.concat([p, p], 0)], [p], name="wide")
    narrow = hs.Model([opset.negative(q)], [q], name="narrow")
    unknown = opset.if_op(opset.parameter([], np.bool_), wide, narrow, [x])
    assert unknown.get_output_partial_shape(0).dims == (-1,)
    known = opset.if_op(opset.constant(np.array(True)), wide.clone(), narrow.clone(), [x])
    assert known.get_output_partial_shape(0).dims == (6,)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda t, e, x: opset.if_op(opset.parameter([2], np.bool_), t, e, [x]), "cond must be a scalar"),
        (lambda t, e, x: opset.if_op(True, t, e, [x, x]), "then_body has 1 Parameter\\(s\\) but receives 2"),
        (
            lambda t, e, x: opset.if_op(True, t, e, [opset.parameter([3], np.int32)]),
            "then_body Parameter 0 \\('a'\\) is f32\\[\\?\\] but receives i32\\[3\\]",
        ),
        (lambda t, e, x: opset.if_op(True, t, x, [x]), "attribute else_body=.* must be a Model"),
    ],
)
def test_if_rejects_bodies_that_do_not_fit(build, message) -> None:
    then_body, else_body = _branches()
    with pytest.raises(ModelValidationError, match=message):
        build(then_body, else_body, opset.parameter([3], F32))


def test_if_branches_must_agree_on_type() -> None:
    p, q = opset.parameter([2], F32), opset.parameter([2], F32)
    floats = hs.Model([opset.negative(p)], [p], name="floats")
    ints = hs.Model([opset.convert(q, np.int32)], [q], name="ints")
    with pytest.raises(ModelValidationError, match="output 0: then_body gives f32\\[2\\], else_body i32\\[2\\]"):
        opset.if_op(opset.parameter([], np.bool_), floats, ints, [opset.parameter([2], F32)], name="bad")


@settings(max_examples=25, deadline=None)
@given(trips=st.integers(-1, 7), limit=st.integers(0, 9))
def test_loop_stops_at_the_trip_count_or_when_the_body_says(trips, limit) -> None:
    i = opset.parameter([], I64, name="i")
    go = opset.parameter([], np.bool_, name="go")
    total = opset.parameter([], I64, name="total")
    keep_going = opset.less(opset.add(i, 1), limit)
    body = hs.Model([keep_going, opset.add(total, i), opset.multiply(i, 3)], [i, go, total], name="body")
    count = opset.parameter([], I64, name="count")
    loop = opset.loop(count, True, body, [np.array(0, I64)], name="loop")
    final, stacked = evaluate(hs.Model(loop.outputs(), [count], name="m"), [np.array(trips, I64)])
    ran, sequence = 0, []
    while trips < 0 or ran < trips:  # the same semantics, in plain Python
        sequence.append(ran * 3)
        ran += 1
        if not ran < limit:
            break
    assert int(final) == sum(range(ran)) and stacked.tolist() == sequence


def test_loop_that_never_starts_gives_its_initial_values_and_empty_stacks() -> None:
    _, node = _counting_loop(np.array(5, I64))
    start = opset.loop(np.array(5, I64), False, node.attrs["body"], [np.array(7, I64)], name="idle")
    final, stacked = evaluate(hs.Model(start.outputs(), [], name="m"), [])
    assert int(final) == 7 and stacked.shape == (0,) and stacked.dtype == I64


def test_loop_stacks_as_many_values_as_iterations_when_only_the_trip_count_ends_it() -> None:
    _, counted = _counting_loop(np.array(4, I64))
    assert [counted.get_output_partial_shape(k).dims for k in range(2)] == [(), (4,)]
    _, unknown = _counting_loop(opset.parameter([], I64))
    assert unknown.get_output_partial_shape(1).dims == (-1,)
    i, go, total = opset.parameter([], I64), opset.parameter([], np.bool_), opset.parameter([], I64)
    stops = hs.Model([opset.less(i, 2), total, i], [i, go, total], name="stops")  # the body may end it early
    early = opset.loop(np.array(4, I64), True, stops, [np.array(0, I64)])
    assert early.get_output_partial_shape(1).dims == (-1,)


def test_loop_rejects_a_body_that_changes_a_carried_type() -> None:
    i, go = opset.parameter([], I64), opset.parameter([], np.bool_)
    total = opset.parameter([], I64)
    body = hs.Model([go, opset.convert(total, F32)], [i, go, total], name="body")
    with pytest.raises(ModelValidationError, match="carried value 0 starts as i64\\[\\] but the body gives f32\\[\\]"):
        opset.loop(3, True, body, [np.array(0, I64)], name="bad")


def test_loop_invariant_inputs_reach_every_iteration() -> None:
    i, go = opset.parameter([], I64), opset.parameter([], np.bool_)
    acc, step = opset.parameter([2], F32), opset.parameter([2], F32)
    body = hs.Model([go, opset.add(acc, step)], [i, go, acc, step], name="body")
    loop = opset.loop(np.array(3, I64), True, body, [np.zeros(2, F32)], [np.array([1.0, 0.5], F32)])
    assert evaluate(hs.Model(loop.outputs(), [], name="m"), [])[0].tolist() == [3.0, 1.5]


@pytest.mark.parametrize("in_direction", [0, 1])
@pytest.mark.parametrize("out_direction", [0, 1])
@pytest.mark.parametrize("axis", [0, 1])
def test_scan_is_a_running_sum_along_its_axis_and_directions(in_direction, out_direction, axis) -> None:
    state, piece = opset.parameter([3], F32), opset.parameter([3], F32)
    total = opset.add(state, piece)
    body = hs.Model([total, total], [state, piece], name="body")
    xs = np.arange(12, dtype=F32).reshape(4, 3)
    data = xs if axis == 0 else xs.T.copy()
    x = opset.parameter(list(data.shape), F32, name="x")
    node = opset.scan(
        body, [np.zeros(3, F32)], [x], scan_input_axes=[axis], scan_input_directions=[in_direction],
        scan_output_axes=[axis], scan_output_directions=[out_direction],
    )  # fmt: skip
    final, stacked = evaluate(hs.Model(node.outputs(), [x], name="m"), [data])
    rows = xs[::-1] if in_direction else xs
    sums = np.cumsum(rows, axis=0)
    expected = sums[::-1] if out_direction else sums
    np.testing.assert_array_equal(final, sums[-1])
    np.testing.assert_array_equal(stacked, expected if axis == 0 else expected.T)
    assert node.get_output_partial_shape(1).dims == data.shape


def test_bodies_round_trip_through_the_model_format_and_clone() -> None:
    model = _if_model()
    x = np.array([1.0, 2.0, 3.0], F32)
    for copy in (model_from_bytes(model_to_bytes(model)), model.clone()):
        node = next(n for n in copy.get_ops() if n.type_name == "If")
        assert node.attrs["then_body"] is not model.get_ops()[-2].attrs["then_body"]
        np.testing.assert_array_equal(evaluate(copy, [np.array(False), x])[0], -x)
    _, loop = _counting_loop(np.array(3, I64))
    again = model_from_bytes(model_to_bytes(hs.Model(loop.outputs(), [], name="m")))
    assert [v.tolist() for v in evaluate(again, [])] == [3, [0, 1, 4]]
