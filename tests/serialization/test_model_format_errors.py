"""Claims: every damaged or malformed model file raises ModelFormatError naming the file and the place."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hetero_sdk.errors import ModelFormatError, ModelValidationError, UnknownOpTypeError, UnsupportedOperationError
from hetero_sdk.serialization import read_model, save_model


@pytest.fixture
def saved(tmp_path, reference_model) -> tuple[Path, Path]:
    """The reference model saved as m.json + m.bin (nodes: x, w, scaled, b, shifted, act, y, result)."""
    save_model(reference_model, tmp_path / "m.json")
    return tmp_path / "m.json", tmp_path / "m.bin"


def _edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    document = json.loads(path.read_text("utf-8"))
    change(document)
    path.write_text(json.dumps(document, indent=1), "utf-8")


def _node(document: dict[str, Any], name: str) -> dict[str, Any]:
    return next(n for n in document["nodes"] if n["name"] == name)


def _fails(path: Path, *fragments: str, **kwargs: Any) -> ModelFormatError:
    with pytest.raises(ModelFormatError) as info:
        read_model(path, **kwargs)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return info.value


def test_the_node_order_the_cases_below_rely_on(saved):
    document = json.loads(saved[0].read_text("utf-8"))
    assert [n["name"] for n in document["nodes"]][:7] == ["x", "w", "scaled", "b", "shifted", "act", "y"]


def test_truncated_weights(saved):
    path, bin_path = saved
    bin_path.write_bytes(bin_path.read_bytes()[:-5])
    _fails(path, "m.bin", "truncated", "75 bytes", "expects 80")


def test_weights_with_extra_bytes(saved):
    path, bin_path = saved
    bin_path.write_bytes(bin_path.read_bytes() + b"\0")
    _fails(path, "m.bin", "81 bytes", "another model")


def test_flipped_byte_in_a_weight_names_the_node_and_byte_range(saved):
    path, bin_path = saved
    data = bytearray(bin_path.read_bytes())
    data[2] ^= 0x01  # inside w, the first array (bytes 0..16)
    bin_path.write_bytes(bytes(data))
    _fails(path, "m.bin", "byte offset 0..16", "Constant 'w'", "crc32")


def test_flipped_padding_byte_fails_the_whole_file_checksum(saved):
    path, bin_path = saved
    data = bytearray(bin_path.read_bytes())
    data[30] ^= 0xFF  # between w (0..16) and b (64..80)
    bin_path.write_bytes(bytes(data))
    _fails(path, "m.bin", "sha256")


def test_newer_format_version_says_which_version_each_side_has(saved):
    _edit(saved[0], lambda d: d.update(version=3))
    _fails(saved[0], "m.json", "format version 3", "reads versions up to 2", "upgrade")


@pytest.mark.parametrize("version", [0, -1])
def test_impossible_format_version(saved, version):
    _edit(saved[0], lambda d: d.update(version=version))
    _fails(saved[0], "m.json", "version", "not a valid format version")


def test_another_format_is_refused(saved):
    _edit(saved[0], lambda d: d.update(format="onnx"))
    _fails(saved[0], "m.json", "'onnx'", "not a hetero-sdk model")


def test_malformed_json_names_line_and_column(saved):
    path = saved[0]
    lines = path.read_text("utf-8").split("\n")
    assert lines[2] == '  "version": 1,'
    lines[2] = '  "version": 1'  # the comma goes missing: the parser stops at line 4, column 3
    path.write_text("\n".join(lines), "utf-8")
    _fails(path, "m.json", "line 4, column 3", "malformed JSON")


def test_cut_json(saved):
    path = saved[0]
    path.write_bytes(path.read_bytes()[:100])
    _fails(path, "m.json", "malformed JSON", "line")


def test_json_nan_literal_is_refused(saved):
    path = saved[0]
    text = path.read_text("utf-8")
    assert '"max": 3.0' in text
    path.write_text(text.replace('"max": 3.0', '"max": NaN'), "utf-8")
    _fails(path, "m.json", "NaN", "$float")


def test_text_that_is_not_utf8(saved):
    saved[0].write_bytes(b'{"format": "\xff"}')
    _fails(saved[0], "m.json", "byte offset 12", "UTF-8")


def test_top_level_must_be_an_object(saved):
    saved[0].write_text("[1, 2]", "utf-8")
    _fails(saved[0], "m.json", "top level", "object")


def test_missing_nodes_key(saved):
    _edit(saved[0], lambda d: d.pop("nodes"))
    _fails(saved[0], "m.json", "nodes: is missing")


def test_offset_past_the_end_of_the_weights(saved):
    _edit(saved[0], lambda d: _node(d, "w")["attrs"]["value"].update(offset=10_000))
    _fails(saved[0], "m.json", "nodes[1] (Constant 'w').attrs.value", "10000..10016", "past the end of", "m.bin")


def test_size_that_does_not_fit_the_shape(saved):
    _edit(saved[0], lambda d: _node(d, "b")["attrs"]["value"].update(size=8))
    _fails(saved[0], "m.json", "Constant 'b'", "size 8 does not fit shape [4]")


def test_negative_offset(saved):
    _edit(saved[0], lambda d: _node(d, "b")["attrs"]["value"].update(offset=-64))
    _fails(saved[0], "m.json", "Constant 'b'", "offset", "negative")


def test_missing_weights_file(saved):
    saved[1].unlink()
    _fails(saved[0], "m.bin", "does not exist", "80 bytes")


def test_missing_model_file(tmp_path):
    _fails(tmp_path / "absent.json", "absent.json", "does not exist")


def test_unknown_op_type_is_an_unsupported_operation_naming_op_node_and_file(saved):
    _edit(saved[0], lambda d: _node(d, "scaled").update(type="FancyOp"))
    with pytest.raises(UnsupportedOperationError) as info:  # the error table: "an op type is unknown"
        read_model(saved[0])
    assert isinstance(info.value, UnknownOpTypeError)
    message = str(info.value)
    for fragment in ("m.json", "nodes[2] (FancyOp 'scaled').type", "unknown op type 'FancyOp'", "register"):
        assert fragment in message, f"{fragment!r} not in {message!r}"
    _fails(saved[0], "FancyOp")  # still a ModelFormatError, for code that catches the file's errors


def test_op_of_another_opset_version(saved):
    _edit(saved[0], lambda d: _node(d, "act").update(version="opset99"))
    _fails(saved[0], "m.json", "Relu 'act'", "opset99", "opset1")


def test_dangling_producer_name(saved):
    _edit(saved[0], lambda d: _node(d, "shifted").update(inputs=[["ghost", 0], ["b", 0]]))
    _fails(saved[0], "m.json", "(Add 'shifted').inputs[0]", "unknown producer node 'ghost'")


def test_producer_listed_after_its_consumer(saved):
    _edit(saved[0], lambda d: _node(d, "scaled").update(inputs=[["x", 0], ["b", 0]]))
    _fails(saved[0], "m.json", "(Multiply 'scaled').inputs[1]", "'b' comes later", "topological order")


def test_port_that_does_not_exist(saved):
    _edit(saved[0], lambda d: _node(d, "scaled").update(inputs=[["x", 1], ["w", 0]]))
    _fails(saved[0], "m.json", "'scaled'", "'x' has 1 output(s), not port 1")


@pytest.mark.parametrize("ref", [["x"], ["x", "0"], ["x", True], "x", [1, 0]])
def test_malformed_input_reference(saved, ref):
    _edit(saved[0], lambda d: _node(d, "scaled").update(inputs=[ref, ["w", 0]]))
    _fails(saved[0], "m.json", "(Multiply 'scaled').inputs[0]", "[producer name, port]")


def test_duplicate_node_names(saved):
    _edit(saved[0], lambda d: _node(d, "b").update(name="w"))
    _fails(saved[0], "m.json", "nodes[3] (Constant 'w').name", "unique")


def test_parameter_list_naming_another_kind_of_node(saved):
    _edit(saved[0], lambda d: d.update(parameters=["w"]))
    _fails(saved[0], "m.json", "parameters[0]", "'w' is a Constant, not a Parameter")


def test_result_list_naming_no_node(saved):
    _edit(saved[0], lambda d: d.update(results=["nobody"]))
    _fails(saved[0], "m.json", "results[0]", "'nobody' names no node")


def test_parameter_left_out_of_the_parameter_list_is_an_invalid_graph(saved):
    _edit(saved[0], lambda d: d.update(parameters=[]))
    error = _fails(saved[0], "m.json", "the graph is invalid", "Parameter 'x'")
    assert isinstance(error.__cause__, ModelValidationError)


def test_node_that_no_longer_type_checks(saved):
    def make_x_integer(document: dict[str, Any]) -> None:
        x = _node(document, "x")
        x["attrs"]["element_type"] = {"$type": "i32"}
        x["outputs"][0]["element_type"] = "i32"

    _edit(saved[0], make_x_integer)
    error = _fails(saved[0], "m.json", "nodes[2] (Multiply 'scaled')", "does not build", "element type")
    assert isinstance(error.__cause__, ModelValidationError)


def test_attribute_of_a_wrong_kind(saved):
    _edit(saved[0], lambda d: _node(d, "y")["attrs"].update(min="low"))
    _fails(saved[0], "m.json", "(Clamp 'y')", "does not build", "'low'")


def test_recorded_output_type_that_inference_contradicts(saved):
    _edit(saved[0], lambda d: _node(d, "y")["outputs"][0].update(element_type="f16"))
    _fails(saved[0], "m.json", "(Clamp 'y').outputs[0]", "the file says f16[-1, 4]", "infers f32[-1, 4]")


def test_recorded_output_count_that_inference_contradicts(saved):
    _edit(saved[0], lambda d: _node(d, "y")["outputs"].append({"element_type": "f32", "shape": [-1, 4]}))
    _fails(saved[0], "m.json", "(Clamp 'y').outputs", "lists 2 output(s), the op has 1")


def test_node_connected_to_no_result(saved):
    def add_stray(document: dict[str, Any]) -> None:
        stray = {"name": "stray", "type": "Relu", "inputs": [["x", 0]]}
        document["nodes"].insert(1, stray)

    _edit(saved[0], add_stray)
    _fails(saved[0], "m.json", "nodes[1] ('stray')", "not connected to any result")


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ({"$pickle": "gASV"}, "unknown value tag '$pickle'"),
        ({"$type": "f32", "$shape": [1]}, "exactly one tag"),
        ({"plain": 1}, "exactly one tag"),
        ({"$shape": [1, -2]}, "shape [1, -2]"),
        ({"$float": "nan", "bits": "zz"}, "bits 'zz'"),
        ({"$float": "nan", "bits": "3ff0000000000000"}, "not a nan"),
        ({"$float": "huge"}, "'huge'"),
        ({"$scalar": "f16", "hex": "00"}, "takes 2 bytes"),
        ({"$tensor": "str", "shape": [1], "offset": 0, "size": 4, "crc32": 0}, "unknown element type 'str'"),
        ({"$tuple": "abc"}, "$tuple must hold a list"),
    ],
)
def test_malformed_attribute_values(saved, value, fragment):
    _edit(saved[0], lambda d: _node(d, "act")["attrs"].update(odd=value))
    _fails(saved[0], "m.json", "(Relu 'act').attrs.odd", fragment)


def test_deeply_nested_attribute_is_refused(saved):
    deep: Any = 1
    for _ in range(100):
        deep = [deep]
    _edit(saved[0], lambda d: _node(d, "act")["attrs"].update(odd=deep))
    _fails(saved[0], "m.json", "(Relu 'act').attrs.odd", "nested deeper")


def test_hand_written_minimal_document_reads(tmp_path):
    path = tmp_path / "hand.json"
    document = {
        "format": "hetero-sdk-model",
        "version": 1,
        "nodes": [
            {"name": "x", "type": "Parameter", "attrs": {"element_type": "f32", "shape": {"$shape": [2]}}},
            {"name": "y", "type": "Relu", "inputs": [["x", 0]]},
            {"name": "out", "type": "Result", "inputs": [["y", 0]]},
        ],
        "parameters": ["x"],
        "results": ["out"],
    }
    path.write_text(json.dumps(document), "utf-8")
    model = read_model(path)
    assert [n.get_type_name() for n in model.get_ops()] == ["Parameter", "Relu", "Result"]
    assert model.outputs[0].names == {"y"}


def test_integer_too_long_to_parse(saved):
    path = saved[0]
    text = path.read_text("utf-8")
    path.write_text(text.replace('"version": 1,', '"version": 1' + "0" * 5000 + ","), "utf-8")
    _fails(path, "m.json", "malformed JSON", "digits")


def test_a_misspelt_attribute_is_refused_naming_the_file_and_node_rather_than_ignored(saved):
    _edit(saved[0], lambda d: _node(d, "y")["attrs"].update(maximum=1.0))
    _fails(saved[0], "m.json", "nodes[6] (Clamp 'y')", "has no attribute 'maximum'", "did you mean max")


def test_a_parameter_listed_twice_in_the_file_is_refused_naming_it(saved):
    _edit(saved[0], lambda d: d.update(parameters=["x", "x"]))
    _fails(saved[0], "m.json", "Parameter 'x' is listed twice")
