"""CumSum (OpenVINO opset3) and CumProd (ONNX opset 26; OpenVINO has none): running sums or products of
data along an axis, inclusive or exclusive, from the first element or from the last."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hetero_sdk.array_api import namespace
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import BOOL, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import NUMERIC_TYPES, normalize_axis
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.ops.inputs import index_input, index_operand

__all__ = ["CUM_PROD", "CUM_SUM", "cum_prod", "cum_sum"]


def cum_sum(data: Any, axis: Any, exclusive: bool = False, reverse: bool = False, name: str | None = None) -> Node:
    """Running sums of ``data`` along ``axis`` (``CumSum``).

    :param axis: a scalar (or one-element) integer, in ``[-rank, rank-1]``.
    :param exclusive: each sum leaves out its own element (the first is 0).
    :param reverse: sum from the last element toward the first.
    """
    attrs = {"exclusive": exclusive, "reverse": reverse}
    return Node(CUM_SUM, [as_output(data), index_input(axis)], attrs, name)


def cum_prod(data: Any, axis: Any, exclusive: bool = False, reverse: bool = False, name: str | None = None) -> Node:
    """Running products of ``data`` along ``axis`` (``CumProd``).

    :param axis: a scalar (or one-element) integer, in ``[-rank, rank-1]``.
    :param exclusive: each product leaves out its own element (the first is 1).
    :param reverse: multiply from the last element toward the first.
    """
    attrs = {"exclusive": exclusive, "reverse": reverse}
    return Node(CUM_PROD, [as_output(data), index_input(axis)], attrs, name)


def _infer(node: Node) -> list[OutputSpec]:
    data = node.input_value(0)
    if data.partial_shape.rank == 0:
        raise node.error("data must have at least one dimension")
    known = constant_value(node.input_value(1))
    if known is not None:
        if known.size != 1:
            raise node.error(f"axis must be one value, got {known.size}")
        normalize_axis(node, int(known.reshape(-1)[0]), data.partial_shape.rank)
    return [(data.element_type, data.partial_shape)]


def _running(function: str) -> Callable[[Node, Any, Any], Any]:
    """The kernel of a running sum or product: ``cumulative_sum`` or ``cumulative_prod`` of the array API."""

    def evaluate(node: Node, x: Any, axis: Any) -> Any:
        return _evaluate(function, node, x, axis)

    return evaluate


def _evaluate(function: str, node: Node, x: Any, axis: Any) -> Any:
    xp = namespace(x)
    dim = int(np.asarray(axis).reshape(-1)[0]) % x.ndim
    if node.attrs["reverse"]:
        x = xp.flip(x, axis=dim)
    sums = getattr(xp, function)(x, axis=dim, include_initial=node.attrs["exclusive"])
    if node.attrs["exclusive"]:
        sums = sums[(slice(None),) * dim + (slice(0, x.shape[dim]),)]
    if node.attrs["reverse"]:
        sums = xp.flip(sums, axis=dim)
    return xp.astype(sums, x.dtype)


CUM_SUM = define(
    OpDef(
        "CumSum",
        "cumulative",
        _infer,
        inputs=(Input("data", NUMERIC_TYPES), index_operand("axis", "a scalar")),
        attrs=(
            Attr("exclusive", BOOL, False, doc="leave each element out of its own sum"),
            Attr("reverse", BOOL, False, doc="sum from the last element toward the first"),
        ),
        version="opset3",
        evaluate=_running("cumulative_sum"),
        doc="Running sums of data along axis.",
    )
)
CUM_PROD = define(
    OpDef(
        "CumProd",
        "cumulative",
        _infer,
        inputs=(Input("data", NUMERIC_TYPES), index_operand("axis", "a scalar")),
        attrs=(
            Attr("exclusive", BOOL, False, doc="leave each element out of its own product"),
            Attr("reverse", BOOL, False, doc="multiply from the last element toward the first"),
        ),
        version="onnx26",
        evaluate=_running("cumulative_prod"),
        doc="Running products of data along axis.",
    )
)
