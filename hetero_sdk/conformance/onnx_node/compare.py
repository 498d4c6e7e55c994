"""How a node test's outputs are judged: each output's dtype, then its shape, then its values:
``numpy.allclose(rtol=1e-3, atol=1e-5)`` with NaNs equal for floating-point (bfloat16 compared as
float32), exact equality for every other type; strings (ONNX's object arrays of ``str``, hetero-sdk's
StringDType) are compared as text. A sequence or optional expected output never matches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

__all__ = ["ATOL", "RTOL", "compare"]

RTOL: Final = 1e-3
"""The relative tolerance of the spec (``onnx.md``: external conformance)."""
ATOL: Final = 1e-5
"""The absolute tolerance of the spec."""


def compare(got: Sequence[Any], expected: Sequence[Any]) -> str | None:
    """Why ``got`` differs from ``expected``, or None when each output matches."""
    if len(got) != len(expected):
        return f"{len(got)} outputs, expected {len(expected)}"
    for index, (g, e) in enumerate(zip(got, expected)):
        if not isinstance(e, np.ndarray):
            return f"output {index}: a {type(e).__name__} is expected (sequence or optional)"
        g = np.asarray(g)
        if _is_text(e) and g.dtype.kind in "TU":
            if g.shape != e.shape:
                return f"output {index}: shape {g.shape}, expected {e.shape}"
            if g.tolist() != e.tolist():
                return f"output {index}: strings differ"
            continue
        if g.dtype != e.dtype:
            return f"output {index}: dtype {g.dtype}, expected {e.dtype}"
        if g.shape != e.shape:
            return f"output {index}: shape {g.shape}, expected {e.shape}"
        if e.dtype.kind == "V" and e.dtype.name.startswith(("bfloat", "float")):  # ml_dtypes': as floats
            g, e = g.astype(np.float32), e.astype(np.float32)
        if e.dtype.kind in "fc":
            if not np.allclose(g, e, rtol=RTOL, atol=ATOL, equal_nan=True):
                with np.errstate(invalid="ignore"):  # inf - inf where both are inf
                    worst = float(np.nanmax(np.abs(g.astype(np.float64) - e.astype(np.float64)), initial=0.0))
                return f"output {index}: values differ (max abs diff {worst:.3g})"
        elif not np.array_equal(g, e):
            return f"output {index}: values differ"
    return None


def _is_text(array: np.ndarray) -> bool:
    """True for an array of strings: numpy's string dtypes, or an object array holding only ``str``."""
    return array.dtype.kind in "TU" or (array.dtype == object and all(isinstance(v, str) for v in array.flat))
