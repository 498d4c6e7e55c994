"""``hetero-sdk new-plugin``: the scaffold it writes installs as a device (entry point), passes its own
tests and the conformance kit as generated, and bad names or existing folders are one-line errors that
write nothing."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from hetero_sdk.cli.scaffold import plugin_names, render

from .helpers import Invoke, assert_one_line_error

EXPECTED_FILES = {
    "pyproject.toml",
    "README.md",
    ".gitignore",
    "hetero_sdk_npu/__init__.py",
    "tests/test_npu_device.py",
    ".github/workflows/ci.yml",
}


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def scaffold(invoke: Invoke, tmp_path: Path) -> Path:
    """``hetero-sdk new-plugin npu --dir <tmp>/npu``: the generated package folder."""
    target = tmp_path / "npu"
    result = invoke("new-plugin", "npu", "--dir", str(target))
    assert result.exit_code == 0, (result.output, result.exception)
    assert "created hetero-sdk-npu (device NPU)" in result.stdout
    return target


def test_scaffold_has_the_package_files_with_one_name_in_every_place(scaffold: Path) -> None:
    assert _files(scaffold) == EXPECTED_FILES
    project = tomllib.loads((scaffold / "pyproject.toml").read_text())["project"]
    assert project["name"] == "hetero-sdk-npu"
    assert project["license"] == "Apache-2.0"
    assert project["entry-points"]["hetero_sdk.devices"] == {"NPU": "hetero_sdk_npu:NpuPlugin"}
    assert "python -m pytest" in (scaffold / ".github/workflows/ci.yml").read_text()
    assert "hetero-sdk conformance NPU" in (scaffold / "README.md").read_text()


def test_scaffold_passes_its_own_tests_and_the_conformance_kit_as_generated(scaffold: Path) -> None:
    """The generated tests run the kit on the device (about 8 s): the scaffold is conformant unedited."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=scaffold,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "5 passed" in done.stdout


_GAINED = {  # kernels an author adds to the scaffold's KERNELS table (Softmax over the last axis)
    "Softmax": "lambda x: (lambda e: e / e.sum(-1, keepdims=True))(np.exp(x - x.max(-1, keepdims=True)))",
    "Sigmoid": "lambda x: 1 / (1 + np.exp(-x))",
    "Tanh": "np.tanh",
    "Exp": "np.exp",
    "Abs": "np.abs",
}


@pytest.mark.parametrize("gained", [["Softmax"], list(_GAINED)], ids=["softmax", "every-op-of-the-tests"])
def test_scaffold_tests_keep_passing_when_the_device_gains_ops(scaffold: Path, gained: list[str]) -> None:
    """The generated tests read what the device declines from its SUPPORT table, so adding kernels (the
    tutorial's first step) does not break them; with every op of their chain claimed, they compile and
    run it on the device alone."""
    package = scaffold / "hetero_sdk_npu" / "__init__.py"
    relu = '    "Relu": lambda x: np.maximum(x, np.float32(0)),\n'
    text = package.read_text()
    assert relu in text
    package.write_text(text.replace(relu, relu + "".join(f'    "{op}": {_GAINED[op]},\n' for op in gained)))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "not conformance_kit"],
        cwd=scaffold,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "4 passed, 1 deselected" in done.stdout


def test_help_names_the_kernels_the_scaffold_has(invoke: Invoke, tmp_path: Path) -> None:
    """``new-plugin --help`` names the op types of the generated KERNELS table (read from the rendered file)."""
    source = render(plugin_names("npu"))["hetero_sdk_npu/__init__.py"]
    table = next(
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "KERNELS"
    )
    assert isinstance(table, ast.Dict)
    kernels = [key.value for key in table.keys if isinstance(key, ast.Constant)]
    assert kernels == ["Add", "Relu"]
    result = invoke("new-plugin", "--help")
    assert result.exit_code == 0, result.output
    assert f"numpy kernels for {', '.join(kernels[:-1])} and {kernels[-1]}" in " ".join(result.output.split())


def test_scaffold_entry_point_registers_the_device(scaffold: Path, tmp_path: Path) -> None:
    """Installed as pip would (an entry_points.txt in a dist-info), hs.Core() finds NPU by its entry point."""
    project = tomllib.loads((scaffold / "pyproject.toml").read_text())["project"]
    dist_info = tmp_path / "site" / "hetero_sdk_npu-0.1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: 0.1.0\n")
    group = project["entry-points"]["hetero_sdk.devices"]
    lines = ["[hetero_sdk.devices]", *(f"{name} = {value}" for name, value in group.items())]
    (dist_info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(scaffold), str(tmp_path / "site")])}
    done = subprocess.run(
        [sys.executable, "-m", "hetero_sdk.cli", "devices", "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    npu = next(entry for entry in json.loads(done.stdout)["available"] if entry["device"] == "NPU")
    assert npu["full_name"] == "NPU device (numpy kernels)"
    assert npu["version"]["build_number"] == "0.1.0"


def test_default_folder_is_the_distribution_name(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke("new-plugin", "npu")
    assert result.exit_code == 0, result.output
    assert _files(tmp_path / "hetero-sdk-npu") == EXPECTED_FILES


def test_names_in_their_places() -> None:
    names = plugin_names("my-npu", sdk_version="0.3.0")
    assert (names.distribution, names.package, names.device) == ("hetero-sdk-my-npu", "hetero_sdk_my_npu", "MY_NPU")
    assert (names.plugin_class, names.compiled_class) == ("MyNpuPlugin", "MyNpuCompiledModel")
    assert plugin_names("my_npu").device == "MY_NPU"


def test_existing_folder_is_an_error_and_nothing_is_written(invoke: Invoke, tmp_path: Path) -> None:
    target = tmp_path / "npu"
    target.mkdir()
    (target / "mine.txt").write_text("keep me")
    result = invoke("new-plugin", "npu", "--dir", str(target))
    assert_one_line_error(result, "PathExistsError", str(target), "already exists", exit_code=1)
    assert _files(target) == {"mine.txt"}
    assert (target / "mine.txt").read_text() == "keep me"


@pytest.mark.parametrize(
    ("name", "fragments"),
    [
        ("MyNpu", ["'MyNpu' is not a plugin name", "did you mean 'mynpu'?"]),
        ("my npu", ["'my npu' is not a plugin name", "did you mean 'my-npu'?"]),
        ("9lives", ["'9lives' is not a plugin name"]),
        ("npu-", ["'npu-' is not a plugin name"]),
        ("template", ["device TEMPLATE is already installed", "template_plugin:TemplatePlugin"]),
    ],
)
def test_bad_names_are_one_line_errors_and_nothing_is_written(
    invoke: Invoke, tmp_path: Path, name: str, fragments: list[str]
) -> None:
    result = invoke("new-plugin", name, "--dir", str(tmp_path / "out"))
    assert_one_line_error(result, "DeviceNameError", *fragments, exit_code=1)
    assert not (tmp_path / "out").exists()
