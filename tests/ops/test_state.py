"""ReadValue and Assign: their attributes, their output types and shapes, and the checks of their init."""

from __future__ import annotations

import numpy as np
import pytest

from hetero_sdk import Type, opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.shape import PartialShape


def test_read_value_takes_the_variable_shape_and_type_not_the_init_s() -> None:
    init = opset.parameter([2, 0, 4], np.float32, name="init")
    node = opset.read_value(init, "cache", [2, -1, 4], Type.f32, name="rv")
    assert node.get_type_name() == "ReadValue" and node.version == "opset6"
    assert node.get_output_partial_shape(0) == PartialShape([2, -1, 4])
    assert node.get_output_element_type(0) == Type.f32
    assert node.attrs["variable_id"] == "cache"


def test_read_value_without_shape_or_type_takes_the_init_s() -> None:
    node = opset.read_value(np.ones((3,), np.int32), "v")
    assert (node.attrs["variable_type"], node.attrs["variable_shape"]) == (Type.i32, PartialShape([3]))


def test_read_value_without_init_needs_shape_and_type() -> None:
    node = opset.read_value(None, "v", [2], np.float16)
    assert node.get_input_size() == 0 and node.get_output_element_type(0) == Type.f16
    with pytest.raises(ModelValidationError, match="give variable_shape and variable_type"):
        opset.read_value(None, "v", name="rv")


@pytest.mark.parametrize(
    ("init", "match"),
    [(np.zeros((2, 3), np.float16), "element type f16"), (np.zeros((2, 4), np.float32), r"shape \[2,4\]")],
)
def test_read_value_refuses_an_init_that_does_not_fit_the_variable(init: np.ndarray, match: str) -> None:
    with pytest.raises(ModelValidationError, match=f"ReadValue 'rv'.*{match}.*'acc'"):
        opset.read_value(init, "acc", [2, 3], Type.f32, name="rv")


def test_state_ops_need_a_variable_id() -> None:
    with pytest.raises(ModelValidationError, match="variable_id is empty"):
        opset.read_value(np.zeros(2, np.float32), "")
    with pytest.raises(ModelValidationError, match="variable_id is empty"):
        opset.assign(np.zeros(2, np.float32), "")


def test_assign_passes_its_value_through() -> None:
    node = opset.assign(opset.parameter([-1, 5], np.int64), "v", name="a")
    assert node.get_type_name() == "Assign"
    assert (node.get_output_element_type(0), node.get_output_partial_shape(0)) == (Type.i64, PartialShape([-1, 5]))
