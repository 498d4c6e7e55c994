"""ROIAlign (opset9): per region of interest, a ``pooled_h x pooled_w`` grid of bins, each the average (or
maximum) of bilinear samples of the feature map.

One array-API kernel serves every device. With ``sampling_ratio`` 0 the number of samples per bin
follows each region's size (a value known at run time only): the kernel then takes one region at a time,
which numpy can and XLA, whose shapes are static, cannot (it declines such nodes).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hetero_sdk.array_api import namespace, widened
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import FLOAT, INT, STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import INDEX_TYPES, REAL_TYPES, expect_rank, merge_dims
from hetero_sdk.shape import PartialShape

__all__ = ["roi_align"]

ROI_MODES = ("avg", "max")
ALIGNED_MODES = ("asymmetric", "half_pixel_for_nn", "half_pixel")


def roi_align(
    data: Any,
    rois: Any,
    batch_indices: Any,
    pooled_h: int,
    pooled_w: int,
    sampling_ratio: int,
    spatial_scale: float,
    mode: str = "avg",
    aligned_mode: str = "asymmetric",
    name: str | None = None,
) -> Node:
    """Pools each region of interest of ``data`` into a fixed grid (``ROIAlign``, opset9).

    :param data: ``[N, C, H, W]`` feature maps.
    :param rois: ``[R, 4]``: ``x1, y1, x2, y2`` of each region, in the input image's coordinates.
    :param batch_indices: ``[R]``: the feature map of each region.
    :param pooled_h: the bins per region along the height; ``pooled_w`` along the width.
    :param sampling_ratio: bilinear samples per bin along each axis; 0: ``ceil(region size / bins)``.
    :param spatial_scale: multiplies region coordinates into feature-map coordinates.
    :param mode: ``avg`` or ``max`` of each bin's samples (``max`` of each sample's largest weighted
        corner, as ONNX Runtime computes it).
    :param aligned_mode: ``half_pixel`` shifts coordinates by -0.5 (pixel centers);
        ``asymmetric`` does not, and makes each region at least 1x1; ``half_pixel_for_nn`` shifts and
        keeps that minimum.
    """
    inputs = [as_output(data), as_output(rois), as_output(batch_indices)]
    attrs = {
        "pooled_h": int(pooled_h),
        "pooled_w": int(pooled_w),
        "sampling_ratio": int(sampling_ratio),
        "spatial_scale": float(spatial_scale),
        "mode": mode,
        "aligned_mode": aligned_mode,
    }
    return Node(ROI_ALIGN, inputs, attrs, name)


def _roi_align(node: Node) -> list[OutputSpec]:
    data = expect_rank(node, 0, 4, what="data")
    rois = expect_rank(node, 1, 2, what="rois")
    indices = expect_rank(node, 2, 1, what="batch_indices")
    if rois[1] not in (4, -1):
        raise node.error(f"rois is {rois}; each region has 4 coordinates: [R, 4]")
    for key in ("pooled_h", "pooled_w"):
        if node.attrs[key] < 1:
            raise node.error(f"attribute {key}={node.attrs[key]} must be positive")
    if node.attrs["sampling_ratio"] < 0:
        raise node.error(f"attribute sampling_ratio={node.attrs['sampling_ratio']} must be 0 (adaptive) or positive")
    count = merge_dims(node, rois[0], indices[0], "the regions in rois and batch_indices")
    dims = [count, data[1], node.attrs["pooled_h"], node.attrs["pooled_w"]]
    return [(node.input_value(0).element_type, PartialShape(dims))]


def _axis_samples(xp: Any, start: Any, size: Any, bins: int, grid: int, length: int) -> tuple[Any, ...]:
    """Per region, bin and sample along one axis (``[R, bins, grid]``): the low and high pixel, their
    weights, and whether the sample lies on the map."""
    step = size / bins
    offsets = xp.arange(bins, dtype=start.dtype)[:, None] + (xp.arange(grid, dtype=start.dtype)[None, :] + 0.5) / grid
    c = start[:, None, None] + offsets[None] * step[:, None, None]
    inside = (c >= -1.0) & (c <= float(length))
    c = xp.clip(c, 0.0, None)
    low = xp.floor(c)
    at_end = low >= length - 1
    low = xp.where(at_end, float(length - 1), low)
    c = xp.where(at_end, low, c)
    high = xp.where(at_end, low, low + 1)
    frac = c - low
    return xp.astype(low, xp.int32), xp.astype(high, xp.int32), 1 - frac, frac, inside


def _regions(node: Node, xp: Any, rois: Any) -> tuple[Any, Any, Any, Any]:
    """Each region's start and size (y then x) in feature-map coordinates."""
    attrs = node.attrs
    offset = 0.0 if attrs["aligned_mode"] == "asymmetric" else 0.5
    boxes = rois * attrs["spatial_scale"] - offset
    x1, y1, x2, y2 = (boxes[:, i] for i in range(4))
    height, width = y2 - y1, x2 - x1
    if attrs["aligned_mode"] != "half_pixel":
        height, width = xp.maximum(height, 1.0), xp.maximum(width, 1.0)
    return y1, height, x1, width


