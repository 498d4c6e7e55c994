"""TEMPLATE's convolution: the routes, block sizes and plans that make it fast on CPU.

A (group) convolution is worked out once per node, input shape and filters into a
:class:`ConvolutionPlan` (:func:`plan_convolution`): its pads, output sizes, the taps that read
something other than padding (:func:`live_taps`) and one of four routes, with the filters laid out as
that route multiplies them:

- ``depthwise``: one input channel per group, per block of channels im2col columns and one batched GEMV
  (kernels at least :data:`ROW_GEMM_TAPS` wide at a last stride of 1: one small GEMM per channel over
  row-shifted copies of the input, :data:`ROW_BLOCK` bytes of them at a time);
- ``tap products``: more inputs than outputs at stride 1, ONE GEMM of every tap's filters with the
  flattened input, then the taps' products summed at their offsets;
- ``pointwise``: a 1x1 kernel without padding, one GEMM;
- ``columns``: im2col and one GEMM per group.

:func:`run_convolution` runs a plan, borrowing its buffers from a :class:`~template_plugin.workspace.Workspace`
(the request's arena) when given one. The conformance kit checks these routes against
:mod:`hetero_sdk.reference`'s plain convolution, which shares none of this code. Where the block
sizes and route thresholds come from: ``bench/README.md``.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetero_sdk import Node
from hetero_sdk.plugin import backprop_geometry, resolve_pads, widened, window_output_dims
from template_plugin.workspace import Workspace

__all__ = [
    "ROW_BLOCK", "ROW_GEMM_TAPS", "ConvolutionPlan", "convolution_backprop_data", "grouped_convolution",
    "live_taps", "plan_convolution", "run_convolution",
]  # fmt: skip


def _empty(workspace: Workspace | None, name: str, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    return np.empty(shape, dtype) if workspace is None else workspace.temporary(name, shape, dtype)


def _padded(x: np.ndarray, begin: Sequence[int], end: Sequence[int], workspace: Workspace | None) -> np.ndarray:
    """:func:`pad_spatial` with zeros, into a workspace temporary whose border is zeroed on each call."""
    if workspace is None or not (any(begin) or any(end)) or min(*begin, *end) < 0:
        return pad_spatial(x, begin, end)
    shape = (*x.shape[:2], *(size + b + e for size, b, e in zip(x.shape[2:], begin, end)))
    padded = workspace.temporary("padded", shape, x.dtype)
    for axis, (b, size) in enumerate(zip(begin, x.shape[2:]), 2):
        padded[(slice(None),) * axis + (slice(0, b),)] = 0
        padded[(slice(None),) * axis + (slice(b + size, None),)] = 0
    padded[(slice(None), slice(None), *(slice(b, b + size) for b, size in zip(begin, x.shape[2:])))] = x
    return padded


def pad_spatial(x: np.ndarray, begin: Sequence[int], end: Sequence[int], value: float | np.ndarray = 0) -> np.ndarray:
    """Pads the spatial axes (2...) of ``x``; negative pads crop."""
    if not any(begin) and not any(end):
        return x
    if min(*begin, *end) >= 0:  # a filled array and one slice assignment: np.pad's set-up costs more
        shape = (*x.shape[:2], *(size + b + e for size, b, e in zip(x.shape[2:], begin, end)))
        padded = np.full(shape, value, dtype=x.dtype) if value else np.zeros(shape, dtype=x.dtype)
        inner = tuple(slice(b, b + size) for b, size in zip(begin, x.shape[2:]))
        padded[(slice(None), slice(None), *inner)] = x
        return padded
    widths = [(0, 0), (0, 0)] + [(max(b, 0), max(e, 0)) for b, e in zip(begin, end)]
    padded = np.pad(x, widths, constant_values=value)
    crop = tuple(slice(max(-b, 0), padded.shape[i + 2] - max(-e, 0)) for i, (b, e) in enumerate(zip(begin, end)))
    return padded[(slice(None), slice(None), *crop)]


def _tap_slice(tap: Sequence[int], dilations: Sequence[int], out: Sequence[int], strides: Sequence[int]) -> tuple:
    """The strided slice of the padded input that kernel tap ``tap`` reads for every output position."""
    window = (slice(t * d, t * d + (o - 1) * s + 1, s) for t, d, o, s in zip(tap, dilations, out, strides))
    return (slice(None), slice(None), *window)


@functools.lru_cache(maxsize=1024)
def _tap_slices(
    kernel: tuple[int, ...], dilations: tuple[int, ...], out: tuple[int, ...], strides: tuple[int, ...]
) -> list[tuple[slice, ...]]:
    """Every kernel tap's :func:`_tap_slice`, in row-major tap order (cached: a model repeats its geometries)."""
    return [_tap_slice(tap, dilations, out, strides) for tap in itertools.product(*(range(k) for k in kernel))]


