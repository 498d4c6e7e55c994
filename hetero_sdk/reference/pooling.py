"""Reference kernels of the pooling ops, on strided window views of the padded input."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from hetero_sdk.array_api import widened
from hetero_sdk.graph.node import Node
from hetero_sdk.ops.convolution import resolve_pads, window_output_dims
from hetero_sdk.reference.convolution import pad_spatial
from hetero_sdk.reference.registry import kernel


def _geometry(node: Node, sizes: Sequence[int], dilations: Sequence[int]) -> tuple[list[int], list[int], list[int]]:
    """``(pads_begin, pads_end, out)``, the end pads grown so that ``ceil`` mode's last windows exist."""
    attrs = node.attrs
    kernel, strides = attrs["kernel_shape"], attrs["strides"]
    begin, end = resolve_pads(attrs["auto_pad"], sizes, kernel, strides, dilations,
                              attrs["pads_begin"], attrs["pads_end"])  # fmt: skip
    out = window_output_dims(node, sizes, kernel, strides, dilations, begin, end, "explicit",
                             ceil_mode=attrs["rounding_type"] == "ceil")  # fmt: skip
    rows = zip(end, out, strides, kernel, dilations, sizes, begin)
    grown = [max(e, (o - 1) * s + (k - 1) * d + 1 - size - b) for e, o, s, k, d, size, b in rows]
    return begin, grown, out


def _max_windows(node: Node, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, Any]:
    """MaxPool's values and the winning tap of each window (plus the geometry)."""
    attrs = node.attrs
    sizes = x.shape[2:]
    kernel, strides, dilations = attrs["kernel_shape"], attrs["strides"], attrs["dilations"]
    begin, end, out = _geometry(node, sizes, dilations)
    info = ml_dtypes.finfo(x.dtype) if x.dtype.kind == "f" or x.dtype == ml_dtypes.bfloat16 else np.iinfo(x.dtype)
    work = widened(x)
    lowest = np.asarray(info.min).astype(work.dtype)
    if work.dtype.kind == "f":  # NaN never wins a comparison in OpenVINO's kernel
        work = np.where(np.isnan(work), lowest, work)
    padded = pad_spatial(work, begin, end, lowest)

    def tap_window(offsets: Sequence[int]) -> np.ndarray:
        """What kernel tap ``offsets`` reads for every output: a strided slice of the padded input."""
        spatial = (slice(o * d, o * d + (m - 1) * s + 1, s) for o, d, s, m in zip(offsets, dilations, strides, out))
        return padded[(slice(None), slice(None), *spatial)]

    taps_offsets = list(itertools.product(*(range(k) for k in kernel)))
    values = tap_window(taps_offsets[0]).copy()
    best = np.zeros(values.shape, np.int64)
    for tap, offsets in enumerate(taps_offsets[1:], start=1):
        candidate = tap_window(offsets)
        better = candidate > values  # strict: the first tap wins ties, as argmax does
        values = np.where(better, candidate, values)
        best = np.where(better, tap, best)
    return values, best, (begin, out, lowest)


@kernel("MaxPool")
def max_pool(node: Node, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    attrs = node.attrs
    n, sizes = x.ndim - 2, x.shape[2:]
    kernel, strides, dilations = attrs["kernel_shape"], attrs["strides"], attrs["dilations"]
    values, best, (begin, out, lowest) = _max_windows(node, x)
    taps = np.unravel_index(best, kernel)
    position = np.zeros(best.shape, np.int64)
    for i in range(n):
        starts = np.arange(out[i]).reshape([-1] + [1] * (n - 1 - i)) * strides[i] - begin[i]
        position = position * sizes[i] + starts + taps[i] * dilations[i]
    plane = math.prod(sizes)
    channel_start = np.arange(x.shape[0] * x.shape[1]).reshape(x.shape[0], x.shape[1], *[1] * n) * plane
    # A window without any input element (or only lowest values) reports its channel's first element.
    indices = channel_start + np.where(values == lowest, 0, position)
    axis = attrs["axis"] % x.ndim
    if axis:
        indices %= math.prod(x.shape[axis:])
    return values, indices


@kernel("AvgPool")
def avg_pool(node: Node, x: np.ndarray) -> np.ndarray:
    attrs = node.attrs
    n, sizes = x.ndim - 2, x.shape[2:]
    kernel, strides, ones = attrs["kernel_shape"], attrs["strides"], [1] * (x.ndim - 2)
    begin, end, out = _geometry(node, sizes, ones)
    work = x.astype(np.float64) if x.dtype.kind in "iu" else widened(x)
    padded = pad_spatial(work, begin, end)
    # One strided slice per kernel tap added in turn (numpy's sum over the window axes of a window view
    # walks every window element by element).
    taps = [
        tuple(slice(t, t + (o - 1) * s + 1, s) for t, o, s in zip(tap, out, strides)) for tap in np.ndindex(*kernel)
    ]
    sums = padded[(slice(None), slice(None), *taps[0])].copy()
    for tap in taps[1:]:
        np.add(sums, padded[(slice(None), slice(None), *tap)], out=sums)
    # OpenVINO divides by the kernel size whenever the op pads, even where ceil mode's windows overhang.
    pads = resolve_pads(attrs["auto_pad"], sizes, kernel, strides, ones, attrs["pads_begin"], attrs["pads_end"])
    if (any(pads[0]) or any(pads[1])) and not attrs["exclude_pad"]:
        divisor: np.ndarray = np.full(out, math.prod(kernel), dtype=work.dtype)
    else:
        divisor = np.ones((), dtype=work.dtype)
        for i in range(n):
            starts = np.arange(out[i]) * strides[i] - begin[i]
            inside = np.minimum(starts + kernel[i], sizes[i]) - np.maximum(starts, 0)
            divisor = np.multiply.outer(divisor, np.maximum(inside, 0).astype(work.dtype))
    with np.errstate(invalid="ignore", divide="ignore"):
        result = np.where(divisor > 0, sums / divisor, 0)
    return np.rint(result) if x.dtype.kind in "iu" else result
