"""A wide depthwise ``TemplateConvolution`` kernel bound at compile time to the node's constant filters.

The general kernel (:func:`template_plugin.convolution.grouped_convolution`, its row-GEMM path for
kernels at least :data:`~template_plugin.convolution.ROW_GEMM_TAPS` wide) works out on every call
the pads, the output sizes, the live taps, the strided view of the padded input and the filters' tap
matrices; on small planes (a few rows of a few hundred channels) that costs as much as the arithmetic. This
kernel works them out once per input shape and keeps them; it then does the same operations in the same
order (bit-identical results), but for one thing: per block of channels, the tap columns' partial sums
add up in a wide temporary that stays in cache, and the bias add writes them cropped into the request's
output buffer (the general kernel copies the whole wide result out, then adds the bias in a pass of its own).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetero_sdk import Node
from hetero_sdk.plugin import resolve_pads, window_output_dims
from template_plugin.convolution import ROW_BLOCK, ROW_GEMM_TAPS, live_taps
from template_plugin.fused_conv import convolution_into, finish
from template_plugin.workspace import Workspace

__all__ = ["GEOMETRIES_KEPT", "bind_depthwise"]

GEOMETRIES_KEPT = 16
"""Input shapes whose geometry a bound kernel keeps (the last used; a model fed many shapes stays bounded)."""


@dataclass(frozen=True, slots=True)
class _Geometry:
    """What one input shape's convolution needs besides its buffers."""

    padded: tuple[int, ...]  # the padded input, one spare row past the last padded row
    borders: tuple[tuple[slice, ...], ...]  # the padding regions, zeroed on every call
    inner: tuple[slice, ...]  # where the input goes in the padded one
    view: tuple[tuple[int, ...], tuple[int, ...]]  # shape and strides of the row-shifted view of it
    columns: np.ndarray  # [C, width, rows]: per channel, its taps with the kernel's columns first
    out: tuple[int, ...]  # [N, C, rows, columns] of the result
    block: int  # channels a GEMM takes at a time
    offsets: tuple[int, ...]  # where each tap column's partial sums start in the wide rows


def bind_depthwise(node: Node, filters: Any) -> Any:
    """``node``'s kernel (``kernel(node, workspace, x, w, bias[, scale[, shift]])``): bound to its
    constant ``filters`` when it is a 2-D depthwise convolution (``[G > 1, 1, 1, kh, kw]``, f32 or
    f64) with a last stride of 1, else None. Input shapes whose live taps are narrower than
    :data:`~template_plugin.convolution.ROW_GEMM_TAPS` or that crop (negative pads), calls with
    other filters or element types and calls without a workspace take
    :func:`~template_plugin.fused_conv.convolution_into`. The geometries of the last
    :data:`GEOMETRIES_KEPT` input shapes are kept (``kernel.geometries.cache_info()``)."""
    if not (
        node.attrs["grouped"]
        and isinstance(filters, np.ndarray)
        and filters.dtype in (np.float32, np.float64)
        and filters.ndim == 5
        and filters.shape[0] > 1
        and filters.shape[1:3] == (1, 1)
        and filters.shape[4] >= ROW_GEMM_TAPS
        and node.attrs["strides"][-1] == 1
    ):
        return None
    geometry = functools.lru_cache(maxsize=GEOMETRIES_KEPT)(lambda shape: _geometry(node, shape, filters))
    activation, dtype, channels = node.attrs["activation"], filters.dtype, filters.shape[0]

    def depthwise(
        node: Node,
        workspace: Workspace | None,
        x: np.ndarray,
        w: np.ndarray,
        bias: np.ndarray,
        scale: np.ndarray | None = None,
        shift: np.ndarray | None = None,
    ) -> np.ndarray:
        g = None
        if w is filters and workspace is not None and x.dtype == dtype and x.ndim == 4 and x.shape[1] == channels:
            g = geometry(x.shape)
        if g is None or workspace is None or bias.dtype != dtype:
            return convolution_into(node, workspace, x, w, bias, scale, shift)
        return finish(activation, workspace, _convolve(g, workspace, x, bias), scale, shift)

    depthwise.geometries = geometry  # type: ignore[attr-defined]  # (its cache_info() says what is kept)
    return depthwise


