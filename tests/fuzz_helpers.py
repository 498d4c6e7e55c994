"""Evaluators that misbehave on purpose, for checking the fuzz harness's supervisor (module-level, so
that its worker process can import them by name)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from hetero_sdk.conformance.fuzz import Case, Outcome
from hetero_sdk.conformance.fuzz.runner import WARM_UP


def _warm(case: Case) -> Outcome | None:
    return Outcome("typed_error", "warm-up") if case.label == WARM_UP else None


def hangs(case: Case, on_phase: Callable[[str], None]) -> Outcome:
    """Answers ``typed_error`` for a case labelled ``ok``; otherwise never answers."""
    if (early := _warm(case)) or case.label == "ok":
        return early or Outcome("typed_error", "ok")
    on_phase("ours")
    time.sleep(3600)
    raise AssertionError("unreachable")


def hangs_in_reference(case: Case, on_phase: Callable[[str], None]) -> Outcome:
    """Never answers, in the reference's phase."""
    if early := _warm(case):
        return early
    on_phase("ours")
    on_phase("reference")
    time.sleep(3600)
    raise AssertionError("unreachable")


def crashes(case: Case, on_phase: Callable[[str], None]) -> Outcome:
    """Kills its own process with exit code 3."""
    if early := _warm(case):
        return early
    on_phase("ours")
    os._exit(3)
