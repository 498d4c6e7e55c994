"""The whole suite's hypothesis settings: under CI (``CI=true``) every property test draws the same
examples on each run, so a landing is judged on the code, not on the examples drawn that day; run
the suite without ``CI`` to explore new examples (a failure prints the example that reproduces it)."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
    settings.load_profile("ci")
