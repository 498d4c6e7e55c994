"""The checks that keep hetero-sdk's architecture: import cycles, layers, imports hidden inside functions,
and plugins reaching past the public API (with :func:`code_strings`, which checks on the code's
strings read). ``tests/test_layers.py`` runs them on the real packages and on planted defects, so a
check that stops biting fails too.

Imports under ``if TYPE_CHECKING:`` are left out: they never run, and annotations may name any layer.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import grimp

__all__ = [
    "FACADE_MODULES", "PLUGIN_PACKAGES", "PUBLIC_MODULES", "SDK_LAYERS", "code_strings", "import_cycles",
    "late_imports", "layer_violations", "private_imports",
]  # fmt: skip

SDK_LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "errors",
        "registry",
        "element_type",
        "shape",
        "array_api",
        "device_name",
        "properties",
        "rt_info",
        "blob",
        "layout",
    ),
    ("graph",),
    ("ops",),
    ("opset",),
    ("extensions",),  # ops, rules and kernels from outside the SDK: the layers above read their tables
    ("reference",),
    ("serialization",),
    ("transformations",),
    ("preprocess",),  # PrePostProcessor: builds ops into a model, as a transformation does
    ("frontend",),
    ("runtime",),
    ("plugin",),
    ("core", "core_config", "core_hints"),
    ("",),  # the package facade, hetero_sdk/__init__.py: what users and plugins import
    ("hetero", "auto", "onnx_backend"),
    ("samples", "conformance"),
    ("genai",),  # generation loops over a decoder: uses Core, above the devices; the CLI's generate uses it
    ("cli",),
)
"""hetero_sdk's layers, lowest first: a module never imports one of a higher layer."""

PUBLIC_MODULES = frozenset(
    {
        "hetero_sdk", "hetero_sdk.array_api", "hetero_sdk.device_name", "hetero_sdk.element_type",
        "hetero_sdk.errors", "hetero_sdk.extensions", "hetero_sdk.frontend.onnx_export", "hetero_sdk.graph",
        "hetero_sdk.ops", "hetero_sdk.opset", "hetero_sdk.plugin",
        "hetero_sdk.properties", "hetero_sdk.reference", "hetero_sdk.registry", "hetero_sdk.rt_info",
        "hetero_sdk.runtime", "hetero_sdk.serialization", "hetero_sdk.shape", "hetero_sdk.transformations",
    }
)  # fmt: skip
"""The SDK modules HETERO may import from, each only the names in its ``__all__``."""

FACADE_MODULES = frozenset(
    {
        "hetero_sdk", "hetero_sdk.plugin", "hetero_sdk.extensions", "hetero_sdk.errors", "hetero_sdk.properties",
        "hetero_sdk.opset",
    }
)  # fmt: skip
"""The SDK modules a device plugin or an op extension may import from, each only the names in its
``__all__``: the plugin facade, the extension API and the public user API (as a pytest plugin imports
``pytest``, never ``_pytest``)."""

PLUGIN_PACKAGES = (
    "template_plugin", "hetero_sdk_jax", "hetero_sdk_tutorial", "hetero_sdk_ort", "hetero_sdk_contrib",
)  # fmt: skip
"""The device packages shipped with the SDK, written as any third party's."""


def _graph(packages: Sequence[str]) -> grimp.ImportGraph:
    return grimp.build_graph(
        *packages, include_external_packages=False, exclude_type_checking_imports=True, cache_dir=None
    )


def import_cycles(packages: Sequence[str]) -> list[list[str]]:
    """Every import cycle inside each of ``packages``: the modules of each strongly connected group."""
    graph = _graph(packages)
    found: list[list[str]] = []
    for package in packages:
        modules = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
        found += [group for group in _strongly_connected(graph, modules) if len(group) > 1]
    return found


