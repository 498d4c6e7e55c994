"""Reference kernels of the unary math ops and activations."""

from __future__ import annotations

import math

import numpy as np

from hetero_sdk.graph.node import Node
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


def _real(x: np.ndarray) -> np.ndarray:
    """Computes in at least f32 (f16 and bf16 inputs), as reference backends do."""
    return x.astype(np.float32) if x.dtype.itemsize < 4 else x


_UFUNCS = {
    "Tanh": np.tanh,
    "Exp": np.exp,
    "Log": np.log,
    "Sqrt": np.sqrt,
    "Floor": np.floor,
    "Ceiling": np.ceil,
    "Sin": np.sin,
    "Cos": np.cos,
}


@kernel(*_UFUNCS)
def unary(node: Node, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return _UFUNCS[node.type_name](_real(x))


@kernel("Relu")
def relu(node: Node, x: np.ndarray) -> np.ndarray:
    return np.maximum(x, np.zeros((), x.dtype))


@kernel("Abs")
def abs_(node: Node, x: np.ndarray) -> np.ndarray:
    return np.abs(x)


@kernel("Negative")
def negative(node: Node, x: np.ndarray) -> np.ndarray:
    return np.negative(x)


@kernel("Sigmoid")
def sigmoid(node: Node, x: np.ndarray) -> np.ndarray:
    x = _real(x)
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


@kernel("Erf")
def erf(node: Node, x: np.ndarray) -> np.ndarray:
    return erf_values(x)


def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * (x * x * x))))


@kernel("Gelu")
def gelu(node: Node, x: np.ndarray) -> np.ndarray:
    x64 = x.astype(np.float64)
    if node.attrs["approximation_mode"] == "TANH":
        return _gelu_tanh(_real(x))
    return 0.5 * x64 * erfc_values(-x64 / math.sqrt(2), exact=x.dtype == np.float64)


@kernel("Swish")
def swish(node: Node, x: np.ndarray, beta: np.ndarray | None = None) -> np.ndarray:
    x = _real(x)
    b = 1.0 if beta is None else beta.reshape(()).astype(x.dtype)
    with np.errstate(over="ignore"):
        return x / (1 + np.exp(-b * x))


@kernel("HSwish")
def hswish(node: Node, x: np.ndarray) -> np.ndarray:
    x = _real(x)
    return x * np.clip(x + 3, 0, 6) / 6


@kernel("Clamp")
def clamp(node: Node, x: np.ndarray) -> np.ndarray:
    low, high = node.attrs["min"], node.attrs["max"]
    if x.dtype.kind in "iu":  # bounds round inward, then saturate: numpy rejects out-of-range Python ints
        info = np.iinfo(x.dtype)
        low = min(max(math.ceil(low), int(info.min)), int(info.max))
        high = min(max(math.floor(high), int(info.min)), int(info.max))
    return np.clip(x, low, high)
