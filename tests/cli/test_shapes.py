"""``-shape`` in benchmark_app's syntax: parsing, naming the one input, and the errors that list the inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

import hetero_sdk as hs
from hetero_sdk.cli.shapes import parse_shapes

from .helpers import Invoke, assert_one_line_error, parse_json
from .model_files import dense_relu, two_inputs


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[1,3,224,224]", {None: [1, 3, 224, 224]}),
        (" [ 1, 3 ] ", {None: [1, 3]}),
        ("x[1,3,224,224]", {"x": [1, 3, 224, 224]}),
        ("a[1,3],b[2]", {"a": [1, 3], "b": [2]}),
        ("a[1,3] b[2]", {"a": [1, 3], "b": [2]}),
        ("input:0[?,4],mask[-1]", {"input:0": [-1, 4], "mask": [-1]}),
        ("scalar[]", {"scalar": []}),
    ],
)
def test_benchmark_app_shape_syntax_parses(text: str, expected: dict[str | None, list[int]]) -> None:
    assert {name: list(shape.dims) for name, shape in parse_shapes(text).items()} == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("1,3,224", "cannot read '1,3,224'"),
        ("x[1,3", "cannot read"),
        ("x[1..4,3]", "is a range"),
        ("x[1,a]", "dimension 'a' in 'x[1,a]' is not a size"),
        ("x[1],x[2]", "two shapes"),
        ("[1],y[2]", "name every input"),
    ],
)
def test_malformed_shapes_say_what_is_wrong(text: str, fragment: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_shapes(text)
    assert fragment in str(caught.value)


def test_malformed_shape_on_the_command_line_is_a_usage_error(invoke: Invoke) -> None:
    result = invoke("benchmark", "mlp", "-shape", "x[1..8,64]", "-niter", "1")
    assert_one_line_error(result, "-shape", "is a range", exit_code=2)


def test_unnamed_shape_on_a_model_with_two_inputs_asks_for_names(invoke: Invoke, tmp_path: Path) -> None:
    path = two_inputs(tmp_path / "two.onnx")
    result = invoke("benchmark", "-m", str(path), "-shape", "[2,2]", "-niter", "1")
    assert_one_line_error(result, "has 2 inputs (a[?,2], b[?,2])", 'name each one: -shape "name[...],other[...]"')
    assert result.exit_code == 2


def test_shape_for_an_unknown_input_lists_the_inputs(invoke: Invoke, tmp_path: Path) -> None:
    path = dense_relu(tmp_path / "dense.onnx")
    result = invoke("query", "-m", str(path), "-shape", "image[1,3]", "-d", "TEMPLATE")
    assert_one_line_error(result, "input 'image'", "its inputs: x[?,3]", exit_code=2)
    result = invoke("query", "-m", str(path), "-shape", "x[1,3,1]", "-d", "TEMPLATE")
    assert_one_line_error(result, "rank 3 ([1,3,1])", "it is [?,3]", exit_code=2)


def test_shape_equal_to_a_static_input_changes_nothing(invoke: Invoke) -> None:
    data = parse_json(invoke("benchmark", "mlp", "-shape", "[1,64]", "-niter", "1", "--json"))
    assert data["model"]["shape"] == {"x": "[1,64]"}
    assert data["model"]["inputs"][0]["shape"] == "[1,64]"


def test_shape_on_a_native_model_goes_through_model_reshape(invoke: Invoke, tmp_path: Path) -> None:
    path = tmp_path / "dense.json"
    hs.save_model(hs.convert_model(dense_relu(tmp_path / "dense.onnx")), path)
    data = parse_json(invoke("benchmark", "-m", str(path), "-shape", "x[6,3]", "-niter", "1", "--json"))
    assert data["model"]["inputs"][0]["shape"] == "[6,3]" and data["model"]["outputs"][0]["shape"] == "[6,4]"
    assert data["check"]["status"] == "PASS" and data["check"]["outputs"][0]["shape"] == [6, 4]


def test_shape_on_a_sample_batches_it(invoke: Invoke) -> None:
    data = parse_json(invoke("benchmark", "mlp", "-shape", "[4,64]", "-niter", "2", "--json"))
    assert data["model"]["inputs"][0]["shape"] == "[4,64]"
    assert data["model"]["outputs"] == [{"name": "probabilities", "element_type": "f32", "shape": "[4,10]"}]
    assert data["check"]["status"] == "PASS"


def test_shape_a_model_cannot_take_is_one_line_naming_the_node(invoke: Invoke) -> None:
    result = invoke("query", "mlp", "-shape", "x[1,65]", "-d", "TEMPLATE")
    assert_one_line_error(result, "ModelValidationError", "fc1/matmul", exit_code=1)
