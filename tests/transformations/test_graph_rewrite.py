"""Rewiring helpers: uses move, names and records stay stable."""

from __future__ import annotations

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate
from hetero_sdk.transformations import (
    ConsumerMap,
    copy_runtime_info,
    eliminate_node,
    fused_names,
    replace_node,
    replace_output,
    set_fused_names,
)

X = np.array([[-1.5, 2.0, 0.25]], np.float32)


def _live_uses(model: hs.Model) -> dict[tuple[int, int], list[tuple[int, int]]]:
    return {
        (id(port.node), port.index): sorted((id(n), i) for n, i in uses) for port, uses in model.consumers().items()
    }


def test_replace_output_moves_every_use_results_included() -> None:
    x = opset.parameter([1, 3], name="x")
    a = opset.relu(x, name="a")
    b = opset.negative(a, name="b")
    c = opset.exp(a, name="c")
    model = hs.Model([b, c, a], [x])
    replacement = opset.abs(x, name="abs")
    assert replace_output(model, a.output(0), replacement.output(0)) == 3
    assert a not in model.get_ops()
    negative, exponential, same = evaluate(model, [X])
    np.testing.assert_allclose(negative, -np.abs(X))
    np.testing.assert_allclose(exponential, np.exp(np.abs(X)), rtol=1e-6)
    np.testing.assert_allclose(same, np.abs(X))


def test_replace_node_keeps_the_friendly_name_tensor_names_and_records_the_pattern() -> None:
    x = opset.parameter([1, 3], name="x")
    first = opset.negative(x, name="first")
    last = opset.negative(first, name="last")
    last.output(0).set_names({"y", "y_alias"})
    set_fused_names(first, ["older_a", "older_b"])
    model = hs.Model([opset.exp(last, name="e"), last], [x])
    fused = opset.convert(x, hs.Type.f32)
    replace_node(model, last, fused, fused=[first])
    assert fused.friendly_name == "last"
    assert fused.output(0).names == {"y", "y_alias"}
    assert model.output(1).names == {"y", "y_alias"}
    assert fused_names(fused) == {"older_a", "older_b", "last"}
    results = {r.friendly_name for r in model.get_results()}
    assert {n.friendly_name for n in model.get_ops()} - results == {"x", "last", "e"}
    exp_value, same = evaluate(model, [X])
    np.testing.assert_allclose(same, X)
    np.testing.assert_allclose(exp_value, np.exp(X), rtol=1e-6)


def test_replace_node_with_ports_records_on_their_producers() -> None:
    x = opset.parameter([1, 3], name="x")
    r = opset.relu(x, name="r")
    n = opset.negative(r, name="n")
    model = hs.Model([n], [x])
    replace_node(model, n, [r.output(0)])
    assert fused_names(r) == {"r", "n"}
    np.testing.assert_allclose(evaluate(model, [X])[0], np.maximum(X, 0))


def test_replace_node_rejects_a_replacement_with_the_wrong_number_of_outputs() -> None:
    x = opset.parameter([4], name="x")
    split = opset.split(x, 0, 2, name="sp")
    model = hs.Model([split.output(0), split.output(1)], [x])
    with pytest.raises(ModelValidationError, match="Split 'sp'"):
        replace_node(model, split, [x.output(0)])


def test_eliminate_node_absorbs_the_record_into_the_producer() -> None:
    x = opset.parameter([1, 3], name="x")
    r = opset.relu(x, name="r")
    c = opset.convert(r, hs.Type.f32, name="c")
    model = hs.Model([opset.negative(c, name="n")], [x])
    assert eliminate_node(model, c, r.output(0))
    assert fused_names(r) == {"r", "c"}
    assert c not in model.get_ops()
    np.testing.assert_allclose(evaluate(model, [X])[0], -np.maximum(X, 0))


def test_eliminating_a_node_read_by_a_result_keeps_the_output_name() -> None:
    x = opset.parameter([1, 3], name="x")
    r = opset.relu(x, name="r")
    c = opset.convert(r, hs.Type.f32, name="y")
    model = hs.Model([c], [x])
    assert eliminate_node(model, c, r.output(0))
    assert model.outputs[0].names == {"y"}
    assert model.output("y").node is model.get_results()[0]


def test_eliminating_a_node_between_a_parameter_and_a_result_is_refused() -> None:
    x = opset.parameter([1, 3], name="x")
    c = opset.convert(x, hs.Type.f32, name="y")
    model = hs.Model([c], [x])
    assert not eliminate_node(model, c, x.output(0))
    assert c in model.get_ops()
    assert model.inputs[0].names == {"x"} and model.outputs[0].names == {"y"}


def test_eliminating_into_a_tensor_that_is_already_a_model_output_is_refused() -> None:
    x = opset.parameter([1, 3], name="x")
    r = opset.relu(x, name="r")
    c = opset.convert(r, hs.Type.f32, name="y")
    model = hs.Model([c, r], [x])
    assert not eliminate_node(model, c, r.output(0))
    assert [sorted(o.names) for o in model.outputs] == [["y"], ["r"]]


def test_parameter_names_never_grow_when_a_consumer_is_eliminated() -> None:
    x = opset.parameter([1, 3], name="x")
    c = opset.convert(x, hs.Type.f32, name="c")
    model = hs.Model([opset.negative(c, name="n")], [x])
    assert eliminate_node(model, c, x.output(0))
    assert model.inputs[0].names == {"x"}


def test_copy_runtime_info_keeps_agreed_keys_and_drops_conflicts() -> None:
    x = opset.parameter([2], name="x")
    a, b = opset.relu(x, name="a"), opset.relu(x, name="b")
    a.get_rt_info().update({"affinity": "TEMPLATE", "note": 1, "only_a": True, "fused_names": ["q"]})
    b.get_rt_info().update({"affinity": "TEMPLATE", "note": 2})
    target = opset.relu(x, name="t")
    copy_runtime_info([a, b], target)
    assert target.get_rt_info() == {"affinity": "TEMPLATE"}


def test_consumer_map_stays_equal_to_a_fresh_walk_through_rewrites() -> None:
    x = opset.parameter([1, 3], name="x")
    a = opset.relu(x, name="a")
    b = opset.negative(a, name="b")
    c = opset.add(a, b, name="c")
    model = hs.Model([c], [x])
    users = ConsumerMap(model)
    fused = opset.abs(x)
    replace_node(model, b, fused, fused=[], consumers=users)
    assert eliminate_node(model, a, x.output(0), users) is True
    fresh = _live_uses(model)
    tracked = {
        (id(port.node), port.index): sorted((id(n), i) for n, i in users.of(port))
        for port in (o for node in model.get_ops() for o in node.outputs())
    }
    assert {k: v for k, v in tracked.items() if v} == {k: v for k, v in fresh.items() if v}
    np.testing.assert_allclose(evaluate(model, [X])[0], X + np.abs(X))


def test_a_model_outputs_names_never_grow_when_a_consumer_is_eliminated() -> None:
    x = opset.parameter([1, 3], name="x")
    r = opset.relu(x, name="r")
    c = opset.convert(r, hs.Type.f32, name="c")
    model = hs.Model([opset.negative(c, name="n"), r], [x])
    assert eliminate_node(model, c, r.output(0))
    assert [sorted(o.names) for o in model.outputs] == [["n"], ["r"]]
