"""Core.add_extension: an extension's ops are defined process-wide, seen by every Core; registration
validates it with errors naming the extension and the op, and registers nothing when it fails."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import Node, opset
from hetero_sdk.errors import PluginValidationError
from hetero_sdk.extensions import REFERENCE, Extension, OnnxRule, extension_infos, extension_of
from hetero_sdk.ops import OPS
from template_plugin import TemplatePlugin

from .conftest import DATA, softsign, unary_op

Register = Callable[..., Extension]


def _model(op: str | object) -> hs.Model:
    x = opset.parameter([3, 4], hs.Type.f32, name="x")
    return hs.Model([Node(op, [x.output(0)], {}, "y")], [x], name="m")  # type: ignore[arg-type]


def test_an_extension_added_through_one_core_is_seen_by_another(register: Register) -> None:
    first = hs.Core(plugins={"TEMPLATE": TemplatePlugin}, autoload=False)
    extension = Extension("softsign_ext", ops=[unary_op("ExtSoftsign", lambda node, x: softsign(x))])
    first.add_extension(extension)
    register(extension)  # the fixture removes it after the test; adding the same object again does nothing
    second = hs.Core(plugins={"TEMPLATE": TemplatePlugin}, autoload=False)
    got = second.compile_model(_model("ExtSoftsign"), "TEMPLATE")({"x": DATA})[0]
    np.testing.assert_allclose(got, DATA / (1 + np.abs(DATA)), rtol=1e-6)
    assert extension_of("ExtSoftsign") is not None and extension_of("ExtSoftsign").name == "softsign_ext"
    assert any(i.name == "softsign_ext" and i.ops == ("ExtSoftsign",) for i in second.extensions)


def test_an_importable_name_is_added(register: Register, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "named_ext_module.py").write_text(textwrap.dedent("""
        from hetero_sdk.extensions import Extension
        from named_ext_helpers import softsign, unary_op
        extension = Extension("named_ext", ops=[unary_op("NamedExtOp", lambda node, x: softsign(x))])
    """))  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path))
    # the helpers by a name of their own: a test run may hold another package named 'tests'
    monkeypatch.setitem(sys.modules, "named_ext_helpers", SimpleNamespace(softsign=softsign, unary_op=unary_op))
    hs.Core(autoload=False).add_extension("named_ext_module:extension")
    register(sys.modules["named_ext_module"].extension)
    assert "NamedExtOp" in OPS


def test_an_extension_that_raises_on_import_names_it_and_the_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "raising_ext_module.py").write_text('raise RuntimeError("libvendor.so missing")\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginValidationError, match=r"raising_ext_module:extension.*libvendor\.so missing"):
        hs.Core(autoload=False).add_extension("raising_ext_module:extension")


def test_a_name_that_is_not_importable_says_the_form_it_must_have() -> None:
    with pytest.raises(PluginValidationError, match=r"package.module:attribute"):
        hs.Core(autoload=False).add_extension("no_colon_here")


def test_an_op_named_as_an_sdk_op_is_refused_naming_both_packages() -> None:
    extension = Extension("clashing_ext", ops=[unary_op("Relu")])
    with pytest.raises(PluginValidationError) as info:
        hs.Core(autoload=False).add_extension(extension)
    message = str(info.value)
    assert "extension 'clashing_ext'" in message and "op Relu" in message and "hetero-sdk" in message
    assert OPS.get("Relu").infer.__module__ == "hetero_sdk.ops.activation"  # the SDK's op is untouched


def test_two_extensions_defining_one_op_are_refused_naming_both_distributions(register: Register) -> None:
    register(Extension("first_ext", ops=[unary_op("SharedOp")]), distribution="vendor-a-ops")
    with pytest.raises(PluginValidationError) as info:
        register(Extension("second_ext", ops=[unary_op("SharedOp")]), distribution="vendor-b-ops")
    message = str(info.value)
    assert "vendor-a-ops" in message and "vendor-b-ops" in message and "SharedOp" in message
    assert extension_of("SharedOp").name == "first_ext"


def test_an_op_declared_twice_is_refused(register: Register) -> None:
    with pytest.raises(PluginValidationError, match=r"'twice_ext'.*declares op TwiceOp twice"):
        register(Extension("twice_ext", ops=[unary_op("TwiceOp"), unary_op("TwiceOp")]))
    assert "TwiceOp" not in OPS


def test_a_rule_building_an_unknown_op_is_refused_and_nothing_is_registered(register: Register) -> None:
    rule = OnnxRule("org.example", "Thing", lambda ctx: [], makes=("NoSuchOp",))
    with pytest.raises(PluginValidationError, match=r"'rule_ext'.*builds op NoSuchOp"):
        register(Extension("rule_ext", ops=[unary_op("RuleExtOp")], onnx_rules=[rule]))
    assert "RuleExtOp" not in OPS
    assert all(i.name != "rule_ext" for i in extension_infos())


def test_a_kernel_for_an_op_the_extension_does_not_define_is_refused(register: Register) -> None:
    with pytest.raises(PluginValidationError, match=r"'kernel_ext'.*TEMPLATE kernel for op Relu"):
        register(Extension("kernel_ext", ops=[unary_op("KernelExtOp")], kernels={"TEMPLATE": {"Relu": np.abs}}))


def test_a_kernel_that_is_neither_a_function_nor_a_name_is_refused(register: Register) -> None:
    with pytest.raises(PluginValidationError, match=r"'bad_kernel_ext'.*reference kernel of op BadKernelOp"):
        register(Extension("bad_kernel_ext", ops=[unary_op("BadKernelOp")], kernels={REFERENCE: {"BadKernelOp": 3}}))


def test_two_rules_for_one_onnx_op_are_refused(register: Register) -> None:
    rule = OnnxRule("org.example", "Dup", lambda ctx: [])
    register(Extension("rules_a", onnx_rules=[rule]))
    with pytest.raises(PluginValidationError, match=r"'rules_b'.*clashes with the one of extension 'rules_a'"):
        register(Extension("rules_b", onnx_rules=[OnnxRule("org.example", "Dup", lambda ctx: [])]))


def test_a_second_extension_of_a_taken_name_is_refused_and_the_same_one_is_accepted(register: Register) -> None:
    extension = Extension("named_twice", ops=[unary_op("NamedTwiceOp")])
    register(extension)
    assert register(extension) is extension
    with pytest.raises(PluginValidationError, match=r"an extension of that name is registered already"):
        register(Extension("named_twice"))


def test_something_that_is_not_an_extension_is_refused() -> None:
    with pytest.raises(PluginValidationError, match=r"not an extension"):
        hs.Core(autoload=False).add_extension(42)  # type: ignore[arg-type]


def test_an_extension_added_in_process_and_then_found_installed_takes_its_distribution(register: Register) -> None:
    extension = Extension("found_later", ops=[unary_op("FoundLaterOp")])
    register(extension)
    register(extension, distribution="vendor-found-later", version="1.2")
    assert [(i.distribution, i.version) for i in extension_infos() if i.name == "found_later"] == [
        ("vendor-found-later", "1.2")
    ]