def _pool(node: Node, xp: Any, maps: Any, rois: Any, batch: Any, grid_h: int, grid_w: int) -> Any:
    """``[R, C, pooled_h, pooled_w]`` for regions sampled on a ``grid_h x grid_w`` grid per bin."""
    attrs = node.attrs
    ph, pw = attrs["pooled_h"], attrs["pooled_w"]
    height, width = maps.shape[1], maps.shape[2]
    y1, roi_h, x1, roi_w = _regions(node, xp, rois)
    ys = _axis_samples(xp, y1, roi_h, ph, grid_h, height)
    xs = _axis_samples(xp, x1, roi_w, pw, grid_w, width)
    b = xp.reshape(batch, (-1, 1, 1, 1, 1))

    def rows(a: Any) -> Any:
        return xp.reshape(a, (a.shape[0], ph, grid_h, 1, 1))

    def cols(a: Any) -> Any:
        return xp.reshape(a, (a.shape[0], 1, 1, pw, grid_w))

    inside = rows(ys[4]) & cols(xs[4])
    terms = []
    for y_index, y_weight in ((ys[0], ys[2]), (ys[1], ys[3])):
        for x_index, x_weight in ((xs[0], xs[2]), (xs[1], xs[3])):
            weight = xp.where(inside, rows(y_weight) * cols(x_weight), 0.0)
            terms.append(maps[b, rows(y_index), cols(x_index)] * weight[..., None])  # [R, ph, gh, pw, gw, C]
    if attrs["mode"] == "avg":
        pooled = xp.sum(terms[0] + terms[1] + terms[2] + terms[3], axis=(2, 4)) / (grid_h * grid_w)
    else:
        corner = xp.maximum(xp.maximum(terms[0], terms[1]), xp.maximum(terms[2], terms[3]))
        pooled = xp.max(corner, axis=(2, 4))
    return xp.permute_dims(pooled, (0, 3, 1, 2))


def _roi_align_kernel(node: Node, data: Any, rois: Any, batch_indices: Any) -> Any:
    xp = namespace(data, rois)
    compute = widened(data)
    maps = xp.permute_dims(compute, (0, 2, 3, 1))  # [N, H, W, C]
    boxes = xp.astype(rois, compute.dtype)
    batch = xp.astype(batch_indices, xp.int32)
    ratio = node.attrs["sampling_ratio"]
    if ratio > 0:
        return xp.astype(_pool(node, xp, maps, boxes, batch, ratio, ratio), data.dtype)
    if boxes.shape[0] == 0:
        return xp.zeros((0, data.shape[1], node.attrs["pooled_h"], node.attrs["pooled_w"]), dtype=data.dtype)
    _, roi_h, _, roi_w = _regions(node, np, np.asarray(boxes, np.float64))  # run-time values: numpy only
    parts = []
    for r in range(boxes.shape[0]):
        grid_h = math.ceil(float(roi_h[r]) / node.attrs["pooled_h"])
        grid_w = math.ceil(float(roi_w[r]) / node.attrs["pooled_w"])
        if grid_h < 1 or grid_w < 1:  # an empty region has no samples: its bins are 0
            parts.append(
                xp.zeros((1, data.shape[1], node.attrs["pooled_h"], node.attrs["pooled_w"]), dtype=compute.dtype)
            )
            continue
        parts.append(_pool(node, xp, maps, boxes[r : r + 1], batch[r : r + 1], grid_h, grid_w))
    return xp.astype(xp.concat(parts, axis=0), data.dtype)


ROI_ALIGN = define(
    OpDef(
        "ROIAlign",
        "detection",
        _roi_align,
        inputs=(
            Input("data", REAL_TYPES, doc="[N, C, H, W] feature maps"),
            Input("rois", REAL_TYPES, doc="[R, 4]: x1, y1, x2, y2 per region"),
            Input("batch_indices", INDEX_TYPES, doc="[R]: the feature map of each region"),
        ),
        attrs=(
            Attr("pooled_h", INT, doc="bins per region along the height"),
            Attr("pooled_w", INT, doc="bins per region along the width"),
            Attr("sampling_ratio", INT, doc="samples per bin and axis; 0: adaptive to the region's size"),
            Attr("spatial_scale", FLOAT, doc="region coordinates to feature-map coordinates"),
            Attr("mode", STRING, "avg", ROI_MODES, doc="avg or max of each bin's samples"),
            Attr("aligned_mode", STRING, "asymmetric", ALIGNED_MODES, doc="pixel-center shift and minimum size"),
        ),
        version="opset9",
        evaluate=_roi_align_kernel,
        doc="Pools each region of interest into a fixed grid of bilinearly sampled bins.",
    )
)
