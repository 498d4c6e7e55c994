"""Architecture, held by tests: no import cycle in the SDK or a plugin, the SDK's layers only import
downwards, no import hidden inside a function, plugins (HETERO included) use only the public API and
read no private state of SDK base classes. Each check is also shown to catch a planted defect."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from architecture import (
    FACADE_MODULES,
    PLUGIN_PACKAGES,
    SDK_LAYERS,
    ensure_importable,
    import_cycles,
    late_imports,
    layer_violations,
    private_imports,
)

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("hetero_sdk", *PLUGIN_PACKAGES)
SOURCES = [ROOT / "hetero_sdk", ROOT / "template_plugin", ROOT / "plugins/jax/hetero_sdk_jax"]
SOURCES += [
    ROOT / "plugins/tutorial/hetero_sdk_tutorial",
    ROOT / "plugins/ort/hetero_sdk_ort",
    ROOT / "plugins/ray/hetero_sdk_ray",
    ROOT / "plugins/contrib/hetero_sdk_contrib",
]
PLUGIN_SOURCES = [
    ROOT / "template_plugin",
    ROOT / "plugins/jax/hetero_sdk_jax",
    ROOT / "plugins/tutorial/hetero_sdk_tutorial",
    ROOT / "plugins/ort/hetero_sdk_ort",
    ROOT / "plugins/ray/hetero_sdk_ray",
    ROOT / "plugins/contrib/hetero_sdk_contrib",
]
LAZY_ON_PURPOSE = [
    "hetero_sdk/conformance/pytest_plugin.py",
    "hetero_sdk/frontend/__init__.py",
    "hetero_sdk/frontend/save.py",
    "hetero_sdk/cli/onnx_tests.py",
]
"""A pytest plugin loaded by every pytest run: it imports the SDK only once a conformance run starts.
The model readers and writers import a frontend when a model needs it, as OpenVINO's FrontEndManager
loads a frontend library, and ``onnx-tests`` its run: ``import hetero_sdk`` and the CLI start without
``onnx`` (tests/frontend/test_lazy_loading.py)."""
BASE_CLASS_MODULES = [ROOT / "hetero_sdk/runtime", ROOT / "hetero_sdk/plugin"]


def test_no_import_cycles_in_the_sdk_or_the_plugins() -> None:
    assert import_cycles(PACKAGES) == []


def test_sdk_layers_import_only_downwards() -> None:
    assert layer_violations("hetero_sdk", SDK_LAYERS) == []


def test_no_imports_hidden_in_functions() -> None:
    assert late_imports(SOURCES, PACKAGES, LAZY_ON_PURPOSE) == []


def test_plugins_and_hetero_import_only_public_names() -> None:
    assert private_imports(PLUGIN_SOURCES, FACADE_MODULES) == []
    assert private_imports([ROOT / "hetero_sdk/hetero"], own="hetero_sdk.hetero") == []


def _inherited_private_reads(roots: list[Path]) -> list[str]:
    """``self._x`` read in a plugin class that never sets it, where an SDK base class sets ``_x``."""
    base_state = set()
    for root in BASE_CLASS_MODULES:
        for path in root.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and node.attr.startswith("_"):
                    base_state.add(node.attr)
    found = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            for cls in (n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ClassDef)):
                attrs = [n for n in ast.walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)]
                own = {a.attr for a in attrs if a.value.id == "self" and isinstance(a.ctx, ast.Store)}
                own |= {f.name for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
                for a in attrs:
                    if a.value.id == "self" and a.attr in base_state - own and not a.attr.startswith("__"):
                        found.append(f"{path}:{a.lineno} self.{a.attr}")
    return found


def test_plugins_read_no_private_state_of_sdk_base_classes() -> None:
    assert _inherited_private_reads([*PLUGIN_SOURCES, ROOT / "hetero_sdk/hetero"]) == []


# -- the checks bite: planted defects --------------------------------------------------------------------


def _package(root: Path, name: str, modules: dict[str, str]) -> Path:
    folder = root / name
    folder.mkdir()
    for module, text in modules.items():
        (folder / f"{module}.py").write_text(textwrap.dedent(text))
    ensure_importable(root)
    return folder


def test_a_planted_cycle_is_reported(tmp_path: Path) -> None:
    _package(
        tmp_path,
        "planted_cycle",
        {"__init__": "", "a": "from planted_cycle import b\n", "b": "import planted_cycle.a\n"},
    )
    assert import_cycles(["planted_cycle"]) == [["planted_cycle.a", "planted_cycle.b"]]


def test_a_planted_upward_import_is_reported(tmp_path: Path) -> None:
    _package(tmp_path, "planted_layers", {"__init__": "", "low": "from planted_layers import high\n", "high": ""})
    assert layer_violations("planted_layers", [("low",), ("high",)]) == [
        "planted_layers.low -> planted_layers.high (line 1)"
    ]


def test_a_planted_private_import_and_a_hidden_import_are_reported(tmp_path: Path) -> None:
    plugin = _package(
        tmp_path,
        "planted_plugin",
        {
            "__init__": "",
            "device": """
                from hetero_sdk.ops.checks import expect_rank
                from hetero_sdk.ops import _infer_binary
                from hetero_sdk.ops import as_output

                def compile_model():
                    from hetero_sdk.graph.node import Node
            """,
        },
    )
    found = private_imports([plugin])
    assert any("hetero_sdk.ops.checks is not a public module" in f for f in found)
    assert any("_infer_binary is not in hetero_sdk.ops.__all__" in f for f in found)
    assert any("hetero_sdk.graph.node is not a public module" in f for f in found)
    assert not any("as_output" in f for f in found)
    assert [f.split()[-1] for f in late_imports([plugin], ("hetero_sdk",))] == ["hetero_sdk.graph.node"]


@pytest.mark.parametrize("reads", ["self._model", "self._config"])
def test_a_plugin_reading_a_base_class_private_attribute_is_reported(tmp_path: Path, reads: str) -> None:
    plugin = _package(
        tmp_path,
        f"planted_reader_{reads[6:]}",
        {"__init__": "", "compiled": f"class Compiled:\n    def run(self):\n        return {reads}\n"},
    )
    assert [f.split()[-1] for f in _inherited_private_reads([plugin])] == [reads]
