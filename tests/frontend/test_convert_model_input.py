"""``convert_model(model, input=...)`` takes what OpenVINO's ``input=`` takes: names, shapes, element types
and values, as a shape, a dict, tuples, lists or text. A value freezes its input: the input leaves the
model, and an ``If`` it decides becomes its branch, so a branch that could not be built is never built.
Bad forms are refused with a typed error naming the input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx import TensorProto, helper
from onnx_models import FEW, conv_relu_model, graph_model, run_ort, value_info

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.frontend.input_spec import InputSpec, parse_input
from template_plugin import TemplatePlugin

F32, I64 = np.float32, np.int64


def _run(model: hs.Model, **feeds: np.ndarray) -> dict[str, np.ndarray]:
    compiled = hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False).compile_model(model, "TEMPLATE")
    results = compiled(feeds)
    return {port.any_name: np.asarray(results[port]) for port in compiled.outputs}


def _rate_model() -> Any:
    """``y = x * 2`` when ``sr == 16000``, else ``x`` flattened (a rank-1 branch: its rank differs)."""
    then_branch = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["doubled"])],
        "then",
        [],
        [helper.make_tensor_value_info("doubled", TensorProto.FLOAT, ["n", 3])],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Reshape", ["x", "flat"], ["flattened"])],
        "else",
        [],
        [helper.make_tensor_value_info("flattened", TensorProto.FLOAT, ["m"])],
    )
    nodes = [
        helper.make_node("Equal", ["sr", "rate"], ["is_16k"]),
        helper.make_node("If", ["is_16k"], ["y"], then_branch=then_branch, else_branch=else_branch),
    ]
    initializers: dict[str, np.ndarray] = {
        "two": np.array(2, F32),
        "rate": np.array(16000, I64),
        "flat": np.array([-1], I64),
    }
    inputs = [value_info("x", F32, ["n", 3]), value_info("sr", I64, [])]
    return graph_model(nodes, inputs, [value_info("y", F32, ["n", 3])], 17, initializers, full_check=False)


# -- freezing ------------------------------------------------------------------------------------------------


def test_a_frozen_value_makes_the_input_a_constant_and_the_if_its_branch() -> None:
    model = _rate_model()
    assert str(hs.convert_model(model).outputs[0].partial_shape) == "[...]"  # rank 2 or 1, by the rate
    frozen = hs.convert_model(model, input={"sr": np.array(16000)})
    assert [port.any_name for port in frozen.inputs] == ["x"]
    assert frozen.outputs[0].partial_shape == hs.PartialShape([-1, 3])
    assert {node.get_type_name() for node in frozen.get_ops()} == {"Parameter", "Constant", "Multiply", "Result"}
    x = np.arange(6, dtype=F32).reshape(2, 3)
    np.testing.assert_array_equal(_run(frozen, x=x)["y"], x * 2)
    np.testing.assert_array_equal(run_ort(model, {"x": x, "sr": np.array(16000)})[0], x * 2)


@given(rate=st.sampled_from([8000, 16000, 22050]), rows=st.integers(1, 4))
@FEW
def test_the_branch_frozen_in_is_the_one_onnx_runtime_takes(rate: int, rows: int) -> None:
    model = _rate_model()
    x = np.random.default_rng(rows).standard_normal((rows, 3)).astype(F32)
    frozen = hs.convert_model(model, input={"sr": np.int64(rate)})
    np.testing.assert_array_equal(_run(frozen, x=x)["y"], run_ort(model, {"x": x, "sr": np.array(rate)})[0])


@pytest.mark.parametrize(
    "form",
    [
        {"sr": np.array(16000)},
        {"sr": np.array(16000, np.int32)},  # cast to the input's i64: nothing is lost
        {"sr": ([], np.array(16000))},
        [("sr", np.array(16000))],
        ("sr", np.int64(16000)),
        "sr->16000",
        "sr[]{i64}->16000",
        "x[2,3],sr->16000",
    ],
)
def test_every_form_of_a_frozen_value_freezes_it(form: Any) -> None:
    frozen = hs.convert_model(_rate_model(), input=form)
    assert [port.any_name for port in frozen.inputs] == ["x"]
    x = np.ones((2, 3), F32)
    np.testing.assert_array_equal(_run(frozen, x=x)["y"], x * 2)


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"sr": 16000}, r"input 'sr' is given the Python int 16000.*np.array\(16000\).*\[16000\]"),
        ({"sr": np.array(16000.5)}, r"input 'sr' is i64; the value given to freeze it is float64"),
        ({"sr": np.array([16000, 8000])}, r"input 'sr' has shape \[\]; the value given to freeze it has shape \[2\]"),
        ({"sr": ([1], np.array(16000))}, r"input 'sr' is given the shape \[1\] and a value of shape \[\]"),
        ({"sr": np.array(70000, np.uint64), "rate": np.array(1)}, r"no input named rate; the inputs: x, sr"),
        ({"srr": np.array(1)}, r"no input named srr.*did you mean sr\?"),
        ({"sr": ("f32", "i64")}, r"input 'sr' is given two element_types"),
        ({"sr": "[1,x]"}, r"dimension 'x' in '\[1,x\]' is not a size"),
        ({"x": [1.5, 3]}, r"input 'x' has \[1.5, 3\], which is neither a shape"),
        ("x[1..4,3]", r"takes no ranges"),
        ("sr->sixteen", r"cannot read the value 'sixteen'"),
        ("[2,3],sr->1", r"mixes an entry without an input name"),
        ([[2, 3], [], [1]], r"gives 3 unnamed entries for 2 input\(s\) \(x, sr\)"),
        (3.5, r"input= cannot be a float"),
    ],
)
def test_bad_input_forms_are_refused_naming_the_input(form: Any, message: str) -> None:
    with pytest.raises(ModelValidationError, match=message):
        hs.convert_model(_rate_model(), input=form)


# -- shapes and types ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "form",
    [
        [2, 3, 8, 8],
        (2, 3, 8, 8),
        hs.PartialShape([2, 3, 8, 8]),
        {"x": [2, 3, 8, 8]},
        {"x": hs.PartialShape([2, 3, 8, 8])},
        [("x", [2, 3, 8, 8])],
        ("x", [2, 3, 8, 8], np.float32),
        [[2, 3, 8, 8]],
        "x[2,3,8,8]",
        "[2,3,8,8]",
        {"x": "[2,3,8,8]"},
    ],
)
def test_every_form_of_a_shape_sets_it(form: Any) -> None:
    model, _ = conv_relu_model()
    converted = hs.convert_model(model, input=form)
    assert converted.inputs[0].partial_shape == hs.PartialShape([2, 3, 8, 8])
    assert converted.inputs[0].element_type == hs.Type.f32


def test_a_dynamic_dimension_stays_dynamic_in_every_spelling() -> None:
    model, _ = conv_relu_model()
    for form in ({"x": [-1, 3, 8, 8]}, "x[?,3,8,8]", "x[-1,3,8,8]"):
        assert hs.convert_model(model, input=form).inputs[0].partial_shape == hs.PartialShape([-1, 3, 8, 8])


@pytest.mark.parametrize("form", [{"x": np.float16}, ("x", hs.Type.f16), "x{f16}", {"x": ([1, 3, 8, 8], "f16")}])
def test_an_element_type_given_is_the_inputs_and_the_model_computes_as_before(form: Any) -> None:
    model, _ = conv_relu_model()
    converted = hs.convert_model(model, input=form)
    assert converted.inputs[0].element_type == hs.Type.f16
    half = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float16)
    expected = run_ort(model, {"x": half.astype(F32)})[0]
    np.testing.assert_allclose(_run(converted, x=half)["y"], expected, rtol=1e-5, atol=1e-6)


def test_parse_input_reads_a_tuple_in_any_order() -> None:
    (spec,) = parse_input((np.float16, [1, 2], "x"))
    assert spec == InputSpec("x", hs.PartialShape([1, 2]), hs.Type.f16)
    assert parse_input(([1, 2], np.float16)) == [InputSpec(None, hs.PartialShape([1, 2]), hs.Type.f16)]
    assert parse_input([[1, 2], [3]]) == [
        InputSpec(shape=hs.PartialShape([1, 2])),
        InputSpec(shape=hs.PartialShape([3])),
    ]
    assert parse_input([]) == parse_input(None) == []
    assert parse_input(("b", [2])) == [InputSpec("b", hs.PartialShape([2]))]  # a name, not numpy's "b" (int8)
    value = np.array([1, 2, 3], np.int32)
    (spec,) = parse_input("ids[3]{i32}->[1 2 3]")
    assert spec.name == "ids" and spec.shape == hs.PartialShape([3]) and spec.element_type == hs.Type.i32
    np.testing.assert_array_equal(spec.value, value)
    assert spec.value is not None and spec.value.dtype == np.int32


# -- models that are not ONNX ---------------------------------------------------------------------------------


def test_a_native_model_gets_shapes_types_and_frozen_values_after_reading(tmp_path: Path) -> None:
    x = opset.parameter([-1, 3], hs.Type.f32, name="x")
    scale = opset.parameter([], hs.Type.f32, name="scale")
    y = opset.multiply(x, scale, name="y")
    hs.save_model(hs.Model([y], [x, scale], name="scaled"), tmp_path / "scaled.json")
    converted = hs.convert_model(tmp_path / "scaled.json", input={"x": ([2, 3], np.float16), "scale": np.float32(3)})
    assert [(p.any_name, p.element_type, p.partial_shape) for p in converted.inputs] == [
        ("x", hs.Type.f16, hs.PartialShape([2, 3]))
    ]
    x_value = np.arange(6, dtype=np.float16).reshape(2, 3)
    np.testing.assert_array_equal(_run(converted, x=x_value)["y"], x_value.astype(F32) * 3)


def test_converting_a_model_object_leaves_it_unchanged() -> None:
    x = opset.parameter([2], hs.Type.f32, name="x")
    k = opset.parameter([2], hs.Type.f32, name="k")
    model = hs.Model([opset.add(x, k, name="y")], [x, k])
    frozen = hs.convert_model(model, input={"k": np.array([1, 2], F32)})
    assert [p.any_name for p in model.inputs] == ["x", "k"]
    assert [p.any_name for p in frozen.inputs] == ["x"]
    np.testing.assert_array_equal(_run(frozen, x=np.array([10, 20], F32))["y"], [11, 22])


_NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.:/]{0,8}", fullmatch=True).filter(lambda n: n not in hs.Type.__members__)
_DIMS = st.lists(st.integers(-1, 64), max_size=4)


@given(entries=st.dictionaries(_NAMES, st.tuples(_DIMS, st.sampled_from([None, "f16", "i64"])), min_size=1, max_size=3))
@FEW
def test_text_reads_back_every_name_shape_and_type_it_was_written_from(
    entries: dict[str, tuple[list[int], str | None]],
) -> None:
    def dims(shape: list[int]) -> str:
        return ",".join("?" if d == -1 else str(d) for d in shape)

    text = ",".join(
        f"{name}[{dims(shape)}]" + (f"{{{kind}}}" if kind else "") for name, (shape, kind) in entries.items()
    )
    expected = [
        InputSpec(name, hs.PartialShape(shape), hs.Type[kind] if kind else None)
        for name, (shape, kind) in entries.items()
    ]
    assert parse_input(text) == expected
