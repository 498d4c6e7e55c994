"""Reference kernels of the image ops.

Interpolate is separable in every mode: each resized axis is resampled in turn, by a gather
(``nearest``) or by a ``[output, input]`` weight matrix. An axis whose output length equals its
(padded) input length is copied unchanged, as OpenVINO's CPU plugin does, even where the coordinate
transformation (``tf_half_pixel_for_nn``, or a scale that floors back to the same length) would shift
it. Source coordinates are computed in float32 (except in ``linear`` mode), as OpenVINO and ONNX
Runtime do, so that rounding decisions at pixel boundaries agree with them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hetero_sdk.graph.node import Node
from hetero_sdk.ops.image import resize_plan
from hetero_sdk.reference.registry import kernel


def _source_coordinates(
    mode: str, scale: np.float32, out_len: int, in_len: int, dtype: type[np.floating[Any]] = np.float32
) -> np.ndarray:
    resized = np.arange(out_len, dtype=dtype)
    scale = dtype(scale)
    if mode == "half_pixel":
        return (resized + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (resized + 0.5) / scale - 0.5 if out_len > 1 else np.zeros(out_len, dtype)
    if mode == "asymmetric":
        return resized / scale
    if mode == "tf_half_pixel_for_nn":
        return (resized + 0.5) / scale
    if out_len == 1:  # align_corners
        return np.zeros(1, dtype)
    return resized * dtype(in_len - 1) / dtype(out_len - 1)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def nearest_indices(attrs: dict[str, Any], scale: np.float32, out_len: int, in_len: int) -> np.ndarray:
    """The input position ``nearest`` mode reads for each of an axis's ``out_len`` outputs (``attrs``: the
    node's ``coordinate_transformation_mode`` and ``nearest_mode``), clipped into ``[0, in_len)``."""
    coords = _source_coordinates(attrs["coordinate_transformation_mode"], scale, out_len, in_len).astype(np.float64)
    rounding = attrs["nearest_mode"]
    if rounding == "round_prefer_floor":
        index = np.where(coords == np.floor(coords) + 0.5, np.floor(coords), _round_half_away(coords))
    elif rounding == "round_prefer_ceil":
        index = _round_half_away(coords)
    elif rounding == "floor":
        index = np.floor(coords)
    elif rounding == "ceil" or scale < 1:  # "simple" rounds up when downsampling, else truncates
        index = np.ceil(coords)
    else:
        index = np.trunc(coords)
    return np.clip(index, 0, in_len - 1).astype(np.int64)


def _linear_weights(coords: np.ndarray, in_len: int, scale: float, a: float) -> np.ndarray:
    radius = 2 if scale > 1 else math.ceil(2 / a)
    weights = np.zeros((coords.size, in_len))
    for row, c in enumerate(coords):
        center = int(_round_half_away(np.array(c)))
        for index in range(max(center - radius, 0), min(center + radius, in_len - 1) + 1):
            weights[row, index] = a * max(0.0, 1 - abs(a * (c - index)))
    total = weights.sum(axis=1, keepdims=True)
    return np.divide(weights, total, out=np.zeros_like(weights), where=total != 0)


def _linear_onnx_weights(coords: np.ndarray, in_len: int) -> np.ndarray:
    weights = np.zeros((coords.size, in_len))
    for row, c in enumerate(np.clip(coords, 0, in_len - 1)):
        low = min(int(c), in_len - 1)
        high = min(low + 1, in_len - 1)
        if low == high:
            weights[row, low] = 1.0
        else:
            weights[row, low] += abs(c - high)
            weights[row, high] += c - low
    return weights


def _cubic_weights(coords: np.ndarray, in_len: int, a: float) -> np.ndarray:
    weights = np.zeros((coords.size, in_len))
    for row, c in enumerate(coords):
        base = math.floor(c)
        s = abs(c - base)
        taps = (
            a * (s - 1) * (s - 1) * s,
            ((a + 2) * s - (a + 3)) * s * s + 1,
            (((-a - 2) * s + (2 * a + 3)) * s - a) * s,
            -a * s * s * (s - 1),
        )
        for k, tap in enumerate(taps):
            weights[row, min(max(base + k - 1, 0), in_len - 1)] += tap
    return weights


def _pillow_weights(mode: str, in_len: int, out_len: int, a: float) -> np.ndarray:
    def bilinear(x: float) -> float:
        return max(0.0, 1 - abs(x))

    def bicubic(x: float) -> float:
        x = abs(x)
        if x < 1:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        if x < 2:
            return (((x - 5) * x + 8) * x - 4) * a
        return 0.0

    kernel_fn, support = (bilinear, 1.0) if mode == "bilinear_pillow" else (bicubic, 2.0)
    step = in_len / out_len if out_len else 1.0
    stretch = max(step, 1.0)
    support *= stretch
    weights = np.zeros((out_len, in_len))
    for row in range(out_len):
        center = (row + 0.5) * step
        low, high = max(int(center - support + 0.5), 0), min(int(center + support + 0.5), in_len)
        for index in range(low, high):
            weights[row, index] = kernel_fn((index - center + 0.5) / stretch)
        total = weights[row].sum()
        if total != 0:
            weights[row] /= total
    return weights


@kernel("Interpolate")
def interpolate(node: Node, image: np.ndarray, scales_or_sizes: np.ndarray, axes: np.ndarray | None = None) -> Any:
    attrs = node.attrs
    plan = resize_plan(attrs, image.shape, scales_or_sizes, axes)
    pads = list(zip(plan.pads_begin, plan.pads_end))
    padded = np.pad(image, pads) if any(b or e for b, e in pads) else image  # read only, never returned
    out_dims, scales, resized = plan.output_dims, plan.scales, plan.resized
    mode = attrs["mode"]
    if mode == "nearest":
        picks = [(axis, nearest_indices(attrs, scale, out_dims[axis], padded.shape[axis])) for axis, scale in resized]
        if not picks:
            return padded.copy() if padded is image else padded
        result = padded
        for axis, indices in picks:
            result = np.take(result, indices, axis=axis)
        return result
    antialias = mode == "linear" and attrs["antialias"] and any(s < 1 for s in scales)
    result = padded.astype(np.float64)
    for axis, scale in resized:
        in_len, out_len = padded.shape[axis], out_dims[axis]
        # "linear" weights are continuous in the coordinate except at the edge of the antialiasing window,
        # where float32 rounding can leave a tiny weight that normalisation inflates: use float64 there
        precision = np.float64 if mode == "linear" else np.float32
        transform = attrs["coordinate_transformation_mode"]
        coords = _source_coordinates(transform, scale, out_len, in_len, precision).astype(np.float64)
        if mode == "linear":
            weights = _linear_weights(coords, in_len, float(scale), float(scale) if antialias else 1.0)
        elif mode == "linear_onnx":
            weights = _linear_onnx_weights(coords, in_len)
        elif mode == "cubic":
            weights = _cubic_weights(coords, in_len, attrs["cube_coeff"])
        else:
            weights = _pillow_weights(mode, in_len, out_len, attrs["cube_coeff"])
        result = np.moveaxis(np.tensordot(result, weights, axes=([axis], [1])), -1, axis)
    if image.dtype.kind in "iu":
        info = np.iinfo(image.dtype)
        return np.clip(_round_half_away(result), info.min, info.max)
    return result
