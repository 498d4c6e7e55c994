"""Sorting and detection ops: TopK, NonZero, NonMaxSuppression, Unique, ROIAlign."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hetero_sdk.array_api import namespace, widened
from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import BOOL, ELEMENT_TYPE, FLOAT, INT, STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import (
    INDEX_TYPES,
    INTEGRAL_TYPES,
    NUMERIC_TYPES,
    REAL_TYPES,
    expect_rank,
    merge_dims,
    normalize_axis,
)
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.ops.inputs import index_input, index_operand, known_ints
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = ["non_max_suppression", "non_zero", "roi_align", "topk", "unique"]


def topk(
    data: Any,
    k: Any,
    axis: int,
    mode: str,
    sort: str,
    index_element_type: Any = Type.i32,
    stable: bool = False,
    name: str | None = None,
) -> Node:
    """The ``k`` largest or smallest elements along ``axis`` and their indices (``TopK``, opset11).

    :param data: the input tensor (any numeric type).
    :param k: a scalar of any integer type: how many elements to select, in ``[0, data.shape[axis]]``.
    :param axis: the axis to select along; negative counts from the back.
    :param mode: ``max`` (largest first) or ``min`` (smallest first).
    :param sort: the order of the selected elements: ``value`` (by value, as ``mode`` says), ``index``
        (ascending by index) or ``none`` (unspecified; the reference uses ``value``).
    :param index_element_type: ``i32`` or ``i64``, the type of the indices output.
    :param stable: keep equal elements in input order. The reference kernel always does (lower index
        first), which is one of the valid results when ``stable`` is False.
    :returns: a node with two outputs: ``values`` (the type of ``data``) and ``indices``.
    """
    attrs = {
        "axis": int(axis),
        "mode": mode,
        "sort": sort,
        "index_element_type": Type.of(index_element_type),
        "stable": bool(stable),
    }
    return Node(TOPK, [as_output(data), as_output(k)], attrs, name)


def non_zero(data: Any, output_type: Any = Type.i64, name: str | None = None) -> Node:
    """The indices of the non-zero elements (``NonZero``, opset3).

    The output has shape ``[rank, count]``, one column per non-zero element in row-major order (like
    ``numpy.stack(numpy.nonzero(data))``); a scalar input counts as a 1-D tensor of one element.
    ``count`` depends on the values, so the output shape is dynamic.

    :param output_type: ``i64`` or ``i32``.
    """
    return Node(NON_ZERO, [as_output(data)], {"output_type": Type.of(output_type)}, name)


def non_max_suppression(
    boxes: Any,
    scores: Any,
    max_output_boxes_per_class: Any = None,
    iou_threshold: Any = None,
    score_threshold: Any = None,
    soft_nms_sigma: Any = None,
    box_encoding: str = "corner",
    sort_result_descending: bool = True,
    output_type: Any = Type.i64,
    name: str | None = None,
) -> Node:
    """Greedy (or soft, Gaussian) non-maximum suppression per batch and class (``NonMaxSuppression``, opset9).

    For each batch and class the box with the highest score is selected while its score is above
    ``score_threshold``, up to ``max_output_boxes_per_class`` boxes. Without Soft-NMS
    (``soft_nms_sigma == 0``) every remaining box whose IoU with the selected one is above
    ``iou_threshold`` is removed; with it every remaining score is multiplied by
    ``exp(-0.5 * iou**2 / soft_nms_sigma)`` and boxes whose score falls to ``score_threshold`` or
    below are removed. As in OpenVINO's implementations a box is kept only when its score is strictly
    greater than ``score_threshold``.

    :param boxes: ``[num_batches, num_boxes, 4]`` floating-point boxes.
    :param scores: ``[num_batches, num_classes, num_boxes]`` floating-point scores.
    :param max_output_boxes_per_class: an integer scalar (or 1-element 1-D tensor); default 0.
    :param iou_threshold: a floating-point scalar; default 0.
    :param score_threshold: a floating-point scalar; default 0.
    :param soft_nms_sigma: a floating-point scalar; default 0 (plain NMS).
        An optional input left as None becomes its default when a later one is given, else is omitted.
    :param box_encoding: ``corner`` (``[y1, x1, y2, x2]``, any diagonal pair of corners) or ``center``
        (``[x_center, y_center, width, height]``).
    :param sort_result_descending: True: all selected boxes sorted by score, descending, across batches
        and classes (ties by batch, class, box index); False: grouped by batch then class, each group
        in selection order.
    :param output_type: ``i64`` or ``i32``, the type of ``selected_indices`` and ``valid_outputs``.
    :returns: a node with three outputs: ``selected_indices`` ``[n, 3]`` (batch, class, box),
        ``selected_scores`` ``[n, 3]`` f32 (batch, class, score) and ``valid_outputs`` ``[1]`` (``n``).
    """
    optional = [max_output_boxes_per_class, iou_threshold, score_threshold, soft_nms_sigma]
    defaults: list[Any] = [0, 0.0, 0.0, 0.0]
    given = [i for i, v in enumerate(optional) if v is not None]
    inputs = [as_output(boxes), as_output(scores)]
    for i in range(given[-1] + 1 if given else 0):
        inputs.append(as_output(defaults[i] if optional[i] is None else optional[i]))
    attrs = {
        "box_encoding": box_encoding,
        "sort_result_descending": bool(sort_result_descending),
        "output_type": Type.of(output_type),
    }
    return Node(NON_MAX_SUPPRESSION, inputs, attrs, name)


def unique(
    data: Any,
    axis: Any = None,
    sorted: bool = True,  # noqa: A002  (the attribute's name, as in OpenVINO's opset10.unique)
    index_element_type: Any = Type.i64,
    count_element_type: Any = Type.i64,
    name: str | None = None,
) -> Node:
    """The distinct elements of ``data``, or its distinct slices along ``axis`` (``Unique``, opset10).

    :param axis: None (the flattened data's distinct elements) or a scalar integer, in ``[-rank, rank-1]``.
    :param sorted: ascending (slices: in lexicographic order); False keeps the order of first occurrence.
    :param index_element_type: ``i32`` or ``i64``, the type of the two index outputs.
    :param count_element_type: ``i32`` or ``i64``, the type of the counts.
    :returns: a node with four outputs: ``unique`` (the distinct elements or slices), ``indices`` (where
        each first occurs in ``data``), ``reverse_indices`` (for each element or slice of ``data``, its
        position in ``unique``) and ``counts``. Their lengths depend on the values of ``data``.
    """
    attrs = {
        "sorted": bool(sorted),
        "index_element_type": Type.of(index_element_type),
        "count_element_type": Type.of(count_element_type),
    }
    inputs = [as_output(data)] + ([] if axis is None else [index_input(axis)])
    return Node(UNIQUE, inputs, attrs, name)


def _expect_scalar(node: Node, index: int, what: str) -> None:
    shape = node.input_value(index).partial_shape
    if shape.rank > 1 or shape.dims not in ((), (1,), (DYNAMIC,)):
        raise node.error(f"{what} must be a scalar or a 1-D tensor of one element, got shape {shape}")


def _topk(node: Node) -> list[OutputSpec]:
    element_type = node.input_value(0).element_type
    data = node.input_value(0).partial_shape
    if data.rank == 0:
        raise node.error("data must have rank >= 1, got a scalar")
    if node.input_value(1).partial_shape.rank != 0:
        raise node.error(f"k must be a scalar, got shape {node.input_value(1).partial_shape}")
    axis = normalize_axis(node, node.attrs["axis"], data.rank)
    index_type = node.attrs["index_element_type"]
    k_value = constant_value(node.input_value(1))
    k = DYNAMIC
    if k_value is not None:
        k = int(k_value)
        if k < 0:
            raise node.error(f"k must be >= 0, got {k}")
        if data[axis] != DYNAMIC and k > data[axis]:
            raise node.error(f"k={k} exceeds dimension {axis} of data {data} ({data[axis]})")
    shape = PartialShape(k if i == axis else d for i, d in enumerate(data))
    return [(element_type, shape), (index_type, shape)]


def _non_zero(node: Node) -> list[OutputSpec]:
    output_type = node.attrs["output_type"]
    shape = node.input_value(0).partial_shape
    if shape.rank == 0:
        return [(output_type, PartialShape([1, DYNAMIC]))]
    count = 0 if 0 in shape.dims else DYNAMIC
    return [(output_type, PartialShape([shape.rank, count]))]


def _non_max_suppression(node: Node) -> list[OutputSpec]:
    boxes = expect_rank(node, 0, 3, what="boxes")
    scores = expect_rank(node, 1, 3, what="scores")
    if boxes[2] not in (4, DYNAMIC):
        raise node.error(f"boxes must have shape [num_batches, num_boxes, 4], got {boxes}")
    merge_dims(node, boxes[0], scores[0], f"num_batches of boxes {boxes} and scores {scores} differ")
    merge_dims(node, boxes[1], scores[2], f"num_boxes of boxes {boxes} and scores {scores} differ")
    for index, what in enumerate(_NMS_SCALARS, start=2):
        if node.get_input_size() > index:
            _expect_scalar(node, index, what)
    output_type = node.attrs["output_type"]
    selected = PartialShape([DYNAMIC, 3])
    return [(output_type, selected), (Type.f32, selected), (output_type, PartialShape([1]))]


def _unique(node: Node) -> list[OutputSpec]:
    data = node.input_value(0).partial_shape
    index_type, count_type = node.attrs["index_element_type"], node.attrs["count_element_type"]
    found = PartialShape([DYNAMIC])
    if node.get_input_size() == 1:
        size = DYNAMIC if DYNAMIC in data.dims else math.prod(data.dims)
        return [
            (node.input_value(0).element_type, found),
            (index_type, found),
            (index_type, [size]),
            (count_type, found),
        ]
    _expect_scalar(node, 1, "axis")
    axis = known_ints(node, 1)
    if axis is None:
        unique_shape, lines = PartialShape([DYNAMIC] * data.rank), DYNAMIC
    else:
        at = normalize_axis(node, axis[0], data.rank)
        unique_shape, lines = PartialShape(DYNAMIC if i == at else d for i, d in enumerate(data)), data[at]
    element_type = node.input_value(0).element_type
    return [(element_type, unique_shape), (index_type, found), (index_type, [lines]), (count_type, found)]


_NMS_SCALARS = ("max_output_boxes_per_class", "iou_threshold", "score_threshold", "soft_nms_sigma")
_INDEX_TYPE_CHOICES = (Type.i32, Type.i64)

TOPK = define(
    OpDef(
        "TopK",
        "detection",
        _topk,
        inputs=(Input("data", NUMERIC_TYPES), Input("k", INTEGRAL_TYPES, decides_shape=True, doc="a scalar")),
        attrs=(
            Attr("axis", INT, doc="the axis to select along", axis_of=0),
            Attr("mode", STRING, choices=("max", "min"), doc="largest or smallest first"),
            Attr("sort", STRING, choices=("value", "index", "none"), doc="the order of the selected elements"),
            Attr("index_element_type", ELEMENT_TYPE, Type.i32, _INDEX_TYPE_CHOICES, doc="the indices' type"),
            Attr("stable", BOOL, False, doc="keep equal elements in input order"),
        ),
        version="opset11",
        doc="The k largest or smallest elements along an axis, with their indices.",
    )
)
NON_ZERO = define(
    OpDef(
        "NonZero",
        "detection",
        _non_zero,
        inputs=(Input("data"),),
        attrs=(Attr("output_type", ELEMENT_TYPE, Type.i64, _INDEX_TYPE_CHOICES, doc="i64 or i32"),),
        version="opset3",
        data_dependent=True,
        doc="The indices of the non-zero elements, one row per dimension.",
    )
)
UNIQUE = define(
    OpDef(
        "Unique",
        "detection",
        _unique,
        inputs=(Input("data"), index_operand("axis", "a scalar; absent: the flattened data", optional=True)),
        attrs=(
            Attr("sorted", BOOL, True, doc="ascending; else in order of first occurrence"),
            Attr("index_element_type", ELEMENT_TYPE, Type.i64, _INDEX_TYPE_CHOICES, doc="the indices' type"),
            Attr("count_element_type", ELEMENT_TYPE, Type.i64, _INDEX_TYPE_CHOICES, doc="the counts' type"),
        ),
        version="opset10",
        data_dependent=True,
        doc="The distinct elements or slices of data, where they first occur, where each goes, how often.",
    )
)
NON_MAX_SUPPRESSION = define(
    OpDef(
        "NonMaxSuppression",
        "detection",
        _non_max_suppression,
        inputs=(
            Input("boxes", REAL_TYPES, doc="[num_batches, num_boxes, 4]"),
            Input("scores", REAL_TYPES, doc="[num_batches, num_classes, num_boxes]"),
            Input("max_output_boxes_per_class", INTEGRAL_TYPES, optional=True, doc="a scalar; 0 by default"),
            *(Input(name, REAL_TYPES, optional=True, doc="a scalar; 0 by default") for name in _NMS_SCALARS[1:]),
        ),
        attrs=(
            Attr("box_encoding", STRING, "corner", ("corner", "center"), doc="how a box is given"),
            Attr("sort_result_descending", BOOL, True, doc="sort all selections by score"),
            Attr("output_type", ELEMENT_TYPE, Type.i64, _INDEX_TYPE_CHOICES, doc="i64 or i32"),
        ),
        version="opset9",
        data_dependent=True,
        doc="Selects boxes by score, dropping those overlapping a better one.",
    )
)


# -- ROIAlign (opset9): per region of interest, a ``pooled_h x pooled_w`` grid of bins, each the average (or
# maximum) of bilinear samples of the feature map.
#
# One array-API kernel serves every device. With ``sampling_ratio`` 0 the number of samples per bin
# follows each region's size (a value known at run time only): the kernel then takes one region at a time,
# which numpy can and XLA, whose shapes are static, cannot (it declines such nodes).


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
