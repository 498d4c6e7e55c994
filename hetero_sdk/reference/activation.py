"""Numpy kernels of Erf and Gelu, which need an error function (the array API has none); the other
activations compute with their definitions' array-API kernels."""

from __future__ import annotations

import math

import numpy as np

from hetero_sdk.array_api import widened
from hetero_sdk.graph.node import Node
from hetero_sdk.ops.activation import gelu_tanh
from hetero_sdk.reference.registry import kernel

_exact_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def erfc_values(x: np.ndarray, exact: bool | None = None) -> np.ndarray:
    """erfc of an array, in float64: exact (``math.erfc``) for f64 inputs; for narrower types, the
    vectorised Chebyshev fit of Numerical Recipes (relative error below 1.2e-7 everywhere, so tails
    such as Gelu's stay accurate). ``exact`` forces either path (default: exact for f64)."""
    x64 = np.asarray(x, dtype=np.float64)
    if exact if exact is not None else x.dtype == np.float64:
        return _exact_erfc(x64) if x64.size else x64
    z = np.abs(x64)
    t = 1 / (1 + 0.5 * z)
    poly = np.full_like(t, 0.17087277)
    for c in (-0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418, 0.37409196, 1.00002368):
        poly = c + t * poly
    tail = t * np.exp(-z * z - 1.26551223 + t * poly)
    return np.where(x64 >= 0, tail, 2 - tail)


def erf_values(x: np.ndarray) -> np.ndarray:
    """erf of an array, in float64 (see :func:`erfc_values` for the accuracy)."""
    return 1 - erfc_values(x)


@kernel("Erf")
def erf(node: Node, x: np.ndarray) -> np.ndarray:
    return erf_values(x)


@kernel("Gelu")
def gelu(node: Node, x: np.ndarray) -> np.ndarray:
    if node.attrs["approximation_mode"] == "TANH":
        return gelu_tanh(widened(x))
    x64 = x.astype(np.float64)
    return 0.5 * x64 * erfc_values(-x64 / math.sqrt(2), exact=x.dtype == np.float64)
