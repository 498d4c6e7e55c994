"""TEMPLATE's ``MaxPool`` when nothing reads its indices: the values alone, one ``fmax`` pass per kernel tap
over a strided slice of the padded input (the reference computes the indices too, one comparison per tap)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from hetero_sdk import Node
from hetero_sdk.plugin import resolve_pads, widened, window_output_dims

__all__ = ["max_pool_without_indices"]


def _geometry(node: Node, sizes: Sequence[int]) -> tuple[list[int], list[int], list[int]]:
    """``(pads_begin, pads_end, out)``, the end pads grown so that ``ceil`` mode's last windows exist."""
    attrs = node.attrs
    kernel, strides, dilations = attrs["kernel_shape"], attrs["strides"], attrs["dilations"]
    begin, end = resolve_pads(attrs["auto_pad"], sizes, kernel, strides, dilations,
                              attrs["pads_begin"], attrs["pads_end"])  # fmt: skip
    out = window_output_dims(node, sizes, kernel, strides, dilations, begin, end, "explicit",
                             ceil_mode=attrs["rounding_type"] == "ceil")  # fmt: skip
    grown = [max(e, (o - 1) * s + (k - 1) * d + 1 - size - b)
             for e, o, s, k, d, size, b in zip(end, out, strides, kernel, dilations, sizes, begin)]  # fmt: skip
    return list(begin), grown, list(out)


def max_pool_without_indices(node: Node, x: np.ndarray) -> tuple[np.ndarray]:
    """``MaxPool``'s values: NaN never wins (``fmax``), and a window of padding or NaN only gives the element
    type's lowest value, as the reference's comparisons do."""
    attrs = node.attrs
    strides, dilations = attrs["strides"], attrs["dilations"]
    begin, end, out = _geometry(node, x.shape[2:])
    info: Any = ml_dtypes.finfo(x.dtype) if x.dtype.kind == "f" or x.dtype == ml_dtypes.bfloat16 else np.iinfo(x.dtype)
    work = widened(x)
    lowest = np.asarray(info.min).astype(work.dtype)
    padded = work
    if any(begin) or any(end):
        shape = (*work.shape[:2], *(size + b + e for size, b, e in zip(work.shape[2:], begin, end)))
        padded = np.full(shape, lowest, work.dtype)
        padded[(slice(None), slice(None), *(slice(b, b + size) for b, size in zip(begin, work.shape[2:])))] = work
    taps = [
        (slice(None), slice(None), *(slice(t * d, t * d + (o - 1) * s + 1, s)
                                     for t, d, o, s in zip(tap, dilations, out, strides)))
        for tap in np.ndindex(*attrs["kernel_shape"])
    ]  # fmt: skip
    values = padded[taps[0]].copy()
    floating = work.dtype.kind == "f"
    combine = np.fmax if floating else np.maximum
    for window in taps[1:]:
        combine(values, padded[window], out=values)
    if floating:
        np.copyto(values, lowest, where=np.isnan(values))
    return (values,)
