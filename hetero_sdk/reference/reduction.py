"""Reference kernels of the reduction ops."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from hetero_sdk.graph.node import Node
from hetero_sdk.reference.registry import kernel


def _axes(x: np.ndarray, axes: np.ndarray) -> tuple[int, ...]:
    return tuple(sorted({int(a) % x.ndim for a in axes.reshape(-1)})) if x.ndim else ()


def _limits(dtype: np.dtype) -> tuple[float, float] | tuple[int, int]:
    if dtype.kind in "iu":
        return int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)
    info = ml_dtypes.finfo(dtype)  # handles bfloat16 too
    return float(info.min), float(info.max)


@kernel("ReduceSum", "ReduceProd", "ReduceMean")
def reduce_arithmetic(node: Node, x: np.ndarray, axes: np.ndarray) -> np.ndarray:
    axis, keep = _axes(x, axes), node.attrs["keep_dims"]
    wide = x.astype(np.int64 if x.dtype.kind in "iu" else np.float64)
    if node.type_name == "ReduceProd":
        return np.prod(wide, axis=axis, keepdims=keep)
    total = np.sum(wide, axis=axis, keepdims=keep)
    if node.type_name == "ReduceSum":
        return total
    count = math.prod(x.shape[a] for a in axis)
    if count == 0:  # OpenVINO gives 0, not NaN, for the mean of nothing
        return np.zeros_like(total)
    if x.dtype.kind in "iu":
        return np.sign(total) * (np.abs(total) // count)
    return total / count


@kernel("ReduceMax", "ReduceMin")
def reduce_extreme(node: Node, x: np.ndarray, axes: np.ndarray) -> np.ndarray:
    axis, keep = _axes(x, axes), node.attrs["keep_dims"]
    lowest, highest = _limits(x.dtype)
    wide = x.astype(np.int64 if x.dtype.kind in "iu" else np.float64)
    if node.type_name == "ReduceMax":
        return np.max(wide, axis=axis, keepdims=keep, initial=lowest)
    return np.min(wide, axis=axis, keepdims=keep, initial=highest)
