"""Reference kernels of the unary math ops and activations."""

from __future__ import annotations

import math

import numpy as np

from hetero_sdk.graph.node import Node
from hetero_sdk.reference.registry import kernel

_erf = np.vectorize(math.erf, otypes=[np.float64])


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
    return _erf(x.astype(np.float64)) if x.size else x


@kernel("Gelu")
def gelu(node: Node, x: np.ndarray) -> np.ndarray:
    x64 = x.astype(np.float64)
    if node.attrs["approximation_mode"] == "TANH":
        return 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64**3)))
    return 0.5 * x64 * (1 + (_erf(x64 / math.sqrt(2)) if x.size else x64))


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
