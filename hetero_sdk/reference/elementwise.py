"""Numpy kernels of the elementwise ops whose integer semantics need numpy's own care: Divide checks
for division by zero, Power and Mod compute integers exactly (the others compute with their
definitions' array-API kernels)."""

from __future__ import annotations

import numpy as np

from hetero_sdk.graph.node import Node
from hetero_sdk.ops.elementwise import divide_values
from hetero_sdk.reference.registry import kernel


@kernel("Divide")
def divide(node: Node, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu" and np.any(b == 0):  # numpy would give 0 with a warning
        raise ZeroDivisionError(f"Divide '{node.friendly_name}': integer division by zero")
    return divide_values(node, a, b)


@kernel("Power")
def power(node: Node, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        if a.dtype.kind not in "iu":
            return np.power(a, b)
    # integers exactly (wrapping on overflow, as XLA's lowering): through float64 a power past 2**53 lost
    # its low digits. a ** -k truncated toward zero: 1 stays 1, -1 alternates sign, anything else is 0.
    a, b = np.broadcast_arrays(a, b)
    exact = np.power(a, np.maximum(b, 0))
    if a.dtype.kind == "u":
        return exact
    reciprocal = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 != 0, -1, 1), 0)).astype(a.dtype)
    return np.where(b >= 0, exact, reciprocal)


@kernel("Mod")
def mod(node: Node, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu" and np.any(b == 0):
        raise ZeroDivisionError(f"Mod '{node.friendly_name}': integer modulo by zero")
    with np.errstate(all="ignore"):
        return np.fmod(a, b)
