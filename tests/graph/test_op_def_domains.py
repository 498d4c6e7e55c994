"""Declared attribute domains: an attribute's range (``minimum``, ``maximum``) and the axes it names of
an input (``axis_of``) are checked by the op definition for every node, with a ModelValidationError
naming the node, the attribute and its value."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import INT, INTS, Attr, Input, OpDef

_PROBE = OpDef(
    "DomainProbe",
    "test",
    lambda node: [(node.input_value(0).element_type, node.input_value(0).partial_shape)],
    inputs=(Input("x"),),
    attrs=(
        Attr("count", INT, 1, minimum=1, maximum=8),
        Attr("axes", INTS, [], axis_of=0),
        Attr("new_axis", INT, 0, axis_of=0, axis_extra=1),
    ),
)


def _probe(rank: int, **attrs: object) -> Node:
    return Node(_PROBE, [opset.parameter([2] * rank, Type.f32).output(0)], dict(attrs))


@given(count=st.integers(-(2**63), 2**63 - 1).filter(lambda v: not 1 <= v <= 8))
def test_a_value_outside_the_declared_range_is_refused(count: int) -> None:
    with pytest.raises(
        ModelValidationError, match=rf"DomainProbe .*attribute count={count} is outside its domain 1..8"
    ):
        _probe(2, count=count)


@given(rank=st.integers(0, 4), axis=st.integers(-10, 10))
def test_an_axis_is_checked_against_the_inputs_rank(rank: int, axis: int) -> None:
    if -rank <= axis < rank:
        _probe(rank, axes=[axis])
        return
    with pytest.raises(
        ModelValidationError, match=rf"attribute axes=\[{axis}\]: axis {axis} is out of range for rank {rank}"
    ):
        _probe(rank, axes=[axis])


def test_an_axis_of_the_output_counts_the_added_dimension() -> None:
    _probe(2, new_axis=2)
    with pytest.raises(ModelValidationError, match=r"new_axis=3: axis 3 is out of range for rank 3"):
        _probe(2, new_axis=3)


@pytest.mark.parametrize(
    "build",
    [
        lambda x: opset.softmax(x, axis=2),
        lambda x: opset.concat([x, x], -3),
        lambda x: opset.gather_elements(x, opset.constant(np.zeros((2, 3), np.int64)), axis=2**62),
        lambda x: opset.reverse_sequence(x, opset.constant(np.array([1, 1], np.int64)), batch_axis=0, seq_axis=2),
    ],
)
def test_the_opsets_axes_are_declared(build: object) -> None:
    x = opset.parameter([2, 3], Type.f32)
    with pytest.raises(ModelValidationError, match=r"attribute \w+=.*out of range for rank 2"):
        build(x)  # type: ignore[operator]
