"""The typed contract: :class:`hetero_sdk.plugin.DevicePlugin` and the optional-hook Protocols state the
hookspecs' signatures, and mypy rejects a plugin whose hook differs from them."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hetero_sdk.plugin import ContextProvider, DevicePlugin, ModelImporter, VersionReporter, hookspecs

ROOT = Path(__file__).resolve().parents[2]
PROTOCOLS = (DevicePlugin, ModelImporter, ContextProvider, VersionReporter)


def _hooks(protocol: type) -> list[str]:
    return [name for name, value in vars(protocol).items() if inspect.isfunction(value) and not name.startswith("_")]


def test_the_protocols_cover_every_hook_once() -> None:
    covered = sorted(hook for protocol in PROTOCOLS for hook in _hooks(protocol))
    specs = sorted(n for n, v in vars(hookspecs).items() if inspect.isfunction(v) and hasattr(v, "hetero_sdk_spec"))
    assert covered == specs
    assert _hooks(DevicePlugin) == ["get_property", "set_property", "compile_model", "query_model"]
    assert set(_hooks(DevicePlugin)) == set(hookspecs.REQUIRED_HOOKS)


@pytest.mark.parametrize("hook", [h for p in PROTOCOLS for h in _hooks(p)])
def test_each_protocol_method_has_its_hookspec_signature(hook: str) -> None:
    """Same argument names in the same order, same annotations (as written) and return type."""
    protocol = next(p for p in PROTOCOLS if hook in _hooks(p))
    method = inspect.signature(getattr(protocol, hook))
    spec = inspect.signature(getattr(hookspecs, hook))
    assert next(iter(method.parameters)) == "self"
    stated = [(p.name, p.annotation) for p in list(method.parameters.values())[1:]]
    assert stated == [(p.name, p.annotation) for p in spec.parameters.values()]
    assert method.return_annotation == spec.return_annotation


PLUGIN = """
from __future__ import annotations

from typing import Any

from hetero_sdk import Core, Model
from hetero_sdk.plugin import CompiledModel, DevicePlugin, ModelImporter, RemoteContext, hookimpl


class Complete:
    @hookimpl
    def get_property(self, name: str, arguments: dict[str, Any], device_name: str, core: Core) -> Any:
        return None

    @hookimpl
    def set_property(self, properties: dict[str, Any], device_name: str, core: Core) -> None:
        return None

    @hookimpl
    def compile_model(
        self, model: Model, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
    ) -> CompiledModel:
        raise NotImplementedError

    @hookimpl
    def query_model(self, model: Model, properties: dict[str, Any], device_name: str, core: Core) -> dict[str, str]:
        return {}


class LeavesOutContext(Complete):
    @hookimpl
    def compile_model(  # type: ignore[override]
        self, model: Model, properties: dict[str, Any], device_name: str, core: Core
    ) -> CompiledModel:
        raise NotImplementedError


class AnswersAList(Complete):
    @hookimpl
    def query_model(  # type: ignore[override]
        self, model: Model, properties: dict[str, Any], device_name: str, core: Core
    ) -> list[str]:
        return []


complete: DevicePlugin = Complete()
leaves_out_context: DevicePlugin = LeavesOutContext()  # line 47
answers_a_list: DevicePlugin = AnswersAList()  # line 48
no_import: ModelImporter = Complete()  # line 49
"""


def test_mypy_checks_a_plugin_against_the_protocols(tmp_path: Path) -> None:
    """The complete plugin passes; a hook leaving out ``context``, a hook returning the wrong type and a
    plugin without ``import_model`` used as a ModelImporter are each an error on their line."""
    if subprocess.run([sys.executable, "-m", "mypy", "--version"], capture_output=True, check=False).returncode:
        pytest.skip("mypy is not installed (pip install -e '.[dev]')")
    source = tmp_path / "tiny_plugin.py"
    source.write_text(textwrap.dedent(PLUGIN).lstrip())
    lines = source.read_text().splitlines()
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-error-summary", str(source)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    where = sorted({int(line.split(":")[1]) for line in errors})
    expected = [i + 1 for i, line in enumerate(lines) if line.endswith(("# line 47", "# line 48", "# line 49"))]
    assert where == expected, done.stdout
    assert all('"DevicePlugin"' in line or '"ModelImporter"' in line for line in errors), done.stdout
