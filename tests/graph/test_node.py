"""Node ports: inputs know the node they belong to, their index and the output they consume."""

from __future__ import annotations

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError


def _matmul() -> tuple[hs.Node, hs.Node, hs.Node]:
    x = opset.parameter([2, -1, 3], hs.Type.f32, name="x")
    w = opset.constant(np.ones((3, 5), np.float16), name="w")
    return x, w, opset.matmul(x, opset.convert(w, hs.Type.f32, name="wf"), name="mm")


def test_inputs_are_ports_in_input_order_that_name_their_node_and_index() -> None:
    _, _, mm = _matmul()
    ports = mm.inputs()
    assert len(ports) == mm.get_input_size() == 2
    assert [p.get_index() for p in ports] == [p.index for p in ports] == [0, 1]
    assert all(p.get_node() is mm and p.node is mm for p in ports)
    assert ports == [mm.input(0), mm.input(1)]
    assert len({mm.input(0), mm.input(0), mm.input(1)}) == 2


def test_an_input_knows_the_output_it_consumes_and_its_type_and_shape() -> None:
    x, _, mm = _matmul()
    first, second = mm.inputs()
    assert first.get_source_output() == x.output(0) == first.source_output
    assert second.get_source_output().get_node().friendly_name == "wf"
    assert [p.get_source_output() for p in mm.inputs()] == mm.input_values()
    assert first.get_element_type() is first.element_type is hs.Type.f32
    assert first.get_partial_shape() == first.partial_shape == [2, -1, 3]
    assert second.get_shape() == second.shape == (3, 5)
    assert second.get_element_type() is hs.Type.f32  # the converted tensor's, not the constant's f16
    with pytest.raises(ValueError, match="dynamic"):
        first.get_shape()


def test_input_index_out_of_range_names_the_node() -> None:
    _, _, mm = _matmul()
    with pytest.raises(IndexError, match=r"MatMul 'mm' has 2 input\(s\); port 2 does not exist"):
        mm.input(2)
    with pytest.raises(IndexError):
        mm.input(-1)
    assert opset.parameter([1], name="p").inputs() == []


def test_replace_source_output_reconnects_the_input() -> None:
    x = opset.parameter([4], hs.Type.f32, name="x")
    y = opset.parameter([4], hs.Type.f32, name="y")
    add = opset.add(x, x, name="add")
    add.input(1).replace_source_output(y.output(0))
    assert add.input_values() == [x.output(0), y.output(0)]
    assert repr(add.input(1)) == "<Input: port 1 of Add 'add' f32[4]>"


def test_an_attribute_the_op_does_not_declare_is_refused_naming_the_node_and_the_known_ones() -> None:
    x, w, _ = _matmul()
    wf = opset.convert(w, hs.Type.f32, name="wf")
    with pytest.raises(ModelValidationError) as info:
        hs.Node("MatMul", [x.output(0), wf.output(0)], {"transposeB": True}, name="mm")
    message = str(info.value)
    assert "MatMul 'mm'" in message and "'transposeB'" in message
    assert "transpose_a, transpose_b" in message and "did you mean transpose_b" in message
