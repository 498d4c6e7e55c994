"""Reference kernels of the basic ops."""

from __future__ import annotations

import numpy as np

from hetero_sdk.graph.node import Node
from hetero_sdk.reference.registry import kernel


@kernel("Constant")
def constant(node: Node) -> np.ndarray:
    return node.attrs["value"]


@kernel("Result")
def result(node: Node, x: np.ndarray) -> np.ndarray:
    return x


@kernel("Convert")
def convert(node: Node, x: np.ndarray) -> np.ndarray:
    target = node.attrs["destination_type"]
    if target.is_integral and x.dtype.kind == "f":
        x = np.trunc(x)
    if target.is_integral:  # saturate instead of wrapping, as OpenVINO's Convert does
        info = np.iinfo(target.numpy)
        x = np.clip(x, info.min, info.max)
    return x.astype(target.numpy)
