"""Reference kernels of the convolution ops, written to be read rather than to be fast.

A convolution pads its input, gathers the strided window every kernel tap reads into im2col columns
``[N, G, Cg * taps, pixels]`` and multiplies them with each group's filters ``[Og, Cg * taps]``;
a transposed convolution is the convolution of its input, spread out by the strides and padded by the
kernel's reach, with its filters flipped and transposed. Narrow floats compute in f32; integers in
their own type, which wraps as the output does.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hetero_sdk.array_api import widened
from hetero_sdk.graph.node import Node
from hetero_sdk.ops.convolution import backprop_geometry, resolve_pads, window_output_dims
from hetero_sdk.reference.registry import kernel


def pad_spatial(x: np.ndarray, begin: Sequence[int], end: Sequence[int], value: float | np.ndarray = 0) -> np.ndarray:
    """Pads the spatial axes (2...) of ``x`` with ``value``; negative pads crop."""
    if not any(begin) and not any(end):
        return x
    if min(*begin, *end) >= 0:
        shape = (*x.shape[:2], *(size + b + e for size, b, e in zip(x.shape[2:], begin, end)))
        padded = np.full(shape, value, dtype=x.dtype) if value else np.zeros(shape, dtype=x.dtype)
        padded[(slice(None), slice(None), *(slice(b, b + size) for b, size in zip(begin, x.shape[2:])))] = x
        return padded
    widths = [(0, 0), (0, 0)] + [(max(b, 0), max(e, 0)) for b, e in zip(begin, end)]
    padded = np.pad(x, widths, constant_values=value)
    crop = tuple(slice(max(-b, 0), padded.shape[i + 2] - max(-e, 0)) for i, (b, e) in enumerate(zip(begin, end)))
    return padded[(slice(None), slice(None), *crop)]


def correlate(
    x: np.ndarray,
    w: np.ndarray,
    strides: Sequence[int],
    dilations: Sequence[int],
    begin: Sequence[int],
    end: Sequence[int],
) -> np.ndarray:
    """``x`` [N, G*Cg, spatial...] correlated with ``w`` [G, Og, Cg, k...] -> [N, G*Og, out...], after
    padding ``x`` by ``begin`` and ``end`` (negative pads crop)."""
    x = pad_spatial(widened(x), begin, end)
    w = widened(w)
    groups, per_group, channels, kernel = w.shape[0], w.shape[1], w.shape[2], w.shape[3:]
    out = [(size - (k - 1) * d - 1) // s + 1 for size, k, d, s in zip(x.shape[2:], kernel, dilations, strides)]
    windows = [
        x[(slice(None), slice(None), *(slice(t * d, t * d + (o - 1) * s + 1, s)
                                      for t, d, o, s in zip(tap, dilations, out, strides)))]
        for tap in np.ndindex(*kernel)
    ]  # fmt: skip
    batch = x.shape[0]
    columns = np.stack(windows, axis=2).reshape(batch, groups, channels * len(windows), -1)
    products = np.matmul(w.reshape(groups, per_group, -1), columns)  # [N, G, Og, pixels]
    return products.reshape(batch, groups * per_group, *out)


def _convolve(node: Node, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A (group) convolution node's result: its pads resolved, then :func:`correlate`."""
    attrs, sizes, kernel = node.attrs, x.shape[2:], w.shape[3:]
    strides, dilations = attrs["strides"], attrs["dilations"]
    begin, end = resolve_pads(attrs["auto_pad"], sizes, kernel, strides, dilations,
                              attrs["pads_begin"], attrs["pads_end"])  # fmt: skip
    window_output_dims(node, sizes, kernel, strides, dilations, begin, end, "explicit")  # the node's error, if any
    return correlate(x, w, strides, dilations, begin, end)


@kernel("Convolution")
def convolution(node: Node, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return _convolve(node, x, w[np.newaxis])


@kernel("GroupConvolution")
def group_convolution(node: Node, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return _convolve(node, x, w)


@kernel("ConvolutionBackpropData")
def convolution_backprop_data(
    node: Node, x: np.ndarray, w: np.ndarray, output_shape: np.ndarray | None = None
) -> np.ndarray:
    strides, dilations = node.attrs["strides"], node.attrs["dilations"]
    kernel, sizes = w.shape[2:], x.shape[2:]
    target = None if output_shape is None else [int(v) for v in output_shape.reshape(-1)]
    begin, out = backprop_geometry(node, sizes, kernel, target)
    # x spread out: its element i lands at i * stride, zeros between
    spread = np.zeros((*x.shape[:2], *((size - 1) * s + 1 for size, s in zip(sizes, strides))), x.dtype)
    spread[(slice(None), slice(None), *(slice(None, None, s) for s in strides))] = x
    # full output position p sums x[i] * w[t] over p = i * s + t * d: a correlation with flipped filters
    # over the spread input padded by the kernel's reach, cropped to start at `begin` and keep `out`
    reach = [(k - 1) * d for k, d in zip(kernel, dilations)]
    pads_begin = [r - b for r, b in zip(reach, begin)]
    pads_end = [o + r - n - p for o, r, n, p in zip(out, reach, spread.shape[2:], pads_begin)]
    flipped = np.flip(w, axis=tuple(range(2, w.ndim))).swapaxes(0, 1)  # [C_OUT, C_IN, k...]
    return correlate(spread, flipped[np.newaxis], [1] * len(kernel), dilations, pads_begin, pads_end)
