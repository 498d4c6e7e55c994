"""hs.Type.string: its properties, the dtypes that name it, and what converts to it."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

import hetero_sdk as hs
from hetero_sdk.element_type import as_strings

S = np.dtypes.StringDType()


def test_string_is_text_not_a_number() -> None:
    t = hs.Type.string
    assert t.get_type_name() == "string" and str(t) == "string"
    assert t.is_string and not (t.is_real or t.is_integral or t.is_signed)
    assert t.numpy == S
    assert not any(other.is_string for other in hs.Type if other is not t)


@pytest.mark.parametrize("name", ["string", S, np.dtypes.StringDType(na_object=None), "<U3", np.str_])
def test_string_dtypes_and_the_name_give_the_string_type(name: object) -> None:
    assert hs.Type.of(name) is hs.Type.string


def test_text_converts_and_other_values_do_not() -> None:
    assert as_strings(np.array(["a", "é"])).dtype == S
    assert as_strings(np.array(["a", ""], object)).tolist() == ["a", ""]
    assert as_strings(["x", "y"]).tolist() == ["x", "y"]
    kept = np.array(["z"], S)
    assert as_strings(kept) is kept
    assert as_strings(np.array([b"a"], object)) is None
    assert as_strings(np.array(["a", 1], object)) is None
    assert as_strings(np.array([1.5])) is None


def test_parameters_constants_and_results_of_strings() -> None:
    x = hs.opset.parameter([2, -1], hs.Type.string, name="x")
    c = hs.opset.constant(np.array([["p"], ["q"]], S))
    model = hs.Model([hs.opset.concat([x, c], 1)], [x])
    assert model.outputs[0].element_type is hs.Type.string
    assert str(model.outputs[0].partial_shape) == str(hs.PartialShape([2, -1]))
    got = hs.Core().compile_model(model, "TEMPLATE")({"x": np.array([["a", "b"], ["", "ü"]])})[0]
    assert got.dtype == S and got.tolist() == [["a", "b", "p"], ["", "ü", "q"]]


@pytest.mark.parametrize(
    ("attribute", "value", "expected"), [("value_string", "hé", "hé"), ("value_strings", ["a", ""], ["a", ""])]
)
def test_onnx_constants_of_strings(attribute: str, value: object, expected: object) -> None:
    node = helper.make_node("Constant", [], ["y"], **{attribute: value})
    rank = 0 if isinstance(value, str) else 1
    graph = helper.make_graph(
        [node], "g", [], [helper.make_tensor_value_info("y", onnx.TensorProto.STRING, [None] * rank)]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    assert hs.Core().compile_model(hs.convert_model(model), "TEMPLATE")({})[0].tolist() == expected


def test_the_cli_fills_string_inputs_with_digits_as_text() -> None:
    from hetero_sdk.cli.models import random_inputs

    x = hs.opset.parameter([4], hs.Type.string, name="x")
    drawn = random_inputs(hs.Model([hs.opset.string_concat(x, x)], [x]), seed=3)["x"]
    assert drawn.dtype == S and drawn.shape == (4,)
    assert all(len(v) == 1 and v.isdigit() for v in drawn.tolist())
