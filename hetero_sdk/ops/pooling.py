"""Pooling ops: MaxPool (opset8, with indices) and AvgPool (opset1), over 1, 2 or 3 spatial axes.

Output sizes follow :func:`~hetero_sdk.ops.convolution.window_output_dims`, rounded down
(``rounding_type="floor"``) or up (``"ceil"``); in ``ceil`` mode the last window may lie partly or
wholly past the padded input, as in OpenVINO.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import BOOL, ELEMENT_TYPE, INT, INTS, LOWER_STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import INDEX_TYPES, NUMERIC_TYPES, expect_rank
from hetero_sdk.ops.convolution import AUTO_PADS, check_window_attrs, window_output_dims
from hetero_sdk.shape import PartialShape

__all__ = ["AVG_POOL", "MAX_POOL", "ROUNDING_TYPES", "avg_pool", "max_pool"]

ROUNDING_TYPES = ("floor", "ceil")
"""How pooling output sizes are rounded."""


def max_pool(
    data: Any,
    strides: Sequence[int],
    dilations: Sequence[int],
    pads_begin: Sequence[int],
    pads_end: Sequence[int],
    kernel_shape: Sequence[int],
    rounding_type: str = "floor",
    auto_pad: str = "explicit",
    index_element_type: Any = Type.i64,
    axis: int = 0,
    name: str | None = None,
) -> Node:
    """Maximum over sliding windows, with the position of each maximum (``MaxPool``, opset8).

    Padded positions never win. Output 0 holds the maxima; output 1 their indices into the input
    flattened from dimension ``axis`` on (``axis=0``: the whole tensor, ``axis=2``: one channel's
    spatial block). The first maximum in window order wins ties. A window with no input element
    yields the lowest value of the element type and the index of its channel's first element.

    :param data: ``[N, C, spatial...]``.
    :param strides: window step per spatial axis (positive).
    :param dilations: distance between window taps per spatial axis (positive).
    :param pads_begin: padding before each spatial axis (non-negative).
    :param pads_end: padding after each spatial axis (non-negative).
    :param kernel_shape: window size per spatial axis (positive).
    :param rounding_type: ``floor`` or ``ceil``: how output sizes are rounded.
    :param auto_pad: ``explicit``, ``same_upper``, ``same_lower`` or ``valid``.
    :param index_element_type: ``i64`` or ``i32``: the type of the indices output.
    :param axis: the first dimension the indices count over, in ``[-rank, rank)``.
    :param name: the node's friendly name.
    """
    attrs = {
        "strides": list(strides),
        "dilations": list(dilations),
        "pads_begin": list(pads_begin),
        "pads_end": list(pads_end),
        "kernel_shape": list(kernel_shape),
        "rounding_type": str(rounding_type).lower(),
        "auto_pad": str(auto_pad).lower(),
        "index_element_type": index_element_type,
        "axis": axis,
    }
    return Node(MAX_POOL, [as_output(data)], attrs, name)


def avg_pool(
    data: Any,
    strides: Sequence[int],
    pads_begin: Sequence[int],
    pads_end: Sequence[int],
    kernel_shape: Sequence[int],
    exclude_pad: bool,
    rounding_type: str = "floor",
    auto_pad: str = "explicit",
    name: str | None = None,
) -> Node:
    """Mean over sliding windows (``AvgPool``, opset1).

    With ``exclude_pad`` the divisor counts the input elements in the window. Without it, the
    divisor is the kernel size whenever the op pads, else (no pads) again the input elements in the
    window, which differ from the kernel size only in ``ceil`` mode. Integer results are rounded to
    the nearest integer (half to even); a window with no input element gives 0.

    :param data: ``[N, C, spatial...]``.
    :param strides: window step per spatial axis (positive).
    :param pads_begin: padding before each spatial axis (non-negative).
    :param pads_end: padding after each spatial axis (non-negative).
    :param kernel_shape: window size per spatial axis (positive).
    :param exclude_pad: leave padded positions out of the divisor.
    :param rounding_type: ``floor`` or ``ceil``: how output sizes are rounded.
    :param auto_pad: ``explicit``, ``same_upper``, ``same_lower`` or ``valid``.
    :param name: the node's friendly name.
    """
    attrs = {
        "strides": list(strides),
        "pads_begin": list(pads_begin),
        "pads_end": list(pads_end),
        "kernel_shape": list(kernel_shape),
        "exclude_pad": exclude_pad,
        "rounding_type": str(rounding_type).lower(),
        "auto_pad": str(auto_pad).lower(),
    }
    return Node(AVG_POOL, [as_output(data)], attrs, name)


def _infer_pool(node: Node, dilations: bool) -> tuple[Type, PartialShape]:
    element_type = node.input_value(0).element_type
    data = expect_rank(node, 0, 3, 4, 5, what="data")
    n = data.rank - 2
    names = ("strides", "pads_begin", "pads_end", "kernel_shape") + (("dilations",) if dilations else ())
    check_window_attrs(node, n, *names)
    attrs = node.attrs
    spatial = window_output_dims(
        node, data.dims[2:], attrs["kernel_shape"], attrs["strides"], attrs.get("dilations", [1] * n),
        attrs["pads_begin"], attrs["pads_end"], attrs["auto_pad"], ceil_mode=attrs["rounding_type"] == "ceil",
    )  # fmt: skip
    return element_type, PartialShape([data[0], data[1], *spatial])


def _max_pool(node: Node) -> list[OutputSpec]:
    element_type, shape = _infer_pool(node, dilations=True)
    index_type = node.attrs["index_element_type"]
    if index_type not in INDEX_TYPES:
        raise node.error(f"attribute index_element_type={index_type!r} must be i32 or i64")
    axis, rank = node.attrs["axis"], shape.rank
    if not -rank <= axis < rank:
        raise node.error(f"attribute axis={axis!r} must be an integer in [{-rank}, {rank - 1}]")
    return [(element_type, shape), (index_type, shape)]


def _avg_pool(node: Node) -> list[OutputSpec]:
    element_type, shape = _infer_pool(node, dilations=False)
    exclude_pad = node.attrs["exclude_pad"]
    attrs = node.attrs
    if exclude_pad and attrs["auto_pad"] == "explicit":
        for axis, (k, pb, pe) in enumerate(zip(attrs["kernel_shape"], attrs["pads_begin"], attrs["pads_end"])):
            if pb >= k or pe >= k:
                raise node.error(
                    f"with exclude_pad, pads must be smaller than the kernel: spatial axis {axis} has kernel {k}, "
                    f"pads {pb} and {pe}, so some windows would lie wholly in the padding"
                )
    return [(element_type, shape)]


# -- definitions ----------------------------------------------------------------------------------------

_WINDOW = (
    Attr("strides", INTS, doc="window step per spatial axis (positive)"),
    Attr("pads_begin", INTS, doc="padding before each spatial axis"),
    Attr("pads_end", INTS, doc="padding after each spatial axis"),
    Attr("kernel_shape", INTS, doc="window size per spatial axis"),
    Attr("rounding_type", LOWER_STRING, "floor", ROUNDING_TYPES, doc="how output sizes are rounded"),
    Attr("auto_pad", LOWER_STRING, "explicit", AUTO_PADS, doc="explicit pads, same_upper, same_lower or valid"),
)
_DATA = (Input("data", NUMERIC_TYPES, doc="[N, C, spatial...]"),)

MAX_POOL = define(
    OpDef(
        "MaxPool",
        "pooling",
        _max_pool,
        _DATA,
        (
            *_WINDOW,
            Attr("dilations", INTS, doc="distance between window taps"),
            Attr("index_element_type", ELEMENT_TYPE, Type.i64, doc="i64 or i32: the type of the indices output"),
            Attr("axis", INT, 0, doc="the first dimension the indices count over"),
        ),
        version="opset8",
        doc="Maximum over sliding windows, with the position of each maximum.",
    )
)
AVG_POOL = define(
    OpDef(
        "AvgPool",
        "pooling",
        _avg_pool,
        _DATA,
        (*_WINDOW, Attr("exclude_pad", BOOL, doc="leave padded positions out of the divisor")),
        doc="Mean over sliding windows.",
    )
)
