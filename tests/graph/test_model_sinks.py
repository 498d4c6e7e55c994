"""Model sinks and variables: an Assign joins the model through its sinks, each variable pairs one
ReadValue with one Assign of its shape and type, and sinks survive clone and reshape."""

from __future__ import annotations

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import Type, opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.graph import Variable
from hetero_sdk.shape import PartialShape


def accumulator(shape: list[int] | None = None) -> tuple[hs.Model, hs.Node]:
    """x -> sum = acc + x; acc <- sum (the running sum); output sum."""
    shape = shape or [2, 3]
    x = opset.parameter(shape, np.float32, name="x")
    read = opset.read_value(None, "acc", shape, Type.f32, name="read")
    total = opset.add(read, x, name="sum")
    write = opset.assign(total, "acc", name="write")
    return hs.Model([total], [x], "accumulator", sinks=[write]), write


def test_sinks_join_the_model_and_its_order() -> None:
    model, write = accumulator()
    assert model.get_sinks() == [write] and model.is_stateful()
    names = [n.friendly_name for n in model.get_ops()]
    assert names.index("sum") < names.index("write") and "read" in names
    assert model.get_variables() == [Variable("acc", PartialShape([2, 3]), Type.f32)]
    assert [o.any_name for o in model.outputs] == ["sum"]  # an Assign is no output


def test_a_model_without_sinks_is_stateless() -> None:
    x = opset.parameter([2], np.float32, name="x")
    model = hs.Model([opset.relu(x)], [x])
    assert not model.is_stateful() and model.get_sinks() == [] and model.get_variables() == []


def test_an_assign_not_among_the_sinks_is_refused() -> None:
    x = opset.parameter([2], np.float32, name="x")
    read = opset.read_value(None, "v", [2], Type.f32, name="read")
    write = opset.assign(opset.add(read, x), "v", name="write")
    with pytest.raises(ModelValidationError, match="Assign 'write' is not among the model's sinks"):
        hs.Model([write], [x])


def test_a_read_value_without_assign_is_refused() -> None:
    x = opset.parameter([2], np.float32, name="x")
    read = opset.read_value(None, "v", [2], Type.f32, name="read")
    with pytest.raises(ModelValidationError, match="'v' are read by ReadValue 'read' but written by no Assign"):
        hs.Model([opset.add(read, x)], [x])


def test_an_assign_without_read_value_is_refused() -> None:
    x = opset.parameter([2], np.float32, name="x")
    write = opset.assign(x, "lonely", name="write")
    with pytest.raises(ModelValidationError, match="'lonely', which no ReadValue reads"):
        hs.Model([opset.relu(x)], [x], sinks=[write])


@pytest.mark.parametrize(("shape", "dtype"), [([2, 4], np.float32), ([2, 3], np.float16)])
def test_an_assign_of_another_shape_or_type_is_refused(shape: list[int], dtype: type) -> None:
    x = opset.parameter(shape, dtype, name="x")
    read = opset.read_value(None, "v", [2, 3], Type.f32, name="read")
    write = opset.assign(x, "v", name="write")
    with pytest.raises(ModelValidationError, match=r"Assign 'write' writes .* into variable 'v', which is f32\[2,3\]"):
        hs.Model([read], [x], sinks=[write])


def test_two_readers_of_one_variable_are_refused() -> None:
    x = opset.parameter([2], np.float32, name="x")
    one = opset.read_value(None, "v", [2], Type.f32, name="one")
    two = opset.read_value(None, "v", [2], Type.f32, name="two")
    write = opset.assign(opset.add(one, two), "v", name="write")
    with pytest.raises(ModelValidationError, match="variable 'v' has two ReadValue nodes"):
        hs.Model([opset.add(x, one)], [x], sinks=[write])


def test_a_sink_that_is_no_assign_is_refused() -> None:
    x = opset.parameter([2], np.float32, name="x")
    with pytest.raises(ModelValidationError, match="listed as a sink but is not an Assign"):
        hs.Model([x], [x], sinks=[opset.relu(x)])


def test_add_and_remove_sinks() -> None:
    x = opset.parameter([2], np.float32, name="x")
    read = opset.read_value(None, "v", [2], Type.f32, name="read")
    total = opset.add(read, x, name="sum")
    with pytest.raises(ModelValidationError):
        hs.Model([total], [x])
    model = hs.Model([opset.relu(x, name="r")], [x])
    write = opset.assign(opset.multiply(read, 2.0, name="twice"), "v", name="write")
    model.add_sinks([write])
    assert model.get_sinks() == [write] and {"read", "twice"} <= {n.friendly_name for n in model.get_ops()}
    with pytest.raises(ModelValidationError, match="is not one of its sinks; its sinks: write"):
        model.remove_sink(opset.relu(x))
    model.remove_sink(write)
    assert model.get_sinks() == [] and "read" not in {n.friendly_name for n in model.get_ops()}


def test_add_sinks_that_break_the_model_leaves_it_unchanged() -> None:
    model, _ = accumulator()
    orphan = opset.assign(model.get_parameters()[0], "nobody", name="orphan")
    with pytest.raises(ModelValidationError, match="no ReadValue reads"):
        model.add_sinks([orphan])
    assert [s.friendly_name for s in model.get_sinks()] == ["write"]


def test_clone_keeps_sinks_and_variables() -> None:
    model, write = accumulator()
    twin = model.clone()
    assert [s.friendly_name for s in twin.get_sinks()] == ["write"] and twin.get_sinks()[0] is not write
    assert twin.get_variables() == model.get_variables()


def test_reshape_reaches_the_nodes_only_sinks_reach() -> None:
    x = opset.parameter([2, 3], np.float32, name="x")
    read = opset.read_value(None, "v", [-1, 3], Type.f32, name="read")
    write = opset.assign(opset.add(read, x, name="next"), "v", name="write")
    model = hs.Model([opset.relu(x, name="r")], [x], sinks=[write])
    model.reshape([5, 3])
    assert model.get_sinks()[0].get_output_partial_shape(0) == PartialShape([5, 3])


def test_parameters_and_results_are_added_and_removed() -> None:
    x = opset.parameter([2], np.float32, name="x")
    y = opset.parameter([2], np.float32, name="y")
    relu = opset.relu(x, name="r")
    model = hs.Model([relu], [x])
    model.add_parameters([y])
    model.add_results([opset.negative(y, name="n")])
    assert [p.any_name for p in model.inputs] == ["x", "y"] and [p.any_name for p in model.outputs] == ["r", "n"]
    with pytest.raises(ModelValidationError, match="Parameter 'y' is consumed but not among"):
        model.remove_parameter(y)
    assert [p.any_name for p in model.inputs] == ["x", "y"]  # unchanged
    model.remove_result(model.get_results()[1])
    model.remove_parameter(y)
    assert [p.any_name for p in model.inputs] == ["x"] and [p.any_name for p in model.outputs] == ["r"]
    with pytest.raises(ModelValidationError, match="is not one of its results; its results"):
        model.remove_result(opset.result(relu))
