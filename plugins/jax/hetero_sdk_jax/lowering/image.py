"""Lowerings of Interpolate and Resize (whose tables its definition computes): separable, one resized
axis after the other.

Sizes, scales and axes are static, so each axis's resampling is a table computed with numpy while
tracing: source indices (``nearest``, a gather) or an ``[output, input]`` weight matrix (the other
modes, a matrix product). Source coordinates are computed in float32 as OpenVINO does (float64 in
``linear`` mode), so that rounding at pixel boundaries agrees with it. An axis whose output length
equals its padded input length is copied unchanged. Integer images are resampled in f32 (the
reference uses f64), so a result within float error of a half may round to the other neighbour.
"""

from __future__ import annotations

import math
from typing import Any

import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node
from hetero_sdk.plugin import apply_resize, resize_plan
from jax import lax

from hetero_sdk_jax.lowering.registry import lowering


def _coordinates(
    mode: str, scale: np.float32, out_len: int, in_len: int, precision: type[np.floating[Any]] = np.float32
) -> np.ndarray:
    """Where each output position falls in the input (computed in ``precision``, returned as float64)."""
    out = np.arange(out_len, dtype=precision)
    step, half = precision(scale), precision(0.5)
    if mode == "half_pixel" or (mode == "pytorch_half_pixel" and out_len > 1):
        coords = (out + half) / step - half
    elif mode == "pytorch_half_pixel":
        coords = np.zeros(out_len, precision)
    elif mode == "asymmetric":
        coords = out / step
    elif mode == "tf_half_pixel_for_nn":
        coords = (out + half) / step
    elif out_len == 1:  # align_corners
        coords = np.zeros(1, precision)
    else:
        coords = out * precision(in_len - 1) / precision(out_len - 1)
    return coords.astype(np.float64)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _nearest(attrs: dict[str, Any], scale: np.float32, out_len: int, in_len: int) -> np.ndarray:
    coords = _coordinates(attrs["coordinate_transformation_mode"], scale, out_len, in_len)
    rounding = attrs["nearest_mode"]
    if rounding == "round_prefer_floor":
        index = np.where(coords - np.floor(coords) == 0.5, np.floor(coords), _round_half_away(coords))
    elif rounding == "round_prefer_ceil":
        index = _round_half_away(coords)
    elif rounding == "floor":
        index = np.floor(coords)
    elif rounding == "ceil" or scale < 1:  # "simple" rounds up when downsampling, else truncates
        index = np.ceil(coords)
    else:
        index = np.trunc(coords)
    return np.clip(index, 0, in_len - 1).astype(np.int32)


def _normalized(weights: np.ndarray) -> np.ndarray:
    total = weights.sum(axis=1, keepdims=True)
    return np.divide(weights, total, out=np.zeros_like(weights), where=total != 0)


def _linear(coords: np.ndarray, in_len: int, scale: float, a: float) -> np.ndarray:
    """The triangle filter; ``a < 1`` widens it (antialiasing when downsampling)."""
    radius = 2 if scale > 1 else math.ceil(2 / a)
    taps = np.arange(in_len)[np.newaxis, :]
    centers = _round_half_away(coords)[:, np.newaxis]
    weights = a * np.maximum(0.0, 1 - np.abs(a * (coords[:, np.newaxis] - taps)))
    return _normalized(np.where(np.abs(taps - centers) <= radius, weights, 0.0))


def _linear_onnx(coords: np.ndarray, in_len: int) -> np.ndarray:
    clipped = np.clip(coords, 0, in_len - 1)
    low = np.minimum(np.floor(clipped).astype(np.int64), in_len - 1)
    high = np.minimum(low + 1, in_len - 1)
    rows = np.arange(coords.size)
    weights = np.zeros((coords.size, in_len))
    same = low == high
    np.add.at(weights, (rows, low), np.where(same, 1.0, np.abs(clipped - high)))
    np.add.at(weights, (rows, high), np.where(same, 0.0, clipped - low))
    return weights


def _cubic(coords: np.ndarray, in_len: int, a: float) -> np.ndarray:
    base = np.floor(coords)
    s = np.abs(coords - base)
    taps = (
        a * (s - 1) * (s - 1) * s,
        ((a + 2) * s - (a + 3)) * s * s + 1,
        (((-a - 2) * s + (2 * a + 3)) * s - a) * s,
        -a * s * s * (s - 1),
    )
    weights = np.zeros((coords.size, in_len))
    rows = np.arange(coords.size)
    for k, tap in enumerate(taps):
        np.add.at(weights, (rows, np.clip(base.astype(np.int64) + k - 1, 0, in_len - 1)), tap)
    return weights


