"""Model: topological order, structural validation (cycles, dangling Parameters, names), clone, tensor names."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate


def diamond() -> tuple[hs.Model, dict[str, hs.Node]]:
    """x -> (a = relu, b = exp) -> c = a + b -> out; y -> d = c * y."""
    x = opset.parameter([2, 3], hs.Type.f32, name="x")
    y = opset.parameter([3], hs.Type.f32, name="y")
    a = opset.relu(x, name="a")
    b = opset.exp(x, name="b")
    c = opset.add(a, b, name="c")
    d = opset.multiply(c, y, name="d")
    model = hs.Model([c, d], [x, y], name="diamond")
    return model, {n.friendly_name: n for n in (x, y, a, b, c, d)}


def assert_topological(model: hs.Model) -> None:
    ops = model.get_ops()
    position = {id(n): i for i, n in enumerate(ops)}
    assert len(position) == len(ops), "a node is listed twice"
    for node in ops:
        for source in node.input_values():
            assert position[id(source.node)] < position[id(node)], f"{node.friendly_name} before its input"


def test_ops_come_in_topological_order_with_parameters_first() -> None:
    model, nodes = diamond()
    ops = model.get_ops()
    assert_topological(model)
    assert [n.friendly_name for n in ops[:2]] == ["x", "y"]
    assert {n.friendly_name for n in ops} >= set(nodes)
    assert sum(n.type_name == "Result" for n in ops) == 2
    assert model.get_ordered_ops() == ops
    assert model.get_parameters() == [nodes["x"], nodes["y"]]
    assert [r.input_value(0).node for r in model.get_results()] == [nodes["c"], nodes["d"]]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), min_size=1, max_size=25), st.integers(1, 3))
def test_random_dags_are_ordered_and_evaluate_like_numpy(edges: list[tuple[int, int]], outputs: int) -> None:
    params = [opset.parameter([2], hs.Type.f32, name=f"p{i}") for i in range(3)]
    nodes: list[hs.Node] = list(params)
    values = [np.array([1.0, 2.0], np.float32), np.array([0.5, -1.0], np.float32), np.array([3.0, 0.25], np.float32)]
    expected = list(values)
    for i, (left, right) in enumerate(edges):
        a, b = left % len(nodes), right % len(nodes)
        nodes.append(opset.add(nodes[a], nodes[b], name=f"n{i}"))
        expected.append(expected[a] + expected[b])
    model = hs.Model(nodes[-outputs:], params)
    assert_topological(model)
    for got, want in zip(evaluate(model, values), expected[-outputs:]):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_cycle_is_reported_with_the_nodes_on_it() -> None:
    x = opset.parameter([2], name="x")
    a = opset.relu(x, name="a")
    b = opset.sigmoid(a, name="b")
    c = opset.tanh(b, name="c")
    a.set_input(0, c.output(0))
    with pytest.raises(ModelValidationError, match="cycle through c -> b -> a -> c") as info:
        hs.Model([c], [x])
    assert "DAG" in str(info.value)


def test_a_cycle_made_after_construction_is_caught_by_validate() -> None:
    model, nodes = diamond()
    nodes["a"].set_input(0, nodes["c"].output(0))
    with pytest.raises(ModelValidationError, match=r"cycle through .*\ba\b.*\bc\b|cycle through .*\bc\b.*\ba\b"):
        model.validate()


def test_a_consumed_parameter_must_be_listed() -> None:
    x = opset.parameter([2], name="x")
    z = opset.parameter([2], name="z")
    with pytest.raises(ModelValidationError, match="Parameter 'z' is consumed but not among the model's parameters"):
        hs.Model([opset.add(x, z)], [x], name="m")


def test_listed_parameters_must_be_parameter_nodes() -> None:
    x = opset.parameter([2], name="x")
    r = opset.relu(x, name="r")
    with pytest.raises(
        ModelValidationError, match=r"model 'm': .*'r'.* is listed as a parameter but is not a Parameter"
    ):
        hs.Model([r], [x, r], name="m")


def test_a_parameter_listed_twice_is_refused_naming_it() -> None:
    x = opset.parameter([2], name="x")
    with pytest.raises(ModelValidationError, match=r"model 'm': Parameter 'x' is listed twice"):
        hs.Model([opset.relu(x)], [x, x], name="m")


def test_an_unused_listed_parameter_is_kept_first() -> None:
    x = opset.parameter([2], name="x")
    unused = opset.parameter([5], name="unused")
    model = hs.Model([opset.relu(x)], [x, unused])
    assert [n.friendly_name for n in model.get_ops()[:2]] == ["x", "unused"]
    assert [p.any_name for p in model.inputs] == ["x", "unused"]


def test_friendly_names_must_be_unique() -> None:
    x = opset.parameter([2], name="x")
    first = opset.relu(x, name="same")
    second = opset.exp(first, name="same")
    with pytest.raises(ModelValidationError, match="two nodes are named 'same' \\(Relu and Exp\\)"):
        hs.Model([second], [x], name="m")


def _generated_number(node: hs.Node) -> int:
    type_name, _, number = node.friendly_name.rpartition("_")
    assert type_name == node.get_type_name() and number.isdigit(), node.friendly_name
    return int(number)


def test_a_generated_name_that_a_given_name_takes_is_generated_anew() -> None:
    x = opset.parameter([1, 4], name="x")
    r0 = opset.relu(x)
    taken = f"Relu_{_generated_number(r0) + 1}"  # the name the next Relu built without one gets
    a = opset.relu(r0, name=taken)
    b = opset.relu(a)
    assert b.friendly_name == taken  # the collision the model must resolve

    model = hs.Model([b], [x], name="m")
    names = [n.friendly_name for n in model.get_ops()]
    assert len(names) == len(set(names))
    assert a.friendly_name == taken  # a given name never changes
    assert b.friendly_name not in {taken, r0.friendly_name, "x"}
    assert b.friendly_name.startswith("Relu_")
    assert model.output(0).get_node().input_value(0).node is b
    np.testing.assert_array_equal(
        evaluate(model, {"x": np.array([[-1, 2, -3, 4]], np.float32)})[0], np.array([[0, 2, 0, 4]], np.float32)
    )


def test_a_name_set_later_counts_as_given() -> None:
    x = opset.parameter([2], name="x")
    first = opset.relu(x)
    second = opset.exp(first)
    generated = first.friendly_name
    second.set_friendly_name(generated)
    hs.Model([second], [x], name="m")
    assert second.friendly_name == generated and first.friendly_name != generated
    first.friendly_name = generated
    with pytest.raises(ModelValidationError, match=f"two nodes are named '{generated}' \\(Relu and Exp\\)"):
        hs.Model([second], [x], name="m")


def test_a_clone_keeps_generated_names_generated() -> None:
    x = opset.parameter([2], name="x")
    auto = opset.relu(x)
    clone = hs.Model([auto], [x], name="m").clone()
    twin = clone.get_ops()[1]
    assert twin.friendly_name == auto.friendly_name
    mixed = hs.Model([opset.exp(twin, name=auto.friendly_name)], [clone.get_parameters()[0]], name="mixed")
    assert [n.friendly_name for n in mixed.get_ops()][2] == auto.friendly_name
    assert twin.friendly_name != auto.friendly_name


def test_clone_is_deep() -> None:
    model, nodes = diamond()
    model.get_rt_info()["precision"] = ["f32"]
    nodes["a"].get_rt_info()["affinity"] = "TEMPLATE"
    nodes["b"].output(0).set_names({"b_tensor"})
    clone = model.clone()
    by_name = {n.friendly_name: n for n in clone.get_ops()}

    assert clone.friendly_name == "diamond"
    assert [n.friendly_name for n in clone.get_ops()] == [n.friendly_name for n in model.get_ops()]
    assert all(id(n) not in {id(o) for o in model.get_ops()} for n in clone.get_ops())
    assert by_name["a"].get_rt_info() == {"affinity": "TEMPLATE"}
    assert by_name["b"].output(0).names == {"b_tensor"}
    assert clone.get_rt_info() == {"precision": ["f32"]}

    by_name["a"].get_rt_info()["affinity"] = "XLA"
    by_name["b"].output(0).set_names({"renamed"})
    by_name["c"].set_friendly_name("c2")
    clone.get_rt_info()["precision"].append("f16")
    assert nodes["a"].get_rt_info() == {"affinity": "TEMPLATE"}
    assert nodes["b"].output(0).names == {"b_tensor"}
    assert nodes["c"].friendly_name == "c"
    assert model.get_rt_info() == {"precision": ["f32"]}

    inputs = {"x": np.array([[-1, 0, 2], [3, -4, 5]], np.float32), "y": np.array([1, 2, 3], np.float32)}
    for got, want in zip(evaluate(clone, inputs), evaluate(model, inputs)):
        np.testing.assert_array_equal(got, want)


def test_clone_copies_attributes_and_shares_read_only_constants() -> None:
    x = opset.parameter([1, 1, 2, 2], name="x")
    weights = opset.constant(np.ones((2, 2), np.float32), name="w")
    node = opset.interpolate(x, np.array([4, 4]), "nearest", "sizes", axes=np.array([2, 3]), name="up")
    model = hs.Model([node, opset.add(x, weights, name="sum")], [x])
    clone = model.clone()
    twin = {n.friendly_name: n for n in clone.get_ops()}
    twin["up"].attrs["pads_begin"].append(1)
    assert node.attrs["pads_begin"] == [0]
    assert twin["w"].attrs["value"] is weights.attrs["value"]


def test_tensor_names() -> None:
    x = opset.parameter([2, 5], name="x")
    top = opset.topk(x, 2, 1, "max", "value", name="top")
    assert top.output(0).names == {"top"}
    assert top.output(1).names == {"top:1"}
    top.output(1).set_names({"indices", "idx"})
    assert top.output(1).any_name == "idx"
    model = hs.Model(top.outputs(), [x])
    assert [o.names for o in model.outputs] == [{"top"}, {"indices", "idx"}]
    assert model.output("indices") == model.outputs[1]
    assert model.output("top").get_node().type_name == "Result"


def test_a_port_without_names_is_refused_by_any_name_and_still_runs_by_index() -> None:
    x = opset.parameter([2], name="x")
    model = hs.Model([opset.relu(x, name="y")], [x])
    x.output(0).set_names([])
    with pytest.raises(ModelValidationError, match="port 0 of Parameter 'x' has no tensor names"):
        model.inputs[0].get_any_name()
    assert "no names" in repr(model.inputs[0])
    assert evaluate(model, [np.array([-1.0, 2.0], np.float32)])[0].tolist() == [0.0, 2.0]


def test_inputs_and_outputs_by_name_and_index() -> None:
    model, nodes = diamond()
    assert model.input() == nodes["x"].output(0)
    assert model.input("y") == model.input(1) == model.input(-1) == nodes["y"].output(0)
    assert model.output(0).names == {"c"}
    assert model.output("d") == model.output(1)
    assert model.output("d").partial_shape == [2, 3]
    with pytest.raises(KeyError, match="model 'diamond' has no input named 'z'; inputs: x, y"):
        model.input("z")
    with pytest.raises(IndexError, match="model 'diamond' has 2 output\\(s\\); index 2 does not exist"):
        model.output(2)


def test_consumers_and_dynamism() -> None:
    model, nodes = diamond()
    users = model.consumers()
    assert sorted(n.friendly_name for n, _ in users[nodes["x"].output(0)]) == ["a", "b"]
    assert [(n.friendly_name, i) for n, i in users[nodes["y"].output(0)]] == [("d", 1)]
    assert not model.is_dynamic()
    dynamic = opset.parameter([-1, 3], name="x")
    assert hs.Model([opset.relu(dynamic)], [dynamic]).is_dynamic()
