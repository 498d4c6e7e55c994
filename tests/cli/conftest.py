"""Fixtures of the CLI tests: a Core with in-process devices and a runner invoking ``hetero-sdk`` on it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from click.testing import CliRunner, Result

import hetero_sdk as hs
from hetero_sdk.cli import cli

from .helpers import make_core


@pytest.fixture
def accel_core() -> hs.Core:
    """TEMPLATE, HETERO and ACCEL (refuses NonMaxSuppression)."""
    return make_core()


@pytest.fixture
def invoke(accel_core: hs.Core) -> Callable[..., Result]:
    """``invoke(*args, core=None)``: runs ``hetero-sdk args`` on ``core`` (default: accel_core)."""

    def run(*args: str, core: hs.Core | None = None) -> Result:
        return CliRunner().invoke(cli, list(args), obj={"core": core or accel_core})

    return run
