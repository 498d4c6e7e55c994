"""Reference kernels of the linear algebra ops."""

from __future__ import annotations

import numpy as np

from hetero_sdk.array_api import widened
from hetero_sdk.graph.node import Node
from hetero_sdk.reference.registry import kernel


@kernel("MatMul")
def matmul(node: Node, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.ndim > 1 and node.attrs["transpose_a"]:
        a = np.swapaxes(a, -1, -2)
    if b.ndim > 1 and node.attrs["transpose_b"]:
        b = np.swapaxes(b, -1, -2)
    return np.matmul(widened(a), widened(b))
