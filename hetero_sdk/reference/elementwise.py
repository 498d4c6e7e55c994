"""Numpy kernels of the elementwise ops whose integer semantics need numpy's own care (the others
compute with their definitions' array-API kernels)."""

from __future__ import annotations

import numpy as np

from hetero_sdk.graph.node import Node
from hetero_sdk.reference.registry import kernel


@kernel("Divide")
def divide(node: Node, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu":
        if np.any(b == 0):
            raise ZeroDivisionError(f"Divide '{node.friendly_name}': integer division by zero")
        quotient = np.floor_divide(a, b)
        if node.attrs.get("python_division", True):
            return quotient
        inexact = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
        return np.where(inexact, quotient + 1, quotient)  # toward zero, exactly: a / b in float64 is not
    with np.errstate(all="ignore"):
        return np.true_divide(a, b)


@kernel("Power")
def power(node: Node, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        if a.dtype.kind in "iu":
            return np.power(a.astype(np.float64), b).astype(a.dtype)
        return np.power(a, b)


@kernel("Mod")
def mod(node: Node, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu" and np.any(b == 0):
        raise ZeroDivisionError(f"Mod '{node.friendly_name}': integer modulo by zero")
    with np.errstate(all="ignore"):
        return np.fmod(a, b)
