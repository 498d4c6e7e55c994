"""Every string of an ONNX model that is not UTF-8 text (a name, an op type, a domain, an attribute's
name or string value) is a typed error naming where it is, whatever the bytes: never a TypeError from
ONNX's schema functions or a UnicodeDecodeError from its checker's message."""

from __future__ import annotations

import re

import onnx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx import helper
from onnx_models import FEW, value_info

import hetero_sdk as hs
from hetero_sdk.errors import ModelFormatError, ModelValidationError
from hetero_sdk.frontend.onnx import loader

PLACEHOLDER = b"\x01PLACEHOLDER\x01"
"""Serialized where the bytes under test go (same length, so protobuf's length prefixes stay right)."""

not_utf8 = st.binary(min_size=1, max_size=len(PLACEHOLDER)).filter(lambda b: _invalid(b))


def _invalid(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _relu_model(**where: str) -> onnx.ModelProto:
    """``y = Relu(x)`` with the placeholder's text at one place (``op_type``, ``name``, ``input``...)."""
    text = PLACEHOLDER.decode()
    node = helper.make_node(
        where.get("op_type", "Relu"),
        [where.get("input", "x")],
        ["y"],
        name=where.get("name", "relu"),
        domain=where.get("domain", ""),
    )
    if "attribute" in where:
        node.attribute.append(helper.make_attribute(text, 1))
    graph = helper.make_graph([node], "g", [value_info("x", "float32", [2])], [value_info("y", "float32", [2])])
    opsets = [helper.make_opsetid("", 17)]  # the node's domain is not imported: its text is checked first
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def _with(model: onnx.ModelProto, data: bytes) -> bytes:
    padded = data.ljust(len(PLACEHOLDER), b"\xff")  # still not UTF-8: the invalid bytes come first
    serialized = model.SerializeToString()
    assert PLACEHOLDER in serialized
    return serialized.replace(PLACEHOLDER, padded)


@pytest.mark.parametrize(
    ("place", "path"),
    [
        ("op_type", "graph.node[0].op_type"),
        ("name", "graph.node[0].name"),
        ("input", "graph.node[0].input[0]"),
        ("domain", "graph.node[0].domain"),
        ("attribute", "graph.node[0].attribute[0].name"),
    ],
)
@FEW
@given(data=not_utf8)
def test_a_string_that_is_not_utf8_is_a_model_format_error_naming_its_place(place: str, path: str, data: bytes) -> None:
    raw = _with(_relu_model(**{place: PLACEHOLDER.decode()}), data)
    with pytest.raises(ModelFormatError, match=f"<ONNX bytes>: {re.escape(path)}.* is not valid UTF-8"):
        hs.convert_model(raw)


def test_the_error_names_the_node_the_string_belongs_to() -> None:
    raw = _with(_relu_model(input=PLACEHOLDER.decode()), b"\xff\xfe")
    with pytest.raises(ModelFormatError, match=r"graph.node\[0\].input\[0\] \(node 'relu', Relu\) is not valid UTF-8"):
        hs.convert_model(raw)


def test_a_string_attribute_that_is_not_utf8_is_a_validation_error_naming_the_node() -> None:
    node = helper.make_node("Gelu", ["x"], ["y"], name="gelu", approximate="QQQQ")
    graph = helper.make_graph([node], "g", [value_info("x", "float32", [2])], [value_info("y", "float32", [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=8)
    raw = model.SerializeToString().replace(b"QQQQ", b"\xff\xfe\xfd\xfc")
    with pytest.raises(ModelValidationError, match=r"Gelu 'gelu'.*attribute approximate holds .*not UTF-8 text"):
        hs.convert_model(raw)


def test_a_checker_that_cannot_parse_what_protobuf_read_is_a_model_format_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unparsable(model: object) -> None:
        raise ValueError("Unable to parse proto from the given bytes.")

    monkeypatch.setattr(loader.onnx.checker, "check_model", unparsable)
    raw = _relu_model().SerializeToString()
    with pytest.raises(ModelFormatError, match=r"ONNX's checker cannot parse the model.*Unable to parse proto"):
        hs.convert_model(raw)


def test_a_checker_message_quoting_undecodable_text_is_a_validation_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def quoting(model: object) -> None:
        b"Nodes in a graph must be topologically sorted: input '\xff\xfe'".decode()

    monkeypatch.setattr(loader.onnx.checker, "check_model", quoting)
    with pytest.raises(ModelValidationError, match=r"fails ONNX's checks, whose message quotes text that is not UTF-8"):
        hs.convert_model(_relu_model().SerializeToString())
