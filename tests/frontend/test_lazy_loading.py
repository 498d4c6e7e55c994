"""Frontends load when a model needs them (as OpenVINO's ``FrontEndManager`` loads a frontend library):
``import hetero_sdk`` imports neither ``onnx`` nor ``jax``, and reading or writing one format imports
only that format's frontend. Each check runs in a fresh interpreter, whose ``sys.modules`` starts empty."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

_HEAVY = ("onnx", "jax", "jaxlib")
_FRONTENDS = ("hetero_sdk.frontend.onnx", "hetero_sdk.frontend.onnx_export", "hetero_sdk.frontend.ir")

_REPORT = f"""
import json, sys
print(json.dumps({{
    "heavy": sorted(m for m in sys.modules if m.split(".")[0] in {_HEAVY!r}),
    "frontends": sorted(f for f in {_FRONTENDS!r} if f in sys.modules),
}}))
"""

_BUILD = """
import numpy as np
import hetero_sdk as hs
from hetero_sdk import opset
x = opset.parameter([2, 3], hs.Type.f32, name="x")
model = hs.Model([opset.relu(opset.add(x, opset.constant(np.ones((2, 3), np.float32))), name="y")], [x], "tiny")
"""


def _modules_after(code: str, cwd: Path) -> dict[str, list[str]]:
    """The heavy packages and frontends in ``sys.modules`` after ``code`` runs in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", code + _REPORT], capture_output=True, text=True, cwd=cwd, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, list[str]] = json.loads(done.stdout.splitlines()[-1])
    return report


@pytest.mark.parametrize("module", ["hetero_sdk", "hetero_sdk.cli"])
def test_importing_the_sdk_or_its_cli_imports_neither_onnx_nor_jax_nor_a_frontend(tmp_path: Path, module: str) -> None:
    assert _modules_after(f"import {module}", tmp_path) == {"heavy": [], "frontends": []}


def test_native_and_ir_models_are_written_and_read_without_onnx(tmp_path: Path) -> None:
    code = _BUILD + (
        "hs.save_model(model, 'tiny.json')\n"
        "back = hs.Core(autoload=False).read_model('tiny.json')\n"
        "assert [o.get_any_name() for o in back.outputs] == ['y']\n"
    )
    assert _modules_after(code, tmp_path) == {"heavy": [], "frontends": []}
    code = _BUILD + "hs.save_model(model, 'tiny.xml')\nhs.convert_model('tiny.xml')\n"
    assert _modules_after(code, tmp_path) == {"heavy": [], "frontends": ["hetero_sdk.frontend.ir"]}


@pytest.mark.parametrize("source", ["'tiny.onnx'", "open('tiny.onnx', 'rb').read()", "'tiny_without_suffix'"])
def test_an_onnx_model_loads_the_onnx_frontend_when_read(tmp_path: Path, source: str) -> None:
    written = _modules_after(_BUILD + "hs.save_model(model, 'tiny.onnx')\n", tmp_path)
    assert "hetero_sdk.frontend.onnx_export" in written["frontends"]
    (tmp_path / "tiny_without_suffix").write_bytes((tmp_path / "tiny.onnx").read_bytes())
    code = (
        "import numpy as np, hetero_sdk as hs\n"
        "from template_plugin import TemplatePlugin\n"
        f"model = hs.convert_model({source})\n"
        "core = hs.Core(plugins={'TEMPLATE': TemplatePlugin()}, autoload=False)\n"
        "x = np.array([[-2, 0, 1], [3, -1, -5]], np.float32)\n"
        "out = core.compile_model(model, 'TEMPLATE')({'x': x})[0]\n"
        "assert out.tolist() == [[0, 1, 2], [4, 0, 0]], out\n"
    )
    report = _modules_after(code, tmp_path)
    assert "onnx" in report["heavy"]
    assert not any(m.split(".")[0] in ("jax", "jaxlib") for m in report["heavy"])
    assert report["frontends"] == ["hetero_sdk.frontend.onnx"]