def _tap_view(
    x: np.ndarray, kernel: Sequence[int], dilations: Sequence[int], grid: Sequence[int], strides: Sequence[int]
) -> np.ndarray:
    """A read-only view ``[N, C, *kernel, *grid]`` of ``x`` [N, C, spatial...]: its element
    ``[n, c, t..., o...]`` is ``x[n, c, o * s + t * d...]``, the kernel running over the first
    ``len(kernel)`` spatial axes (every axis, or all but the last for row copies)."""
    pitch = x.strides[2:]
    return np.lib.stride_tricks.as_strided(
        x,
        (*x.shape[:2], *kernel, *grid),
        (*x.strides[:2], *(p * d for p, d in zip(pitch[: len(kernel)], dilations)),
         *(p * s for p, s in zip(pitch, strides))),
        writeable=False,
    )  # fmt: skip


def columns(
    x: np.ndarray,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    out: Sequence[int],
    workspace: Workspace | None = None,
) -> np.ndarray:
    """im2col: a contiguous ``[N, C, taps, pixels]`` array of the (padded) input under every kernel tap
    (the ``[C * taps, pixels]`` matrix of a GEMM, channel-major), in a ``workspace`` temporary when one is
    given. Filled with one strided copy per tap, or, when the taps outnumber the output pixels (an STFT
    as a 1-D convolution: 256 taps, 3 frames), with one copy of a strided view of every tap at once
    (per-tap copies would each move fewer elements than their call costs)."""
    taps = math.prod(kernel)
    cols = _empty(workspace, "columns", (x.shape[0], x.shape[1], taps, *out), x.dtype)
    if taps > math.prod(out):
        np.copyto(cols.reshape(*x.shape[:2], *kernel, *out), _tap_view(x, kernel, dilations, out, strides))
    else:
        for i, window in enumerate(_tap_slices(tuple(kernel), tuple(dilations), tuple(out), tuple(strides))):
            cols[:, :, i] = x[window]
    return cols.reshape(x.shape[0], x.shape[1], taps, -1)


_COLUMN_BLOCK = 1 << 19
"""Bytes of im2col columns a depthwise convolution fills at a time: a block of channels whose columns
stay in cache (L2) between being written and being read by the GEMVs (whole-layer columns of a 3x3
depthwise layer are 9x its input, written to and read back from memory)."""

ROW_BLOCK = 1 << 21
"""Bytes of row-shifted copies :func:`_depthwise_rows` fills at a time."""


ROW_GEMM_TAPS = 4
"""The least kernel width for which a wide depthwise convolution takes :func:`_depthwise_rows` (slower
than the columns for 3x3 kernels)."""


