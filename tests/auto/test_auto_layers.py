"""AUTO is written like a third-party plugin: it imports only the SDK's public names and reads no
private state of the SDK's base classes (the checks tests/test_layers.py runs on HETERO)."""

from __future__ import annotations

from pathlib import Path

from architecture import SDK_LAYERS, layer_violations, private_imports
from test_layers import _inherited_private_reads

AUTO = Path(__file__).resolve().parents[2] / "hetero_sdk" / "auto"


def test_auto_imports_only_public_names() -> None:
    assert private_imports([AUTO], own="hetero_sdk.auto") == []


def test_auto_reads_no_private_state_of_sdk_base_classes() -> None:
    assert _inherited_private_reads([AUTO]) == []


def test_auto_sits_beside_hetero_in_the_layers() -> None:
    assert any({"hetero", "auto"} <= set(layer) for layer in SDK_LAYERS)
    assert [v for v in layer_violations("hetero_sdk", SDK_LAYERS) if "hetero_sdk.auto" in v] == []
