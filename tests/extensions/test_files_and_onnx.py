"""An extension op in ONNX models, native files and blobs: read through the extension's rule; saved with
the extension and distribution that provide it; read where they are absent, a typed error naming both."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import hetero_sdk as hs
from hetero_sdk import Node, opset
from hetero_sdk.errors import (
    ModelValidationError,
    UnknownOpTypeError,
    UnsupportedOperationError,
)
from hetero_sdk.extensions import Extension, OnnxRule, remove_extensions
from template_plugin import TemplatePlugin

from .conftest import DATA, softsign, unary_op

Register = Callable[..., Extension]


def _onnx(op_type: str, domain: str, **attrs: Any) -> bytes:
    node = helper.make_node(op_type, ["x"], ["y"], domain=domain, **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])])  # fmt: skip
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(domain, 1)]
    return helper.make_model(graph, opset_imports=opsets).SerializeToString()


def _softsign_extension(name: str = "file_ext") -> Extension:
    op = unary_op("FileExtSoftsign", lambda node, x: softsign(x))
    rule = OnnxRule("org.example", "Softsign2", lambda ctx: [Node(op, [ctx.input(0)]).output(0)], makes=(op.type_name,))
    return Extension(name, ops=[op], onnx_rules=[rule])


def _core() -> hs.Core:
    return hs.Core(plugins={"TEMPLATE": TemplatePlugin}, autoload=False)


def test_an_extension_rule_translates_its_domain_op(register: Register) -> None:
    register(_softsign_extension())
    model = _core().read_model(_onnx("Softsign2", "org.example"))
    assert [n.get_type_name() for n in model.get_ops()].count("FileExtSoftsign") == 1
    got = _core().compile_model(model, "TEMPLATE")({"x": DATA})[0]
    np.testing.assert_allclose(got, DATA / (1 + np.abs(DATA)), rtol=1e-6)
    assert "org.example:Softsign2" in __import__("hetero_sdk.frontend.onnx", fromlist=["x"]).supported_ops()


def _default_domain_softsign(name: str = "default_ext") -> Extension:
    """An extension whose rule reads ``Softsign2`` of the default domain, an op type ONNX does not define
    (as ONNX Runtime registers SimplifiedLayerNormalization there)."""
    op = unary_op("DefaultExtSoftsign", lambda node, x: softsign(x))
    rule = OnnxRule("", "Softsign2", lambda ctx: [Node(op, [ctx.input(0)]).output(0)], makes=(op.type_name,))
    return Extension(name, ops=[op], onnx_rules=[rule])


def _default_domain_model(op_type: str) -> onnx.ModelProto:
    """``y = op_type(x + w)`` in the default domain, ``w`` an initializer."""
    nodes = [helper.make_node("Add", ["x", "w"], ["s"]), helper.make_node(op_type, ["s"], ["y"], name="custom")]
    weights = numpy_helper.from_array(np.full((3, 4), 0.5, np.float32), "w")
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])], [weights])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_rule_reads_a_default_domain_op_onnx_does_not_define(register: Register) -> None:
    register(_default_domain_softsign())
    proto = _default_domain_model("Softsign2")
    before = proto.SerializeToString()
    got = _core().compile_model(_core().read_model(proto), "TEMPLATE")({"x": DATA})[0]
    np.testing.assert_allclose(got, (DATA + 0.5) / (1 + np.abs(DATA + 0.5)), rtol=1e-6)
    assert proto.SerializeToString() == before  # the checker's private domain is undone


def test_a_default_domain_op_with_external_weights_reads_from_its_file(register: Register, tmp_path: Path) -> None:
    register(_default_domain_softsign())
    path = tmp_path / "model.onnx"
    onnx.save(_default_domain_model("Softsign2"), path, save_as_external_data=True, location="w.bin",
              size_threshold=0)  # fmt: skip
    got = _core().compile_model(_core().read_model(str(path)), "TEMPLATE")({"x": DATA})[0]
    np.testing.assert_allclose(got, (DATA + 0.5) / (1 + np.abs(DATA + 0.5)), rtol=1e-6)


def test_a_default_domain_op_without_a_rule_is_still_refused(register: Register) -> None:
    register(_default_domain_softsign())
    refusal = r"NoSuchOp3 \(domain ai.onnx, opset 17: not an ONNX operator\) node 'custom'"
    with pytest.raises(UnsupportedOperationError, match=refusal):
        _core().read_model(_default_domain_model("NoSuchOp3"))


def test_a_default_domain_op_is_checked_by_onnx_checker_once_moved(register: Register) -> None:
    """ONNX's checker still runs on the rest of the graph: a node with an input nothing produces fails."""
    register(_default_domain_softsign())
    proto = _default_domain_model("Softsign2")
    proto.graph.node[1].input[0] = "nowhere"
    with pytest.raises(ModelValidationError, match="nowhere"):
        _core().read_model(proto)


def test_an_unknown_com_microsoft_op_names_the_contrib_distribution() -> None:
    with pytest.raises(UnsupportedOperationError, match=r"NoSuchContribOp.*hetero-sdk-contrib"):
        _core().read_model(_onnx("NoSuchContribOp", "com.microsoft"))


def test_a_native_file_records_the_provider_and_reads_back_only_with_the_extension(
    register: Register, tmp_path: Path
) -> None:
    register(_softsign_extension(), distribution="hetero-sdk-example-ops")
    x = opset.parameter([3, 4], hs.Type.f32, name="x")
    model = hs.Model([Node("FileExtSoftsign", [x.output(0)], {}, "y")], [x], name="m")
    path = tmp_path / "model.json"
    hs.save_model(model, str(path))
    entry = next(n for n in json.loads(path.read_text())["nodes"] if n["type"] == "FileExtSoftsign")
    assert entry["extension"] == {"extension": "file_ext", "distribution": "hetero-sdk-example-ops"}
    remove_extensions(["file_ext"])
    with pytest.raises(UnknownOpTypeError) as info:
        _core().read_model(str(path))
    assert "FileExtSoftsign" in str(info.value) and "pip install hetero-sdk-example-ops" in str(info.value)
    register(_softsign_extension())
    got = _core().compile_model(_core().read_model(str(path)), "TEMPLATE")({"x": DATA})[0]
    np.testing.assert_allclose(got, DATA / (1 + np.abs(DATA)), rtol=1e-6)
