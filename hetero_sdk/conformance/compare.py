"""Comparing a device's results with the oracle, and saving a self-contained reproduction on failure."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import hetero_sdk as hs
from hetero_sdk.device_name import parse_device_name
from hetero_sdk.element_type import Type
from hetero_sdk.graph import Model

__all__ = ["TOLERANCES", "Repro", "assert_results_match", "mismatches", "safe_dirname", "tolerance"]

TOLERANCES: dict[str, tuple[float, float]] = {
    "f64": (1e-9, 1e-12),
    "f32": (1e-5, 1e-6),
    "f16": (2e-3, 2e-3),
    "bf16": (1.6e-2, 1.6e-2),
}
"""``(rtol, atol)`` per floating element type for one rounding; integer and boolean results are exact."""

_KIND_SCALE = {"exact": 0.0, "simple": 1.0, "transcendental": 20.0, "accumulate": 10.0}


def tolerance(element_type: Any, kind: str = "simple", terms: int = 1) -> tuple[float, float]:
    """``(rtol, atol)`` for results of ``element_type`` computed by an op of ``kind``.

    :param kind: ``exact`` (data movement: bit-exact), ``simple`` (one rounding), ``transcendental``
        (exp, tanh, erf...: libraries differ by a few ulp) or ``accumulate`` (sums of ``terms`` products:
        matmul, convolution, reductions, normalizations; the order of summation differs by device).
    """
    base = TOLERANCES.get(Type.of(element_type).value)
    if base is None:
        return 0.0, 0.0
    scale = _KIND_SCALE[kind] * (max(1.0, float(np.sqrt(terms))) if kind == "accumulate" else 1.0)
    return base[0] * scale, base[1] * scale


def mismatches(got: Sequence[Any], want: Sequence[np.ndarray], rtol: float, atol: float) -> list[str]:
    """What differs between ``got`` and ``want``, one line per output (empty when they match)."""
    problems = []
    if len(got) != len(want):
        return [f"the device returned {len(got)} outputs, the oracle {len(want)}"]
    for i, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        if g.shape != w.shape:
            problems.append(f"output {i}: shape {list(g.shape)}, expected {list(w.shape)}")
        elif g.dtype != w.dtype:
            problems.append(f"output {i}: element type {g.dtype}, expected {w.dtype}")
        elif w.dtype.kind in "fc" or w.dtype.name == "bfloat16":
            g64, w64 = g.astype(np.float64), w.astype(np.float64)
            close = np.isclose(g64, w64, rtol=rtol, atol=atol, equal_nan=True)
            if not close.all():
                bad = np.argwhere(~close)
                at = tuple(int(v) for v in bad[0])
                err = np.abs(g64 - w64)[~close]
                problems.append(
                    f"output {i}: {len(bad)} of {w.size} values differ beyond rtol={rtol:g}, atol={atol:g} "
                    f"(max abs error {np.nanmax(err):.3g}); first at {list(at)}: "
                    f"got {g64[at].item()!r}, expected {w64[at].item()!r}"
                )
        elif not np.array_equal(g, w):
            bad = np.argwhere(g != w)
            at = tuple(int(v) for v in bad[0]) if len(bad) else ()
            problems.append(
                f"output {i}: {len(bad)} of {w.size} values differ; first at {list(at)}: "
                f"got {np.asarray(g[at]).item()!r}, expected {np.asarray(w[at]).item()!r}"
            )
    return problems


@dataclass
class Repro:
    """Where a check saves what reproduces its failure, and how to name the device in the snippet.

    :ivar directory: a directory for this check (created on first save).
    :ivar device: the device string.
    :ivar plugin: the in-process plugin spec, or None.
    :ivar record: called with the saved directory (the report links it).
    """

    directory: Path
    device: str
    plugin: str | None = None
    record: Any = None

    def save(
        self,
        model: Model,
        inputs: Mapping[str, np.ndarray],
        config: Mapping[str, Any] | None = None,
        device: str | None = None,
    ) -> str:
        """Saves the model, the inputs and ``repro.py`` (compiling on ``device``, by default the device
        under test); returns the 3-line snippet."""
        self.directory.mkdir(parents=True, exist_ok=True)
        model_path = self.directory / "model.json"
        inputs_path = self.directory / "inputs.npz"
        hs.save_model(model, model_path)
        arrays: dict[str, Any] = {k: _savable(np.asarray(v)) for k, v in inputs.items()}
        np.savez(str(inputs_path), **arrays)
        config_text = json.dumps(_jsonable(dict(config or {})))
        register = ""
        if self.plugin is not None:
            module, _, attr = self.plugin.partition(":")
            name = parse_device_name(self.device).name
            register = f'; core.register_plugin(importlib.import_module("{module}").{attr}, "{name}")'
        snippet = (
            "import importlib, numpy as np, hetero_sdk as hs; from hetero_sdk.reference import evaluate\n"
            f'core = hs.Core(){register}; model = core.read_model("{model_path}"); '
            f'inputs = dict(np.load("{inputs_path}"))\n'
            f'print(core.compile_model(model, "{device or self.device}", {config_text})(inputs).to_tuple(), '
            "evaluate(model, inputs))"
        )
        (self.directory / "repro.py").write_text(snippet + "\n")
        if self.record is not None:
            self.record(str(self.directory))
        return snippet


def assert_results_match(
    got: Sequence[Any],
    want: Sequence[np.ndarray],
    rtol: float,
    atol: float,
    *,
    what: str,
    repro: Repro | None = None,
    model: Model | None = None,
    inputs: Mapping[str, np.ndarray] | None = None,
    config: Mapping[str, Any] | None = None,
    device: str | None = None,
) -> None:
    """Raises AssertionError listing the differences, with a saved reproduction when given one."""
    problems = mismatches(got, want, rtol, atol)
    if not problems:
        return
    message = f"{what}: results differ from the oracle (hetero_sdk.reference):\n  " + "\n  ".join(problems)
    if repro is not None and model is not None and inputs is not None:
        message += "\nreproduce with:\n" + repro.save(model, inputs, config, device)
    raise AssertionError(message)


def safe_dirname(text: str) -> str:
    """A file-system-safe directory name for a check id."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")[:150]


def _savable(array: np.ndarray) -> np.ndarray:
    """``array`` as ``np.savez`` stores without pickling: ``string`` tensors (numpy's StringDType) as
    fixed-width unicode, which a ``string`` Parameter takes back."""
    if array.dtype.kind != "T":
        return array
    longest = int(np.strings.str_len(array).max()) if array.size else 0
    return array.astype(f"U{max(1, longest)}")


def _jsonable(config: dict[str, Any]) -> dict[str, Any]:
    return {
        k: (getattr(v, "value", v) if not isinstance(v, (str, int, float, bool, list, dict)) else v)
        for k, v in config.items()
    }
