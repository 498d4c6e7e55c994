"""Optional, with ``--onnx-node-tests``: ONNX's backend node tests on the device, one check per case
(``test_onnx_node.py::test_onnx_node_case[test_abs]``), judged against the device's expected-failures
file (``--onnx-node-expected FILE``; by default the one shipped for the SDK's own devices).

A case that passes, passes; a listed case that does not pass is ``xfailed`` with its reason; a case not
listed that does not pass fails (a regression); a listed case that passes fails too ("now passes:
remove it from the file"), as the kit's own expected failures do.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hetero_sdk.conformance.onnx_node import DeviceRunner, Expected, ExpectedFileError, load_case, read, run_case
from hetero_sdk.conformance.onnx_node.cases import CaseInfo, cache_dir, ensure_cache
from hetero_sdk.conformance.onnx_node.expected import shipped_file
from hetero_sdk.conformance.options import Options
from hetero_sdk.conformance.target import Target

_OFF = "off"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case_name" not in metafunc.fixturenames:
        return
    on = bool(metafunc.config.getoption("onnx_node_tests", False)) and metafunc.config.getoption("device", None)
    names = sorted(ensure_cache()) if on else [_OFF]
    metafunc.parametrize("case_name", names)


@pytest.fixture(scope="session")
def expected_failures(options: Options) -> tuple[Path | None, dict[str, Expected]]:
    """The expected-failures file in use and its entries."""
    path = options.onnx_node_expected or shipped_file(options.device)
    if path is None:
        return None, {}
    try:
        return path, read(path)
    except (OSError, ExpectedFileError) as exc:
        pytest.fail(f"--onnx-node-expected: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def node_index() -> dict[str, CaseInfo]:
    """Every case with its ONNX op."""
    return ensure_cache()


@pytest.fixture(scope="session")
def node_runner(target: Target) -> DeviceRunner:
    """Runs cases on the device under test, with the kit's Core (in-process plugins included)."""
    return DeviceRunner(target.device, dict(target.config), core=target.core)


def test_onnx_node_case(
    case_name: str,
    node_runner: DeviceRunner,
    expected_failures: tuple[Path | None, dict[str, Expected]],
    node_index: dict[str, CaseInfo],
    record_property: Callable[[str, object], None],
) -> None:
    if case_name == _OFF:
        pytest.skip("ONNX's node tests run with --onnx-node-tests")
    path, entries = expected_failures
    record_property("onnx_op", node_index[case_name].op)
    result = run_case(node_runner, load_case(case_name, cache_dir()))
    record_property("onnx_node_status", result.status)
    entry = entries.get(case_name)
    if result.status == "passed":
        if entry is not None:
            pytest.fail(f"{case_name} now passes: remove it from the file {path} ({entry.status}  {entry.reason})")
        return
    if entry is not None:
        now = "" if entry.status == result.status else f" (listed as {entry.status}, now {result.status})"
        pytest.xfail(f"{entry.reason}{now}")
    hint = f"not listed in {path}" if path else "no --onnx-node-expected file"
    pytest.fail(f"{case_name} {result.status}: {result.reason} ({hint})", pytrace=False)
