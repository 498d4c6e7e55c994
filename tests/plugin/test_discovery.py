"""Entry-point discovery: lazy, and isolated: a broken installed plugin never breaks Core()."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hetero_sdk as hs
from hetero_sdk.errors import DeviceUnavailableError
from hetero_sdk.plugin.discovery import ENTRY_POINT_GROUP, discover

BROKEN_MODULE = 'raise ImportError("libbroken.so: cannot open shared object file")\n'
CRASHY_MODULE = textwrap.dedent(
    """
    class CrashyPlugin:
        def __init__(self):
            raise RuntimeError("no CRASHY accelerator found on this machine")
    """
)
LAZY_MODULE = textwrap.dedent(
    """
    from template_plugin import TemplatePlugin
    IMPORTED = True
    """
)


def install_distribution(site: Path, dist: str, entry_points: dict[str, str], modules: dict[str, str]) -> None:
    """Writes what pip would: a ``.dist-info`` with ``entry_points.txt`` and the modules beside it."""
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{lines}")
    for name, source in modules.items():
        (site / f"{name}.py").write_text(source)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A directory holding a BROKEN (import fails) and a CRASHY (constructor fails) distribution."""
    install_distribution(
        tmp_path, "hetero_sdk_broken", {"BROKEN": "broken_device:Plugin"}, {"broken_device": BROKEN_MODULE}
    )
    install_distribution(tmp_path, "hetero_sdk_crashy", {"CRASHY": "crashy_device:CrashyPlugin"},
                         {"crashy_device": CRASHY_MODULE})  # fmt: skip
    return tmp_path


CHILD = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import hetero_sdk as hs
    from hetero_sdk import opset
    from hetero_sdk.errors import DeviceUnavailableError

    core = hs.Core()
    x = opset.parameter([2], hs.Type.f32, name="x")
    model = hs.Model([opset.relu(x, name="y")], [x], name="m")
    report = {"available": core.available_devices, "unavailable": core.unavailable_devices,
              "result": core.compile_model(model, "TEMPLATE")({"x": np.array([-1, 2], np.float32)})[0].tolist()}
    for device in ("BROKEN", "CRASHY"):
        try:
            core.compile_model(model, device)
        except DeviceUnavailableError as exc:
            report[device] = [str(exc), type(exc.__cause__).__name__, str(exc.__cause__)]
    print(json.dumps(report))
    """
)


def test_broken_installed_plugins_leave_a_fresh_interpreter_working(site: Path) -> None:
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert "TEMPLATE" in report["available"]
    assert not {"BROKEN", "CRASHY"} & set(report["available"])
    assert "libbroken.so" in report["unavailable"]["BROKEN"]
    assert "no CRASHY accelerator" in report["unavailable"]["CRASHY"]
    assert report["result"] == [0.0, 2.0]
    message, cause, cause_text = report["BROKEN"]
    assert "'BROKEN' is unavailable" in message and cause == "ImportError" and "libbroken.so" in cause_text
    message, cause, cause_text = report["CRASHY"]
    assert "'CRASHY' is unavailable" in message and cause == "RuntimeError" and "no CRASHY" in cause_text


def test_broken_plugins_in_process_raise_device_unavailable_chained_to_the_cause(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(site))
    core = hs.Core()
    assert {"BROKEN", "CRASHY", "TEMPLATE"} <= set(core.registered_devices)
    assert "TEMPLATE" in core.available_devices
    assert set(core.unavailable_devices) >= {"BROKEN", "CRASHY"}
    with pytest.raises(DeviceUnavailableError, match="BROKEN") as info:
        core.get_property("BROKEN", "FULL_DEVICE_NAME")
    assert isinstance(info.value.__cause__, ImportError)
    with pytest.raises(DeviceUnavailableError) as info:
        core.get_versions("CRASHY")
    assert isinstance(info.value.__cause__, RuntimeError)
    assert isinstance(info.value, RuntimeError)


def test_plugins_are_imported_only_when_their_device_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_distribution(
        tmp_path, "hetero_sdk_lazy", {"LAZY": "lazy_device:TemplatePlugin"}, {"lazy_device": LAZY_MODULE}
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lazy_device", raising=False)
    core = hs.Core()
    assert "LAZY" in core.registered_devices
    assert "lazy_device" not in sys.modules
    assert core.get_property("LAZY", "DEVICE_ARCHITECTURE") == "numpy"
    assert "lazy_device" in sys.modules


def test_discover_finds_entry_points_without_importing(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(site))
    found = discover()
    assert found["BROKEN"].value == "broken_device:Plugin"
    assert found["TEMPLATE"].value == "template_plugin:TemplatePlugin"
    assert "broken_device" not in sys.modules


def test_duplicate_device_name_keeps_the_first_and_logs(
    site: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    install_distribution(site, "hetero_sdk_other", {"BROKEN": "other_device:Plugin"}, {})
    monkeypatch.syspath_prepend(str(site))
    first = discover()["BROKEN"].value
    assert first in {"broken_device:Plugin", "other_device:Plugin"}
    assert "registered twice" in caplog.text


def test_autoload_false_ignores_installed_plugins() -> None:
    assert hs.Core(autoload=False).registered_devices == []
