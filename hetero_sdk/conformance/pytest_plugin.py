"""The kit's pytest plugin: its command-line options (registered through the ``pytest11`` entry point)."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hetero-sdk conformance")
    group.addoption("--device", default=None, help="the device to check (e.g. TEMPLATE, XLA)")
