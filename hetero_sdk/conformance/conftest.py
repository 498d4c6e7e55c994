"""Fixtures shared by the kit's checks: the device under test, its base model, hypothesis settings,
and where a failing check saves its reproduction."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hetero_sdk.conformance.compare import Repro, safe_dirname
from hetero_sdk.conformance.models import ModelCase, base_candidates
from hetero_sdk.conformance.options import Options
from hetero_sdk.conformance.pytest_plugin import OPTIONS_KEY
from hetero_sdk.conformance.target import Target, build_core
from hetero_sdk.conformance.xfails import check_id


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "mandatory: a check every device must pass ('M' in conformance.md)")


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """With ``--onnx-node-tests``: the node test checks per ONNX op (passed, expected failures, failed)."""
    recorder = config.pluginmanager.get_plugin("hetero_sdk_conformance_report")
    if recorder is None or not config.getoption("onnx_node_tests", False):
        return
    counts: dict[str, Counter[str]] = {}
    for record in recorder.records.values():
        if "onnx_op" in record.details:
            counts.setdefault(record.details["onnx_op"], Counter())[record.outcome] += 1
    if not counts:
        return
    columns = ("passed", "xfailed", "failed", "other")
    width = max(len(op) for op in counts) + 2
    terminalreporter.write_sep("-", "ONNX node tests per ONNX op (xfailed: listed in the expected-failures file)")
    terminalreporter.write_line(f"{'ONNX op':<{width}}{'cases':>7}" + "".join(f"{c:>9}" for c in columns))
    for op in sorted(counts, key=str.lower):
        tally = counts[op]
        other = sum(tally.values()) - sum(tally[c] for c in columns[:3])
        cells = [tally["passed"], tally["xfailed"], tally["failed"] + tally["xpassed"], other]
        terminalreporter.write_line(f"{op:<{width}}{sum(tally.values()):>7}" + "".join(f"{c:>9}" for c in cells))


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """ONNX's node tests (1,884 checks) are collected only with ``--onnx-node-tests``."""
    if collection_path.name == "test_onnx_node.py" and not config.getoption("onnx_node_tests", False):
        return True
    return None


@pytest.fixture(scope="session")
def options(pytestconfig: pytest.Config) -> Options:
    """The kit's options; without ``--device`` every check is skipped."""
    found = pytestconfig.stash.get(OPTIONS_KEY, None)
    if found is None:
        pytest.skip("the conformance kit needs a device: pytest --pyargs hetero_sdk.conformance --device DEVICE")
    return found


@pytest.fixture(autouse=True)
def _needs_device(options: Options) -> None:
    """Makes every check depend on ``--device``."""


@pytest.fixture(scope="session")
def target(options: Options) -> Target:
    """The device under test, loaded once per worker."""
    core = build_core(options.device, options.plugin)
    return Target(core, options.device, dict(options.device_config), options.plugin)


@pytest.fixture(scope="session")
def base(target: Target) -> Callable[[], ModelCase]:
    """Makes a fresh copy of the base model: the first candidate the device fully claims."""
    candidates = base_candidates()
    for index, case in enumerate(candidates):
        if target.claims_all(case.model):
            return lambda: base_candidates()[index]
    ops = sorted({n.type_name for n in candidates[-1].model.get_ops()})
    pytest.fail(f"{target.device} does not claim the kit's smallest base model (ops {', '.join(ops)}) in query_model")


@pytest.fixture
def hyp(options: Options) -> Callable[..., Any]:
    """Hypothesis settings of the profile: ``hyp()`` or ``hyp(scale)``."""
    return options.profile.settings


@pytest.fixture
def repro(request: pytest.FixtureRequest, options: Options) -> Repro:
    """Where this check saves a failing model and its inputs."""
    node = request.node
    assert options.repro_dir is not None

    def record(path: str) -> None:
        if ("reproduction", path) not in node.user_properties:
            node.user_properties.append(("reproduction", path))

    return Repro(options.repro_dir / safe_dirname(check_id(node.nodeid)), options.device, options.plugin, record)


@pytest.fixture
def saved_properties(target: Target) -> Iterator[dict[str, Any]]:
    """The device's RW property values, set back after the check."""
    saved = target.rw_values()
    yield saved
    target.restore(saved)


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator."""
    return np.random.default_rng(20240601)
