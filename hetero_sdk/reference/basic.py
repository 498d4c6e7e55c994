"""Reference kernels of the basic ops (Constant and Result compute with their definitions' kernels)."""

from __future__ import annotations

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.reference.registry import kernel


@kernel("Convert")
def convert(node: Node, x: np.ndarray) -> np.ndarray:
    target = node.attrs["destination_type"]
    if target.is_integral and Type.of(x.dtype).is_real:
        return _float_to_int(x, target.numpy)
    if target.is_integral and x.dtype.kind in "iu":  # saturate instead of wrapping, as OpenVINO's Convert does
        info, source = np.iinfo(target.numpy), np.iinfo(x.dtype)
        x = np.clip(x, max(int(info.min), int(source.min)), min(int(info.max), int(source.max)))
    return x.astype(target.numpy)


def _float_to_int(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Truncates toward zero and saturates at the type's limits; NaN becomes 0."""
    info = np.iinfo(dtype)
    wide = np.trunc(x.astype(np.float64))
    top = float(info.max)  # 2**63 for i64: float64 cannot hold 2**63 - 1
    out = np.zeros(x.shape, dtype)
    inside = (wide > info.min) & (wide < top)
    out[inside] = wide[inside].astype(dtype)
    out[wide >= top] = info.max
    out[wide <= info.min] = info.min
    return out