def _strongly_connected(graph: grimp.ImportGraph, modules: list[str]) -> list[list[str]]:
    """Tarjan's strongly connected components of the import graph restricted to ``modules``."""
    inside = set(modules)
    edges = {m: sorted(set(graph.find_modules_directly_imported_by(m)) & inside) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for child in edges[node]:
            if child not in index:
                visit(child)
                low[node] = min(low[node], low[child])
            elif child in on_stack:
                low[node] = min(low[node], index[child])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            groups.append(sorted(group))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(modules) + 100))
    try:
        for module in modules:
            if module not in index:
                visit(module)
    finally:
        sys.setrecursionlimit(limit)
    return groups


def layer_violations(package: str, layers: Sequence[Sequence[str]]) -> list[str]:
    """Imports of ``package``'s modules from a higher layer, as ``importer -> imported (line)``.

    :param layers: lowest first; each names the first-level submodules in it (``""``: the package itself).
    """
    rank = {name: level for level, names in enumerate(layers) for name in names}
    graph = _graph([package])

    def level(module: str) -> int | None:
        parts = module.split(".")
        return rank.get(parts[1] if len(parts) > 1 else "")

    problems = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            low, high = level(importer), level(imported)
            if low is not None and high is not None and high > low:
                lines = graph.get_import_details(importer=importer, imported=imported)
                where = ", ".join(str(d["line_number"]) for d in lines)
                problems.append(f"{importer} -> {imported} (line {where})")
    return problems


def late_imports(roots: Iterable[Path], packages: Sequence[str], allowed: Iterable[str] = ()) -> list[str]:
    """Imports of ``packages`` inside functions, as ``file:line module``: each hides a dependency from
    the module's header (and often a cycle). ``allowed`` names files that may import lazily."""
    exempt = set(allowed)
    found = []
    for root in roots:
        for path in sorted(Path(root).rglob("*.py")):
            if path.as_posix() in exempt or any(path.as_posix().endswith(e) for e in exempt):
                continue
            tree = ast.parse(path.read_text(), str(path))
            for function in ast.walk(tree):
                if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for node in ast.walk(function):
                    names = []
                    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                        names = [node.module]
                    elif isinstance(node, ast.Import):
                        names = [alias.name for alias in node.names]
                    for name in names:
                        if name.split(".")[0] in packages:
                            found.append(f"{path}:{node.lineno} {name}")
    return found


def private_imports(roots: Iterable[Path], public: Iterable[str] = PUBLIC_MODULES, own: str = "") -> list[str]:
    """Imports of the SDK that a plugin may not make: from a module that is not public, or of a name
    its public module does not export (``__all__``), as ``file:line what``.

    :param own: the plugin's own package when it lives inside ``hetero_sdk`` (HETERO): free to import itself.
    """
    allowed = set(public)
    found = []
    for root in roots:
        for path in sorted(Path(root).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                own_module = (
                    bool(own) and (node.module or "").startswith(own) if isinstance(node, ast.ImportFrom) else False
                )
                if (
                    isinstance(node, ast.ImportFrom)
                    and node.module
                    and node.module.split(".")[0] == "hetero_sdk"
                    and not own_module
                ):
                    for alias in node.names:
                        problem = _private(node.module, alias.name, allowed)
                        if problem:
                            found.append(f"{path}:{node.lineno} {problem}")
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.name.split(".")[0] == "hetero_sdk" and alias.name not in allowed:
                            found.append(f"{path}:{node.lineno} import {alias.name} (not a public module)")
    return found


def _sdk_module(module: str | None, own: str) -> bool:
    """True for an absolute import from the SDK that is not the plugin's own package."""
    if not module or module.split(".")[0] != "hetero_sdk":
        return False
    return not (own and (module == own or module.startswith(own + ".")))


def _private(module: str, name: str, public: set[str]) -> str | None:
    if f"{module}.{name}" in public:
        return None  # a public submodule
    if module not in public:
        return f"from {module} import {name} ({module} is not a public module)"
    exported = getattr(importlib.import_module(module), "__all__", None)
    if exported is None or name not in exported:
        return f"from {module} import {name} ({name} is not in {module}.__all__)"
    return None


def ensure_importable(path: Path) -> None:
    """Puts ``path`` first on ``sys.path`` (for checking packages made in a test's temporary folder)."""
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


def code_strings(path: Path) -> list[tuple[int, str]]:
    """String constants outside docstrings."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]
