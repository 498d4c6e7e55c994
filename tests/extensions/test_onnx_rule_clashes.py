"""An extension's ONNX rule for an op type the SDK translates itself: refused at registration (it would
never run), naming the extension's distribution and hetero-sdk; with ``replaces=True`` and added in
process, it replaces the SDK's translation from its opset on, as OpenVINO's ConversionExtension does. The
SDK's rules and extensions' are one type, ``OnnxRule``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import hetero_sdk as hs
import hetero_sdk.plugin as facade
from hetero_sdk import Node
from hetero_sdk.errors import PluginValidationError
from hetero_sdk.extensions import Extension, OnnxRule, extension_infos, remove_extensions
from hetero_sdk.frontend.onnx import supported_ops
from template_plugin import TemplatePlugin

from .conftest import DATA, softsign, unary_op

Register = Callable[..., Extension]


def _relu_model(opset_version: int) -> bytes:
    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset_version)]).SerializeToString()


def _run(model: bytes) -> np.ndarray:
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin}, autoload=False)
    return np.asarray(core.compile_model(core.read_model(model), "TEMPLATE")({"x": DATA})[0])


def _softsign_relu(since: int, replaces: bool = False, name: str = "relu_ext") -> Extension:
    """An extension translating ONNX ``Relu`` (from opset ``since``) as its own softsign op."""
    op = unary_op(f"{name.title().replace('_', '')}Softsign", lambda node, x: softsign(x))
    rule = OnnxRule("", "Relu", lambda ctx: [Node(op, [ctx.input(0)]).output(0)], since, (op.type_name,), replaces)
    return Extension(name, ops=[op], onnx_rules=[rule])


@pytest.mark.parametrize("since", [14, 20, 1])
def test_a_rule_for_an_op_type_the_sdk_translates_is_refused_naming_both_packages(
    register: Register, since: int
) -> None:
    with pytest.raises(PluginValidationError) as info:
        register(_softsign_relu(since), distribution="acme-onnx-ops")
    message = str(info.value)
    assert f"extension 'relu_ext' (acme-onnx-ops): the ONNX rule for ai.onnx Relu (since {since})" in message
    assert "duplicates hetero-sdk's own translation of ai.onnx Relu" in message
    assert "would never run" in message and "replaces=True" in message and "Core.add_extension" in message
    assert "relu_ext" not in [e.name for e in extension_infos()]  # nothing registered
    np.testing.assert_array_equal(_run(_relu_model(17)), np.maximum(DATA, 0))


def test_a_rule_in_the_ai_onnx_spelling_of_the_default_domain_is_refused_too(register: Register) -> None:
    rule = OnnxRule("ai.onnx", "Relu", lambda ctx: [ctx.input(0)], since=14)
    with pytest.raises(PluginValidationError, match=r"duplicates hetero-sdk's own translation of ai.onnx Relu"):
        register(Extension("spelled_ext", onnx_rules=[rule]))


def test_a_replacing_rule_added_in_process_translates_from_its_opset_on(register: Register) -> None:
    register(_softsign_relu(14, replaces=True))
    listed = next(e for e in extension_infos() if e.name == "relu_ext")
    assert listed.onnx_rules == ("ai.onnx:Relu (since 14, replaces the SDK)",)
    assert supported_ops()["Relu"] == sorted({r.since for r in facade.ONNX_RULES.get("Relu")} | {14})
    np.testing.assert_allclose(_run(_relu_model(17)), DATA / (1 + np.abs(DATA)), rtol=1e-6)
    np.testing.assert_allclose(_run(_relu_model(14)), DATA / (1 + np.abs(DATA)), rtol=1e-6)
    np.testing.assert_array_equal(_run(_relu_model(13)), np.maximum(DATA, 0))  # before 14: the SDK's


def test_once_the_replacing_extension_is_removed_the_sdk_translates_again(register: Register) -> None:
    register(_softsign_relu(1, replaces=True))
    np.testing.assert_allclose(_run(_relu_model(17)), DATA / (1 + np.abs(DATA)), rtol=1e-6)
    sdk_versions = sorted({r.since for r in facade.ONNX_RULES.get("Relu")})
    assert supported_ops()["Relu"] == sdk_versions  # listed once, though the extension's repeats since 1
    remove_extensions(["relu_ext"])
    np.testing.assert_array_equal(_run(_relu_model(17)), np.maximum(DATA, 0))


def test_replaces_on_an_op_type_the_sdk_does_not_translate_is_refused(register: Register) -> None:
    rule = OnnxRule("org.example", "Nothing", lambda ctx: [], replaces=True)
    with pytest.raises(PluginValidationError, match=r"'nothing_ext'.*hetero-sdk has no rule for it to replace"):
        register(Extension("nothing_ext", onnx_rules=[rule]))


def test_the_sdk_rules_and_extension_rules_are_one_type() -> None:
    assert facade.OnnxRule is OnnxRule
    assert all(isinstance(rule, OnnxRule) for _, rules in facade.ONNX_RULES.items() for rule in rules)
    relu = facade.ONNX_RULES.get("Relu")
    assert [(r.domain, r.op_type) for r in relu] == [("", "Relu")] * len(relu)
    assert [r.since for r in relu] == sorted(r.since for r in relu)


REPLACING = textwrap.dedent(
    """
    from hetero_sdk.extensions import Extension, OnnxRule
    extension = Extension("replacing", onnx_rules=[OnnxRule("", "Relu", lambda ctx: [ctx.input(0)], replaces=True)])
    """
)
CHILD = textwrap.dedent(
    """
    import json
    import hetero_sdk as hs
    from hetero_sdk.errors import PluginValidationError
    core = hs.Core(autoload=False)
    report = {"listed": {e.name: [e.status, e.error] for e in core.extensions}}
    core.add_extension("replacing_ext_mod:extension")
    report["after_add"] = {e.name: e.status for e in core.extensions}
    print(json.dumps(report))
    """
)


def test_an_installed_replacing_extension_is_isolated_and_may_be_added_in_process(tmp_path: Path) -> None:
    info = tmp_path / "vendor_replacing_ops-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vendor-replacing-ops\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[hetero_sdk.extensions]\nreplacing = replacing_ext_mod:extension\n")
    (tmp_path / "replacing_ext_mod.py").write_text(REPLACING)
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=120,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    status, error = report["listed"]["replacing"]
    assert status == "broken"
    assert "vendor-replacing-ops" in error and "hetero-sdk's own translation of ai.onnx Relu" in error
    assert "an installed extension may not" in error and "Core.add_extension" in error
    assert report["after_add"]["replacing"] == "loaded"
