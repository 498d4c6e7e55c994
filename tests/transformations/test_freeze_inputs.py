"""FreezeInputs: a model input becomes a constant, constants fold, and an If whose condition became known
is replaced by the body it takes (IfFolding), with the model's names kept."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError, PortNotFoundError
from hetero_sdk.transformations import FreezeInputs, IfFolding, frozen_value
from template_plugin import TemplatePlugin

F32 = np.float32


def _rate_model() -> hs.Model:
    """``y = x * 2`` when ``sr == 16000`` else ``x + 1``, then ``z = y - 3``; the If's then body returns
    its input unchanged as a second output."""
    x = opset.parameter([-1, 3], hs.Type.f32, name="x")
    sr = opset.parameter([], hs.Type.i64, name="sr")
    is_16k = opset.equal(sr, opset.constant(np.array(16000, np.int64)), name="is_16k")

    def body(op: str) -> hs.Model:
        inner = opset.parameter([-1, 3], hs.Type.f32, name="inner_x")
        if op == "mul":
            value = opset.multiply(inner, opset.constant(np.array(2, F32)), name="double")
        else:
            value = opset.add(inner, opset.constant(np.array(1, F32)), name="plus_one")
        kept = opset.convert(inner, hs.Type.f32, name="kept")
        return hs.Model([value, kept], [inner], name=op)

    choose = opset.if_op(is_16k, body("mul"), body("add"), inputs=[x], name="choose")
    choose.output(0).set_names({"y"})
    z = opset.subtract(choose.output(0), opset.constant(np.array(3, F32)), name="z")
    return hs.Model([z.output(0), choose.output(0), choose.output(1)], [x, sr], name="rate")


def _run(model: hs.Model, **feeds: np.ndarray) -> list[np.ndarray]:
    compiled = hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False).compile_model(model, "TEMPLATE")
    results = compiled(feeds)
    return [np.asarray(results[i]) for i in range(len(compiled.outputs))]


@given(rate=st.sampled_from([8000, 16000]), x=st.lists(st.floats(-4, 4, width=32), min_size=3, max_size=9))
@settings(max_examples=10, deadline=None)
def test_freezing_the_rate_gives_what_the_model_computes_with_that_rate(rate: int, x: list[float]) -> None:
    rows = len(x) // 3
    values = np.array(x[: rows * 3], F32).reshape(rows, 3)
    y = values * 2 if rate == 16000 else values + 1
    model = _rate_model()
    assert FreezeInputs({"sr": np.array(rate)}).run(model)
    assert [port.any_name for port in model.inputs] == ["x"]
    assert "If" not in {node.get_type_name() for node in model.get_ops()}
    z, y_out, kept = _run(model, x=values)
    np.testing.assert_allclose(z, y - 3, rtol=1e-6)
    np.testing.assert_allclose(y_out, y, rtol=1e-6)
    np.testing.assert_array_equal(kept, values)


def test_the_inlined_body_keeps_the_models_output_names_and_names_its_nodes_after_the_if() -> None:
    model = _rate_model()
    FreezeInputs({"sr": np.array(16000)}).run(model)
    assert "y" in model.outputs[1].names
    names = {node.friendly_name for node in model.get_ops()}
    assert "choose/double" in names and "choose/plus_one" not in names


def test_an_if_whose_condition_is_not_known_stays() -> None:
    model = _rate_model()
    assert not IfFolding().run(model)
    assert "If" in {node.get_type_name() for node in model.get_ops()}


def test_freezing_refuses_unknown_inputs_and_values_that_do_not_fit() -> None:
    with pytest.raises(PortNotFoundError, match="no input named 'rate'"):
        FreezeInputs({"rate": np.array(1)}).run(_rate_model())
    with pytest.raises(ModelValidationError, match=r"input 'x' has shape \[\?,3\]|input 'x' has shape \[-1,3\]"):
        FreezeInputs({"x": np.zeros((2, 4), F32)}).run(_rate_model())
    assert not FreezeInputs({}).run(_rate_model())


@pytest.mark.parametrize(
    ("value", "element_type", "expected"),
    [
        (np.array(16000), hs.Type.i64, np.array(16000, np.int64)),
        (np.int32(7), hs.Type.i64, np.array(7, np.int64)),
        (np.array(0.1), hs.Type.f32, np.array(0.1, F32)),  # rounding to the input's precision is expected
        (np.array([True, False]), hs.Type.u8, np.array([1, 0], np.uint8)),
        (np.array(3.0), hs.Type.i32, np.array(3, np.int32)),
    ],
)
def test_frozen_values_are_cast_to_the_input_type_when_nothing_is_lost(
    value: np.ndarray, element_type: hs.Type, expected: np.ndarray
) -> None:
    cast = frozen_value(value, element_type, hs.PartialShape([-1] * expected.ndim), "input 'v'")
    assert cast.dtype == expected.dtype
    np.testing.assert_array_equal(cast, expected)


@pytest.mark.parametrize(
    ("value", "element_type"),
    [
        (np.array(3.5), hs.Type.i32),
        (np.array(300), hs.Type.u8),
        (np.array(-1), hs.Type.u32),
        (np.array("a"), hs.Type.f32),
    ],
)
def test_frozen_values_that_would_change_are_refused(value: np.ndarray, element_type: hs.Type) -> None:
    with pytest.raises(ModelValidationError, match=f"input 'v' is {element_type.value}; .*without loss"):
        frozen_value(value, element_type, hs.PartialShape([]), "input 'v'")
