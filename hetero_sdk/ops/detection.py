"""Sorting and detection ops: TopK, NonZero, NonMaxSuppression, Unique."""

from __future__ import annotations

import math
from typing import Any

from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import BOOL, ELEMENT_TYPE, INT, STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import (
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

__all__ = ["non_max_suppression", "non_zero", "topk", "unique"]


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
