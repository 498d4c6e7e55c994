"""bench/'s scripts as modules, for the tests that check them or share their tables (the real models)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench_module(name: str) -> ModuleType:
    """``bench/<name>.py`` as the module ``bench_<name>``, loaded once per test session; bench/ goes on
    ``sys.path`` for the scripts' imports of their siblings (``timing``, ``models``)."""
    key = f"bench_{name}"
    if key in sys.modules:
        return sys.modules[key]
    if str(BENCH) not in sys.path:
        sys.path.append(str(BENCH))
    spec = importlib.util.spec_from_file_location(key, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module