def _pillow(mode: str, in_len: int, out_len: int, a: float) -> np.ndarray:
    step = in_len / out_len if out_len else 1.0
    stretch = max(step, 1.0)
    support = (1.0 if mode == "bilinear_pillow" else 2.0) * stretch
    centers = (np.arange(out_len) + 0.5) * step
    low = np.maximum(np.trunc(centers - support + 0.5), 0)[:, np.newaxis]
    high = np.minimum(np.trunc(centers + support + 0.5), in_len)[:, np.newaxis]
    taps = np.arange(in_len)[np.newaxis, :]
    x = np.abs((taps - centers[:, np.newaxis] + 0.5) / stretch)
    if mode == "bilinear_pillow":
        values = np.maximum(0.0, 1 - x)
    else:
        values = np.where(
            x < 1, ((a + 2) * x - (a + 3)) * x * x + 1, np.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0.0)
        )
    return _normalized(np.where((taps >= low) & (taps < high), values, 0.0))


def _repeats(index: np.ndarray, in_len: int) -> int | None:
    """``k`` when the nearest-neighbour table ``index`` repeats each source position ``k`` times in
    order (an integer upscale): then the gather is a broadcast, which XLA fuses into its consumer."""
    k, rest = divmod(index.size, in_len)
    return k if rest == 0 and np.array_equal(index, np.repeat(np.arange(in_len), k)) else None


@lowering("Interpolate")
def interpolate(
    node: Node,
    image: jnp.ndarray,
    scales_or_sizes: np.ndarray,
    axes: np.ndarray | None = None,
    channels_last: bool = False,
) -> Any:
    """Interpolate of ``image`` ``[N, C, ...]``, or ``[N, ..., C]`` with ``channels_last`` (the layout
    the graph lowers convolution chains in: :mod:`.layout`; the result is held the same way)."""
    attrs = node.attrs
    rank = image.ndim
    order = [0, *range(2, rank), 1] if channels_last and rank > 2 else list(range(rank))  # graph axis held at i
    held = [order.index(a) for a in range(rank)]  # where graph axis a is held
    plan = resize_plan(attrs, [image.shape[held[a]] for a in range(rank)], scales_or_sizes, axes)
    padded = jnp.pad(image, [(plan.pads_begin[a], plan.pads_end[a]) for a in order])
    out_dims, scales, resized = plan.output_dims, plan.scales, plan.resized
    mode = attrs["mode"]
    if mode == "nearest":
        result = padded
        for axis, scale in resized:
            in_len = padded.shape[held[axis]]
            index = _nearest(attrs, scale, out_dims[axis], in_len)
            k = _repeats(index, in_len)
            at = held[axis]
            result = jnp.take(result, index, axis=at) if k is None else jnp.repeat(result, k, axis=at)
        return result
    antialias = mode == "linear" and attrs["antialias"] and any(s < 1 for s in scales)
    integral = jnp.issubdtype(image.dtype, jnp.integer)
    compute = jnp.float64 if image.dtype == jnp.float64 else jnp.float32
    result = padded.astype(compute)
    for axis, scale in resized:
        in_len, out_len = padded.shape[held[axis]], out_dims[axis]
        # The triangle filter jumps at the edge of its window: float32 coordinates could leave a
        # tiny weight there that normalisation inflates, so "linear" computes them in float64.
        precision = np.float64 if mode == "linear" else np.float32
        coords = _coordinates(attrs["coordinate_transformation_mode"], scale, out_len, in_len, precision)
        if mode == "linear":
            weights = _linear(coords, in_len, float(scale), float(scale) if antialias else 1.0)
        elif mode == "linear_onnx":
            weights = _linear_onnx(coords, in_len)
        elif mode == "cubic":
            weights = _cubic(coords, in_len, attrs["cube_coeff"])
        else:
            weights = _pillow(mode, in_len, out_len, attrs["cube_coeff"])
        result = _contract(result, jnp.asarray(weights, compute), held[axis])
    if integral:
        info = np.iinfo(image.dtype)
        return jnp.clip(jnp.sign(result) * jnp.floor(jnp.abs(result) + 0.5), info.min, info.max)
    return result


def _contract(x: jnp.ndarray, matrix: jnp.ndarray, axis: int) -> jnp.ndarray:
    product = jnp.tensordot(x, matrix, axes=([axis], [1]), precision=lax.Precision.HIGHEST)
    return jnp.moveaxis(product, -1, axis)


@lowering("Resize")
def resize(node: Node, image: jnp.ndarray, values: np.ndarray, roi: np.ndarray | None = None) -> Any:
    """ONNX's Resize: the definition's tables (numpy, while tracing), applied at full f32 precision."""
    return apply_resize(node, image, values, roi, _contract)
