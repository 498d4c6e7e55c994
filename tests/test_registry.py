"""The one registry type: registration, lookup, and the error for a missing name."""

from __future__ import annotations

import pytest

from hetero_sdk.errors import HeteroSDKError, UnsupportedOperationError, did_you_mean
from hetero_sdk.registry import Registry


def test_decorator_registers_under_every_name_and_returns_the_object():
    kernels: Registry[object] = Registry("kernel")

    @kernels("Add", "Subtract")
    def binary() -> None: ...

    assert kernels.get("Add") is binary and kernels.get("Subtract") is binary
    assert kernels.names() == ["Add", "Subtract"] and list(kernels) == ["Add", "Subtract"] and len(kernels) == 2
    assert "Add" in kernels and "Relu" not in kernels and kernels.find("Relu") is None


def test_a_name_registers_once_unless_replacing():
    table: Registry[int] = Registry("format")
    table.register("v1", 1)
    with pytest.raises(ValueError, match="format 'v1' is registered already"):
        table.register("v1", 2)
    table.register("v1", 3, replace=True)
    assert table.get("v1") == 3


def test_missing_name_raises_the_registrys_error_with_close_matches_and_hint():
    ops: Registry[int] = Registry("op type", UnsupportedOperationError, hint="define it in hetero_sdk.ops")
    ops.register("MatMul", 1)
    with pytest.raises(UnsupportedOperationError, match=r"unknown op type 'Matmul'; did you mean MatMul\?; define it"):
        ops.get("Matmul")
    with pytest.raises(NotImplementedError, match="registered: MatMul"):
        ops.get("Zzz")
    for i in range(20):
        ops.register(f"Op{i}", i)
    with pytest.raises(UnsupportedOperationError, match="21 op types are registered"):
        ops.get("Zzz")


@pytest.mark.parametrize(
    ("name", "known", "hint"),
    [
        ("XLAA", ["TEMPLATE", "XLA"], "did you mean XLA?"),
        ("NUM_STREAM", ["NUM_STREAMS", "PERF_COUNT"], "did you mean NUM_STREAMS?"),
        ("Q", ["XLA", "TEMPLATE"], "available: TEMPLATE, XLA"),
        ("Q", [], "available: none"),
    ],
)
def test_did_you_mean_names_close_matches_else_lists_what_exists(name, known, hint):
    assert did_you_mean(name, known) == hint


def test_a_loader_is_called_on_a_missing_name_and_the_name_looked_up_again() -> None:
    table: Registry[int] = Registry("thing")
    calls = []

    def load() -> None:
        calls.append(1)
        table.register("late", 7, replace=True)

    table.set_loader(load)
    assert table.get("late") == 7 and calls == [1]
    assert table.get("late") == 7 and calls == [1]  # present now: the loader is not called again
    with pytest.raises(HeteroSDKError, match="unknown thing 'absent'"):
        table.get("absent")
    assert calls == [1, 1]
