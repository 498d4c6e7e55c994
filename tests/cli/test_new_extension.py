"""``hetero-sdk new-extension``: the package it writes adds one op with a kernel and an ONNX rule, passes
its own tests as generated and, installed, is listed by ``hetero-sdk extensions``; bad names and
existing folders are one-line errors that write nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from hetero_sdk.cli.new_extension import extension_names

from .helpers import Invoke, assert_one_line_error

EXPECTED_FILES = {
    "pyproject.toml",
    "README.md",
    ".gitignore",
    "hetero_sdk_myops/__init__.py",
    "tests/test_myops_extension.py",
}


@pytest.fixture
def scaffold(invoke: Invoke, tmp_path: Path) -> Path:
    """``hetero-sdk new-extension myops --dir <tmp>/myops``: the generated package folder."""
    target = tmp_path / "myops"
    result = invoke("new-extension", "myops", "--dir", str(target))
    assert result.exit_code == 0, (result.output, result.exception)
    assert "created hetero-sdk-myops (op MyopsSoftsign, ONNX domain com.example.myops)" in result.stdout
    return target


def test_scaffold_has_the_package_files_and_registers_the_extension_entry_point(scaffold: Path) -> None:
    assert {p.relative_to(scaffold).as_posix() for p in scaffold.rglob("*") if p.is_file()} == EXPECTED_FILES
    project = tomllib.loads((scaffold / "pyproject.toml").read_text())["project"]
    assert project["name"] == "hetero-sdk-myops"
    assert project["entry-points"]["hetero_sdk.extensions"] == {"myops": "hetero_sdk_myops:extension"}


def test_scaffold_passes_its_own_tests_as_generated(scaffold: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=scaffold, env=env,
                          capture_output=True, text=True, check=False, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout


def test_installed_scaffold_is_listed_with_its_op(scaffold: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    info = site / "hetero_sdk_myops-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hetero-sdk-myops\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[hetero_sdk.extensions]\nmyops = hetero_sdk_myops:extension\n")
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{scaffold}"}
    done = subprocess.run([sys.executable, "-m", "hetero_sdk.cli", "extensions", "--json"], env=env,
                          capture_output=True, text=True, check=False, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    listed = {e["name"]: e for e in json.loads(done.stdout)}
    assert listed["myops"]["distribution"] == "hetero-sdk-myops"
    assert listed["myops"]["ops"] == ["MyopsSoftsign"] and listed["myops"]["status"] == "loaded"


def test_names_in_their_places() -> None:
    names = extension_names("my-ops")
    assert (names.distribution, names.package, names.op_type, names.domain) == (
        "hetero-sdk-my-ops", "hetero_sdk_my_ops", "MyOpsSoftsign", "com.example.my_ops"
    )  # fmt: skip


def test_existing_folder_is_an_error_and_nothing_is_written(invoke: Invoke, tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.mkdir()
    result = invoke("new-extension", "myops", "--dir", str(target))
    assert_one_line_error(result, "PathExistsError", str(target), "already exists", exit_code=1)
    assert list(target.iterdir()) == []


@pytest.mark.parametrize("name", ["My Ops", "9ops", "ops-"])
def test_bad_names_are_one_line_errors_and_nothing_is_written(invoke: Invoke, tmp_path: Path, name: str) -> None:
    result = invoke("new-extension", name, "--dir", str(tmp_path / "out"))
    assert_one_line_error(result, "PluginValidationError", "is not an extension name", exit_code=1)
    assert not (tmp_path / "out").exists()
