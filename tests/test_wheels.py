"""The shipped distributions build as wheels and work installed from them, not only from the checkout:
hetero-sdk and the plugin packages are built with pip (build isolation: each package's own
``[build-system]``, so an SPDX ``license`` string needs no old setuptools), installed into a fresh
virtual environment, and ``hetero-sdk devices`` there finds every device through the wheels' entry
points.

The fresh environment borrows this environment's third-party packages (numpy, jax, onnxruntime...)
through a path file rather than downloading them, which keeps the check to the cost of the builds;
the checkout's own editable installs stay invisible there (path files of a borrowed folder are not
run). The wheels are built from a copy of the checkout's files (git's tracked and untracked, not
ignored ones), so that a stale ``build/`` folder cannot slip old modules into them and the checkout
gets no build artifacts. Skipped when pip cannot reach a package index or its cache for the build
backend, or when git is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = {
    "hetero_sdk": ".",
    "hetero_sdk_jax": "plugins/jax",
    "hetero_sdk_ort": "plugins/ort",
    "hetero_sdk_tutorial": "plugins/tutorial",
    "hetero_sdk_ray": "plugins/ray",
    "hetero_sdk_contrib": "plugins/contrib",
}
"""Each distribution's import name and its project folder in the checkout."""
_OFFLINE = (
    "Could not find a version that satisfies",
    "No matching distribution",
    "Failed to establish a new connection",
)


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The six wheels, built by pip from a copy of the checkout."""
    if shutil.which("git") is None:
        pytest.skip("git is needed to list the checkout's files")
    listed = _run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], ROOT)
    if listed.returncode != 0:
        pytest.skip(f"not a git checkout: {listed.stderr.strip()}")
    source = tmp_path_factory.mktemp("source")
    for name in filter(None, listed.stdout.split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    out = tmp_path_factory.mktemp("wheels")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(out)]
    done = _run([*command, *(str(source / folder) for folder in PROJECTS.values())], out)
    if done.returncode != 0 and any(text in done.stderr for text in _OFFLINE):
        pytest.skip(f"pip cannot fetch the build backend (offline?): {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stderr[-4000:]
    return out


@pytest.fixture(scope="module")
def environment(wheels: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheels installed; returns its folder."""
    home = tmp_path_factory.mktemp("fresh")
    venv.EnvBuilder(with_pip=False).create(home / "env")
    python = home / "env" / "bin" / "python"
    site = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], home).stdout.strip()
    )
    (site / "borrowed_third_party.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    found = sorted(str(p) for p in wheels.glob("*.whl"))
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "--quiet"]
    done = _run([*install, *found], home)
    assert done.returncode == 0, done.stderr[-4000:]
    return home / "env"


def test_every_shipped_package_builds_one_wheel(wheels: Path) -> None:
    built = {p.name.split("-")[0] for p in wheels.glob("*.whl")}
    assert built == set(PROJECTS)


def test_the_fresh_environment_imports_the_installed_wheels_not_the_checkout(environment: Path) -> None:
    python = environment / "bin" / "python"
    code = "import hetero_sdk, template_plugin, hetero_sdk_ort, hetero_sdk_tutorial; print(hetero_sdk.__file__)"
    done = _run([str(python), "-c", code], environment.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    assert Path(done.stdout.strip()).is_relative_to(environment), done.stdout
    templates = _run(
        [str(python), "-c", "import hetero_sdk.cli, pathlib; print(pathlib.Path(hetero_sdk.cli.__file__).parent)"],
        environment.parent,
    )
    assert (Path(templates.stdout.strip()) / "templates" / "plugin" / "plugin.py.tmpl").is_file()
    assert (Path(templates.stdout.strip()) / "templates" / "extension" / "extension.py.tmpl").is_file()


def test_hetero_sdk_extensions_lists_the_contrib_wheel(environment: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = _run([str(environment / "bin" / "hetero-sdk"), "extensions", "--json"], environment.parent, env)
    assert done.returncode == 0, done.stderr[-3000:]
    contrib = next(e for e in json.loads(done.stdout) if e["name"] == "contrib")
    assert contrib["distribution"] == "hetero-sdk-contrib" and contrib["status"] == "loaded"
    assert {"BiasGelu", "FusedMatMul", "QuickGelu"} <= set(contrib["ops"])


def test_hetero_sdk_devices_lists_the_devices_of_the_wheels(environment: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["JAX_PLATFORMS"] = "cpu"
    done = _run([str(environment / "bin" / "hetero-sdk"), "devices", "--json"], environment.parent, env)
    assert done.returncode == 0, done.stderr[-3000:]
    listing = json.loads(done.stdout)
    available = {d["device"] for d in listing["available"]}
    assert {"TEMPLATE", "XLA", "ORT", "TUTORIAL"} <= available, listing
    meta = {d["device"] if isinstance(d, dict) else d for d in listing["meta"]}
    assert {"HETERO", "AUTO"} <= meta
    everything = available | meta | {d["device"] if isinstance(d, dict) else d for d in listing["unavailable"]}
    # listed: unavailable as RAY without ray installed, available as RAY.0, RAY.1... with it
    assert any(name.split(".")[0] == "RAY" for name in everything), everything