def _geometry(node: Node, shape: tuple[int, ...], filters: np.ndarray) -> _Geometry | None:
    """The convolution's geometry on inputs of ``shape`` as the general kernel works it out, or None
    where the general kernel takes another path."""
    attrs, sizes = node.attrs, shape[2:]
    strides, dilations = attrs["strides"], attrs["dilations"]
    begin, end = resolve_pads(attrs["auto_pad"], sizes, filters.shape[3:], strides, dilations,
                              attrs["pads_begin"], attrs["pads_end"])  # fmt: skip
    out = window_output_dims(node, sizes, filters.shape[3:], strides, dilations, begin, end, "explicit")
    w, begin, end = live_taps(filters, sizes, out, strides, dilations, begin, end)
    rows, width = w.shape[3], w.shape[4]
    if width < ROW_GEMM_TAPS or min(*begin, *end) < 0:
        return None
    (batch, channels, height, breadth), item = shape, filters.dtype.itemsize
    padded = (batch, channels, height + begin[0] + end[0] + 1, breadth + begin[1] + end[1])
    borders = tuple(
        region
        for region in (
            (slice(None), slice(None), slice(0, begin[0])),
            (slice(None), slice(None), slice(begin[0] + height, None)),
            (slice(None), slice(None), slice(None), slice(0, begin[1])),
            (slice(None), slice(None), slice(None), slice(begin[1] + breadth, None)),
        )
        if region[-1].start != region[-1].stop
    )
    pitch = (padded[3] * item, item)
    view_shape = (batch, channels, rows, out[0], padded[3])
    view_strides = (
        channels * padded[2] * padded[3] * item,
        padded[2] * padded[3] * item,
        pitch[0] * dilations[0],
        pitch[0] * strides[0],
        pitch[1],
    )
    pixels = out[0] * padded[3]
    span = pixels + (width - 1) * dilations[1]
    return _Geometry(
        padded,
        borders,
        (slice(None), slice(None), slice(begin[0], begin[0] + height), slice(begin[1], begin[1] + breadth)),
        (view_shape, view_strides),
        np.ascontiguousarray(np.swapaxes(w.reshape(channels, rows, width), 1, 2)),
        (batch, channels, out[0], out[1]),
        max(1, min(channels, ROW_BLOCK // (item * batch * rows * span))),
        tuple(j * dilations[1] for j in range(width)),
    )


def _convolve(g: _Geometry, workspace: Workspace, x: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """Per block of channels, one small GEMM of each channel's taps ``[width, rows]`` with its ``rows``
    row-shifted copies of the padded input, whose partial sums add up shifted by each tap column's
    offset (see :func:`template_plugin.convolution.grouped_convolution`), then ``+ bias`` into the
    result, cropped. ``bias`` holds one value, or one per channel, in any shape that broadcasts along axis 1."""
    padded = workspace.temporary("padded", g.padded, x.dtype)
    for region in g.borders:
        padded[region] = 0
    padded[g.inner] = x
    view = np.ndarray(g.view[0], x.dtype, padded, 0, g.view[1])
    batch, channels, out_rows, out_columns = g.out
    rows, width, breadth = g.view[0][2], len(g.offsets), g.padded[3]
    pixels = out_rows * breadth
    span = pixels + g.offsets[-1]
    shifted = workspace.temporary("depthwise columns", (batch, g.block, rows, span), x.dtype)
    sums = workspace.temporary("depthwise sums", (batch, g.block, width, span), x.dtype)
    wide = workspace.temporary("depthwise rows", (batch, g.block, pixels), x.dtype)
    shifted[..., pixels:] = 0  # read by the last pixels' spare columns only
    per_channel = bias.reshape(-1)
    y = workspace.output(g.out, x.dtype)
    for first in range(0, channels, g.block):
        last = min(channels, first + g.block)
        count = last - first
        part, partial, rows_sum = shifted[:, :count], sums[:, :count], wide[:, :count]
        np.copyto(part[..., :pixels].reshape(batch, count, rows, out_rows, breadth), view[:, first:last])
        np.matmul(g.columns[first:last], part, out=partial)
        tap = [partial[:, :, j, offset : offset + pixels] for j, offset in enumerate(g.offsets)]
        np.add(tap[0], tap[1], out=rows_sum)
        for j in range(2, width):
            np.add(rows_sum, tap[j], out=rows_sum)
        block_bias = per_channel[first:last] if per_channel.size > 1 else per_channel
        np.add(
            rows_sum.reshape(batch, count, out_rows, breadth)[..., :out_columns],
            block_bias.reshape(1, -1, 1, 1),
            out=y[:, first:last],
        )
    return y
