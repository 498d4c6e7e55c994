"""An entry point that cannot be loaded (the Core then reports the device unavailable) names the file
its module came from: a source folder shadowing
the installed package (``python -m pytest`` puts the working folder first on ``sys.path``) is the usual
cause, and the message says so."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from hetero_sdk.plugin.discovery import ENTRY_POINT_GROUP, load_entry_point


def test_a_missing_attribute_names_the_module_file_that_shadowed_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shadow = tmp_path / "shadowing_vendor_pkg"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("# a source checkout without the plugin class\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "shadowing_vendor_pkg", raising=False)
    ep = EntryPoint(name="VENDOR", value="shadowing_vendor_pkg:VendorPlugin", group=ENTRY_POINT_GROUP)
    with pytest.raises(AttributeError) as info:
        load_entry_point(ep)
    message = str(info.value)
    assert "has no attribute 'VendorPlugin'" in message
    assert str(shadow / "__init__.py") in message and "python -P" in message


def test_a_module_that_does_not_import_says_so() -> None:
    ep = EntryPoint(name="GONE", value="no_such_vendor_module_xyz:Plugin", group=ENTRY_POINT_GROUP)
    with pytest.raises(ModuleNotFoundError, match=r"no_such_vendor_module_xyz.*nowhere"):
        load_entry_point(ep)
