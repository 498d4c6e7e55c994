"""The kit runs the conformance tests read, started together on first use."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .kit import RUNS, KitRuns


@pytest.fixture(scope="session")
def kit_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KitRuns]:
    """The kit runs of :data:`RUNS`, all started on first use."""
    runs = KitRuns(tmp_path_factory.mktemp("kit"))
    for name, (device, plugin, args) in RUNS.items():
        runs.start(name, device, plugin, args)
    yield runs
    runs.close()
