"""Claims about the code base's shape that reviews would otherwise have to catch."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from architecture import FACADE_MODULES, code_strings, private_imports

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_PACKAGES = sorted(str(p.parent.relative_to(ROOT)) for p in ROOT.glob("plugins/*/hetero_sdk_*/__init__.py"))
"""The device packages under ``plugins/`` (each ``hetero_sdk_<name>``)."""
CORE_PACKAGES = ["graph", "ops", "reference", "serialization", "transformations", "plugin", "runtime", "hetero"]
CORE_MODULES = [
    "core.py",
    "device_name.py",
    "blob.py",
    "errors.py",
    "properties/__init__.py",
    "properties/device.py",
    "properties/hint.py",
    "properties/hetero.py",
    "shape.py",
    "element_type.py",
]
PLUGIN_SOURCES = ["template_plugin", *PLUGIN_PACKAGES]
"""Every shipped device package: TEMPLATE and each ``plugins/*/hetero_sdk_*``."""
DEVICE_LITERAL = re.compile(r"""["'](TEMPLATE|XLA|GPU|TPU)(\.\d+)?["']""")


def _core_files() -> list[Path]:
    files = [ROOT / "hetero_sdk" / m for m in CORE_MODULES]
    for package in CORE_PACKAGES:
        files += sorted((ROOT / "hetero_sdk" / package).rglob("*.py"))
    return files


@pytest.mark.parametrize("path", _core_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_core_code_never_names_a_device(path: Path) -> None:
    """Devices, TEMPLATE and HETERO included, are plugins: the core routes by name, never on a name."""
    offending = [(line, text) for line, text in code_strings(path) if DEVICE_LITERAL.fullmatch(repr(text))]
    assert not offending, f"{path.relative_to(ROOT)} names devices in code: {offending}"


@pytest.mark.parametrize(
    "package",
    [
        "template_plugin",
        "plugins/jax/hetero_sdk_jax",
        "plugins/ray/hetero_sdk_ray",
        "plugins/tutorial",
        "plugins/ort",
        "plugins/contrib/hetero_sdk_contrib",
    ],
)
def test_plugins_import_only_public_sdk_names(package: str) -> None:
    """Plugins are written like third-party ones: no private SDK module or name."""
    private = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hetero_sdk"):
                module_private = any(part.startswith("_") for part in (node.module or "").split("."))
                names_private = [a.name for a in node.names if a.name.startswith("_") and a.name != "__version__"]
                if module_private or names_private:
                    private.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not private, f"private SDK imports: {private}"


@pytest.mark.parametrize("package", PLUGIN_SOURCES)
def test_plugins_import_the_sdk_only_through_the_facade(package: str) -> None:
    """A shipped device imports the SDK as an outside one would: :mod:`hetero_sdk.plugin` and the public
    user API (``hetero_sdk``, ``errors``, ``properties``, ``opset``), each name in its ``__all__``."""
    assert private_imports([ROOT / package], FACADE_MODULES) == []


def test_the_facade_rule_reports_a_plugin_reaching_past_the_facade(tmp_path: Path) -> None:
    plugin = tmp_path / "reaching_plugin"
    plugin.mkdir()
    (plugin / "__init__.py").write_text(
        "from hetero_sdk.ops import reduced_axes\n"  # public in the SDK, but not the facade
        "from hetero_sdk.runtime import CompiledModel\n"
        "import hetero_sdk.transformations\n"
        "from hetero_sdk.plugin import SupportTable, hookimpl, reduced_axes as axes\n"
        "from hetero_sdk.plugin import hookspecs\n"  # a submodule behind the facade
        "from hetero_sdk import Model, errors, opset\n"
    )
    found = [f.split(" ", 1)[1] for f in private_imports([plugin], FACADE_MODULES)]
    assert found == [
        "from hetero_sdk.ops import reduced_axes (hetero_sdk.ops is not a public module)",
        "from hetero_sdk.runtime import CompiledModel (hetero_sdk.runtime is not a public module)",
        "import hetero_sdk.transformations (not a public module)",
        "from hetero_sdk.plugin import hookspecs (hookspecs is not in hetero_sdk.plugin.__all__)",
    ]


def test_every_facade_name_resolves_and_is_documented() -> None:
    """The facade's ``__all__`` lists names it has (the ONNX ones load on first use), and its docstring
    names each group's members the docs list."""
    import hetero_sdk.plugin as facade

    missing = [name for name in facade.__all__ if not hasattr(facade, name)]
    assert missing == []
    assert len(set(facade.__all__)) == len(facade.__all__)


def test_the_sdk_and_shipped_devices_never_import_the_example_devices() -> None:
    """TUTORIAL and ORT are examples a user may not install: nothing else depends on them."""
    examples = ("hetero_sdk_tutorial", "hetero_sdk_ort")
    offending = []
    for root in ("hetero_sdk", "template_plugin", "plugins/jax/hetero_sdk_jax"):
        for path in sorted((ROOT / root).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom):
                    modules = [node.module or ""]
                if any(m.split(".")[0] in examples for m in modules):
                    offending.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offending, f"imports of an example device: {offending}"


def test_the_public_opset_lists_every_sdk_op_once_sorted() -> None:
    """Every op defined in hetero_sdk.ops has its factory in the reviewable opset list (named as the
    OpenVINO type in snake_case; compared without underscores: TopK is topk, HSwish is hswish; If is
    if_op, as in OpenVINO, since if is a keyword)."""
    from hetero_sdk import opset
    from hetero_sdk.ops import sdk_op_types

    sdk_ops = sdk_op_types()
    listed = {name.replace("_", "") for name in opset.__all__}
    missing = [t for t in sdk_ops if t.lower() not in listed and f"{t.lower()}op" not in listed]  # if_op
    assert not missing, f"ops defined in hetero_sdk.ops but missing from hetero_sdk.opset: {missing}"
    assert opset.__all__ == sorted(set(opset.__all__))


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "hetero_sdk", "template_plugin", "plugins", "tests", "bench"],
        ["ruff", "format", "--check", "hetero_sdk", "template_plugin", "plugins", "tests", "bench"],
        ["mypy", "hetero_sdk", "template_plugin", *PLUGIN_PACKAGES],
    ],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_linters_are_clean(command: list[str]) -> None:
    """ruff and mypy (the dev extra) pass on the whole tree."""
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed (pip install -e '.[dev]')")
    done = subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """Every import of a module: ``(line, module, names)`` (``names`` empty for ``import module``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, node.module or "", [alias.name for alias in node.names]))
    return found


def test_the_oracle_imports_nothing_from_a_device() -> None:
    """``hetero_sdk.reference`` is the oracle every device is compared with: it imports no device
    (TEMPLATE's fast kernels included), so that a device's bug cannot hide in it."""
    devices = ("template_plugin", "hetero_sdk_")
    offending = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sorted(ROOT.joinpath("hetero_sdk", "reference").rglob("*.py"))
        for line, module, _ in _imports(path)
        if module.startswith(devices)
    ]
    assert not offending, offending


def test_templates_kernels_call_no_reference_convolution() -> None:
    """TEMPLATE's convolutions are its own (``template_plugin.convolution``): no TEMPLATE module imports the
    reference's convolution module or a name it defines, so the kit's comparison of the two means something."""
    defined = {
        node.name
        for node in ast.parse(ROOT.joinpath("hetero_sdk", "reference", "convolution.py").read_text()).body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }
    offending = [
        f"{path.relative_to(ROOT)}:{line} imports {module} {sorted(set(names) & defined) or ''}"
        for path in sorted(ROOT.joinpath("template_plugin").rglob("*.py"))
        for line, module, names in _imports(path)
        if module.startswith("hetero_sdk.reference")
        and (module == "hetero_sdk.reference.convolution" or "convolution" in names or set(names) & defined)
    ]
    assert defined >= {"convolution", "correlate"} and not offending, offending