def _depthwise_rows(
    x: np.ndarray,
    taps: np.ndarray,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    out: Sequence[int],
    workspace: Workspace | None,
) -> np.ndarray:
    """The wide depthwise convolution (see :func:`_depthwise`) with columns for the kernel's rows only:
    per channel, ONE small GEMM of its taps ``[width, rows]`` with its ``rows`` row-shifted copies of the
    padded input ``[rows, pixels + spare]`` gives each tap column's partial sums over the whole plane,
    which add up shifted by the column's offset. It copies ``rows`` instead of ``rows * width`` windows of
    the input. The result is a view of a temporary cropping the spare columns.

    :param taps: ``[C, rows, width]``, the filters (``rows`` = the product of the kernel but its last axis).
    """
    batch, channels, width = x.shape[0], x.shape[1], kernel[-1]
    grid = (*out[:-1], x.shape[-1])
    pixels, rows, reach = math.prod(grid), taps.shape[1], (width - 1) * dilations[-1]
    view = _tap_view(x, kernel[:-1], dilations, grid, strides)
    columns = np.ascontiguousarray(np.swapaxes(taps, 1, 2))  # [C, width, rows]
    span = pixels + reach
    block = max(1, min(channels, ROW_BLOCK // (x.dtype.itemsize * batch * rows * span)))
    result = _empty(workspace, "depthwise", (batch, channels, *grid), x.dtype)
    flat = result.reshape(batch, channels, pixels)
    shifted = _empty(workspace, "depthwise columns", (batch, block, rows, span), x.dtype)
    sums = _empty(workspace, "depthwise sums", (batch, block, width, span), x.dtype)
    shifted[..., pixels:] = 0  # read by the last pixels' spare columns only
    for first in range(0, channels, block):
        last = min(channels, first + block)
        part, partial = shifted[:, : last - first], sums[:, : last - first]
        np.copyto(part[..., :pixels].reshape(batch, last - first, *kernel[:-1], *grid), view[:, first:last])
        np.matmul(columns[first:last], part, out=partial)
        target = flat[:, first:last]
        np.add(partial[:, :, 0, :pixels], partial[:, :, 1, dilations[-1] : dilations[-1] + pixels], out=target)
        for j in range(2, width):
            np.add(target, partial[:, :, j, j * dilations[-1] : j * dilations[-1] + pixels], out=target)
    return result[..., : out[-1]]


def _depthwise(
    x: np.ndarray,
    w: np.ndarray,
    strides: Sequence[int],
    dilations: Sequence[int],
    out: Sequence[int],
    wide: bool = False,
    workspace: Workspace | None = None,
) -> np.ndarray:
    """One input channel per group (``w`` [G, m, 1, k...]) on the padded ``x``: per block of channels,
    im2col columns ``[N, block, taps, pixels]`` copied by numpy in one call from a strided view of
    ``x``, then one batched GEMV ``[1, taps] @ [taps, pixels]`` per channel written straight into the
    result (faster than a multiply-add per tap, whose two passes per tap over the whole output leave
    the cache, and than whole-layer columns).

    :param wide: ``x`` has one spare row past its last padded row, the last stride is 1 and the rank is
        at least 2: each output row is then computed across the whole padded width, so that every tap's
        columns are long contiguous runs of ``x``; the result is a view cropping the spare columns.
    :param workspace: lends the columns and the wide result (a temporary: the caller copies it out);
        a result that is not wide is written into its :meth:`~Workspace.output`.
    """
    multiplier = w.shape[1]
    if multiplier > 1:
        x = np.repeat(x, multiplier, axis=1)
    batch, channels, kernel = x.shape[0], w.shape[0] * multiplier, w.shape[3:]
    taps = w.reshape(channels, 1, -1)
    dtype = np.result_type(x, taps)
    x, taps = x.astype(dtype, copy=False), taps.astype(dtype, copy=False)
    if wide and kernel[-1] >= ROW_GEMM_TAPS:
        return _depthwise_rows(x, taps.reshape(channels, -1, kernel[-1]), kernel, strides, dilations, out, workspace)
    grid = (*out[:-1], x.shape[-1]) if wide else tuple(out)
    view = _tap_view(x, kernel, dilations, grid, strides)
    count, pixels = taps.shape[2], math.prod(grid)
    block = max(1, min(channels, _COLUMN_BLOCK // (dtype.itemsize * batch * count * max(pixels, 1))))
    if wide or workspace is None:
        result = _empty(workspace, "depthwise", (batch, channels, *grid), dtype)
    else:
        result = workspace.output((batch, channels, *grid), dtype)
    products = result.reshape(batch, channels, 1, pixels)
    buffer = _empty(workspace, "depthwise columns", (batch * block * count * pixels,), dtype)
    for first in range(0, channels, block):
        last = min(channels, first + block)
        cols = buffer[: batch * (last - first) * count * pixels].reshape(batch, last - first, *kernel, *grid)
        np.copyto(cols, view[:, first:last])  # the im2col copy, one numpy call
        np.matmul(taps[first:last], cols.reshape(batch, last - first, count, pixels), out=products[:, first:last])
    return result[..., : out[-1]] if wide else result


def _stacked_taps(w: np.ndarray) -> np.ndarray:
    """The filters ``w`` [O, C, k...] as :func:`_tap_products` multiplies them: every tap's ``[O, C]``
    block stacked, ``[taps * O, C]``."""
    outs, channels = w.shape[0], w.shape[1]
    return np.ascontiguousarray(np.moveaxis(w.reshape(outs, channels, -1), 2, 0)).reshape(-1, channels)


def _tap_products(
    x: np.ndarray,
    stacked: np.ndarray,
    kernel: Sequence[int],
    dilations: Sequence[int],
    out: Sequence[int],
    workspace: Workspace | None = None,
) -> np.ndarray:
    """A stride-1 convolution of the padded ``x`` [N, C, padded...] as ONE GEMM of every tap's filters
    (``stacked``, :func:`_stacked_taps`) with the flattened input ``[C, padded pixels]``, then the taps'
    products summed at their shifted offsets. It writes ``taps * O`` values per input pixel instead of
    im2col's ``C * taps`` per output pixel: the cheaper choice when a layer has fewer outputs than inputs.

    :param workspace: lends the products and their sums (temporaries) and the result (its output).
    """
    batch, channels, padded = x.shape[0], x.shape[1], x.shape[2:]
    pitch = [math.prod(padded[i + 1 :]) for i in range(len(padded))]
    taps = math.prod(kernel)
    outs = stacked.shape[0] // taps
    flat = x.reshape(batch, channels, -1)
    dtype = np.result_type(stacked, flat)
    products = _empty(workspace, "tap products", (batch, taps * outs, flat.shape[-1]), dtype)
    np.matmul(stacked, flat, out=products)
    products = products.reshape(batch, taps, outs, -1)
    length = sum((o - 1) * p for o, p in zip(out, pitch)) + 1
    wide = _empty(workspace, "tap sums", (batch, outs, out[0] * pitch[0]), dtype)
    wide[:, :, length:] = 0  # past the last output pixel: read by no output, kept finite
    offsets = [sum(t * d * p for t, d, p in zip(tap, dilations, pitch)) for tap in np.ndindex(*kernel)]
    # taps > 1 (the caller's rule): the first two products add up, then the rest
    np.add(products[:, 0, :, offsets[0] : offsets[0] + length], products[:, 1, :, offsets[1] : offsets[1] + length],
           out=wide[:, :, :length])  # fmt: skip
    for i, offset in enumerate(offsets[2:], 2):
        wide[:, :, :length] += products[:, i, :, offset : offset + length]
    rows = wide.reshape(batch, outs, out[0], *padded[1:])
    cropped = rows[(slice(None), slice(None), slice(None), *(slice(o) for o in out[1:]))]
    if workspace is None:
        return np.ascontiguousarray(cropped)
    result = workspace.output(cropped.shape, dtype)
    np.copyto(result, cropped)
    return result


def live_taps(
    w: np.ndarray,
    sizes: Sequence[int],
    out: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    begin: Sequence[int],
    end: Sequence[int],
) -> tuple[np.ndarray, list[int], list[int]]:
    """``w`` [G, Og, Cg, k...] without its leading and trailing taps that read padding only for every
    output (a 5x5 kernel on a 2-row plane padded by 2: its first and last rows), the pads shrunk to
    match (never below 0): the same convolution, with less work."""
    w_begin, w_end = list(begin), list(end)
    if all(b <= (o - 1) * s and (k - 1) * d <= size - 1 + b
           for size, o, s, d, b, k in zip(sizes, out, strides, dilations, begin, w.shape[3:])):  # fmt: skip
        return w, w_begin, w_end  # every tap reads some element (the usual case)
    crop = []
    for axis, (size, o, s, d, b, e) in enumerate(zip(sizes, out, strides, dilations, begin, end)):
        k = w.shape[3 + axis]
        # tap t reads x[o' * s + t * d - b] for o' < o: some element when b - (o - 1) * s <= t * d <= size - 1 + b
        first, last = max(0, -((b - (o - 1) * s) // -d)), min(k - 1, (size - 1 + b) // d)
        if first > last or b < 0 or e < 0:  # no live tap, or a crop: kept as it is
            first, last = 0, k - 1
        else:
            first, last = min(first, b // d), max(last, k - 1 - e // d)
        crop.append(slice(first, last + 1))
        w_begin[axis], w_end[axis] = b - first * d, e - (k - 1 - last) * d
    if all(c.stop - c.start == k for c, k in zip(crop, w.shape[3:])):
        return w, w_begin, w_end
    return w[(slice(None),) * 3 + tuple(crop)], w_begin, w_end


@dataclass(frozen=True, slots=True)
class ConvolutionPlan:
    """What :func:`grouped_convolution` works out from a node's attributes, the input shape and the
    filters before any arithmetic: the pads, the output sizes, the route and the filters as that route
    multiplies them. A caller with constant filters keeps it per input shape (:func:`plan_convolution`)
    and runs it on each input (:func:`run_convolution`)."""

    route: str  # "depthwise", "tap products", "pointwise" or "columns"
    weights: np.ndarray  # depthwise: [G, m, 1, k...]; tap products: [taps * O, C]; else [G, Og, Cg * taps]
    kernel: tuple[int, ...]  # the live taps' kernel
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    begin: tuple[int, ...]
    end: tuple[int, ...]
    out: tuple[int, ...]
    wide: bool  # depthwise only: rows computed across the padded width (one spare padded row)


def plan_convolution(node: Node, shape: Sequence[int], w: np.ndarray) -> ConvolutionPlan:
    """The :class:`ConvolutionPlan` of ``node`` (a Convolution or GroupConvolution, or a node with
    their attributes) on inputs of ``shape`` [N, G*Cg, ...] with filters ``w`` [G, Og, Cg, k...]."""
    attrs = node.attrs
    groups, per_group, c_in, kernel = w.shape[0], w.shape[1], w.shape[2], w.shape[3:]
    strides, dilations, sizes = tuple(attrs["strides"]), tuple(attrs["dilations"]), tuple(shape[2:])
    begin, end = resolve_pads(attrs["auto_pad"], sizes, kernel, strides, dilations,
                              attrs["pads_begin"], attrs["pads_end"])  # fmt: skip
    w = widened(w)
    out = window_output_dims(node, sizes, kernel, strides, dilations, begin, end, "explicit")
    w, begin, end = live_taps(w, sizes, out, strides, dilations, begin, end)
    kernel, wide = tuple(w.shape[3:]), False
    if c_in == 1 and groups > 1:
        route, weights = "depthwise", w
        wide = len(out) > 1 and strides[-1] == 1  # one spare row keeps the wide rows' reads inside x
    elif groups == 1 and math.prod(kernel) > 1 and all(s == 1 for s in strides) and 16 <= c_in >= per_group:
        route, weights = "tap products", _stacked_taps(w[0])
    else:
        pointwise = groups == 1 and math.prod(kernel) == 1 and not any(begin) and not any(end)
        route = "pointwise" if pointwise else "columns"
        weights = np.ascontiguousarray(w.reshape(groups, per_group, -1))
    return ConvolutionPlan(route, weights, kernel, strides, dilations, tuple(begin), tuple(end), tuple(out), wide)


def run_convolution(plan: ConvolutionPlan, x: np.ndarray, workspace: Workspace | None = None) -> np.ndarray:
    """``x`` [N, G*Cg, ...] convolved as ``plan`` says: per group one GEMM ``w[Og, Cg*taps] @ columns[Cg*taps,
    pixels]``, whose result is already in NC(D)HW order (see :func:`grouped_convolution`)."""
    x, out, begin, end = widened(x), plan.out, plan.begin, plan.end
    if plan.route == "depthwise":
        padded = _padded(x, begin, [end[0] + plan.wide, *end[1:]], workspace)
        return _depthwise(padded, plan.weights, plan.strides, plan.dilations, out, plan.wide, workspace)
    if plan.route == "tap products":
        return _tap_products(_padded(x, begin, end, workspace), plan.weights, plan.kernel, plan.dilations, out,
                             workspace)  # fmt: skip
    matrices, batch = plan.weights, x.shape[0]
    groups, per_group = matrices.shape[0], matrices.shape[1]
    if plan.route == "pointwise":
        x = x[(slice(None), slice(None), *(slice(None, (o - 1) * s + 1, s) for o, s in zip(out, plan.strides)))]
        cols = np.ascontiguousarray(x).reshape(batch, 1, x.shape[1], -1)
    else:
        cols = columns(_padded(x, begin, end, workspace), plan.kernel, plan.strides, plan.dilations, out, workspace)
        cols = cols.reshape(batch, groups, -1, cols.shape[-1])
    if workspace is None:
        return np.matmul(matrices, cols).reshape(batch, groups * per_group, *out)  # [N, G, Og, pixels]
    result = workspace.output((batch, groups * per_group, *out), np.result_type(matrices, cols))
    np.matmul(matrices, cols, out=result.reshape(batch, groups, per_group, -1))
    return result


def grouped_convolution(node: Node, x: np.ndarray, w: np.ndarray, workspace: Workspace | None = None) -> np.ndarray:
    """``x`` [N, G*Cg, ...] with ``w`` [G, Og, Cg, k...] -> [N, G*Og, out...]: per group one GEMM
    ``w[Og, Cg*taps] @ columns[Cg*taps, pixels]``, whose result is already in NC(D)HW order. The result
    may be a view of a wider array (depthwise rows computed across the padded width).

    :param workspace: lends the padded input, the columns and the result (a wide depthwise result is a
        view of a temporary: the caller copies it out before the next call).
    """
    return run_convolution(plan_convolution(node, x.shape, w), x, workspace)


def _space_to_depth_inverse(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A transposed convolution whose strides equal its kernel (no padding, no dilation): each input
    pixel owns its own output block, so it is ONE GEMM of the filters ``[C_OUT * taps, C_IN]`` with the
    flattened input, then one strided copy per tap of its ``[N, C_OUT, sizes...]`` products into the result."""
    batch, channels, sizes = x.shape[0], x.shape[1], x.shape[2:]
    outs, kernel = w.shape[1], w.shape[2:]
    filters = np.ascontiguousarray(np.moveaxis(w.reshape(channels, -1), 0, 1))  # [C_OUT * taps, C_IN]
    products = np.matmul(filters, x.reshape(batch, channels, -1)).reshape(batch, outs, *kernel, *sizes)
    result = np.empty((batch, outs, *(s * k for s, k in zip(sizes, kernel))), products.dtype)
    for tap in np.ndindex(*kernel):
        result[(slice(None), slice(None), *(slice(t, None, k) for t, k in zip(tap, kernel)))] = products[:, :, *tap]
    return result


def convolution_backprop_data(
    node: Node, x: np.ndarray, w: np.ndarray, output_shape: np.ndarray | None = None
) -> np.ndarray:
    """TEMPLATE's ``ConvolutionBackpropData`` kernel: one matrix product per kernel tap scattered into a
    strided slice of the full result, then cropped; a transposed convolution whose strides equal its
    kernel (an upsampling) is one GEMM (:func:`_space_to_depth_inverse`)."""
    attrs = node.attrs
    kernel, sizes = w.shape[2:], x.shape[2:]
    strides, dilations = attrs["strides"], attrs["dilations"]
    target = None if output_shape is None else [int(v) for v in output_shape.reshape(-1)]
    begin, out = backprop_geometry(node, sizes, kernel, target)
    x, w = widened(x), widened(w)
    full = [s * (size - 1) + (k - 1) * d + 1 for size, k, s, d in zip(sizes, kernel, strides, dilations)]
    if list(strides) == list(kernel) and not any(begin) and list(out) == full and all(d == 1 for d in dilations):
        return _space_to_depth_inverse(x, w)
    # Every kernel tap scatters one matrix product into a strided slice of the full result.
    products = np.tensordot(x, w, axes=([1], [0]))  # [N, sizes..., C_OUT, kernel...]
    n = len(kernel)
    result = np.zeros((x.shape[0], w.shape[1], *full), dtype=products.dtype)
    for tap in np.ndindex(*kernel):
        target_slice = tuple(slice(t * d, t * d + s * (size - 1) + 1, s)
                             for t, d, s, size in zip(tap, dilations, strides, sizes))  # fmt: skip
        result[(slice(None), slice(None), *target_slice)] += np.moveaxis(products[(Ellipsis, *tap)], n + 1, 1)
    cropped = np.zeros((x.shape[0], w.shape[1], *out), dtype=result.dtype)
    source = tuple(slice(b, min(b + o, f)) for b, o, f in zip(begin, out, full))
    dest = tuple(slice(0, max(min(b + o, f) - b, 0)) for b, o, f in zip(begin, out, full))
    cropped[(slice(None), slice(None), *dest)] = result[(slice(None), slice(None), *source)]
    return cropped
