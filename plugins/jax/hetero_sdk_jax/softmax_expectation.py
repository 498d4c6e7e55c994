"""``XlaSoftmaxExpectation``: a Softmax over the channels followed by a 1x1 convolution to one channel by
constant weights, as one op: the expectation of the weights under the Softmax.

YOLOv8's DFL head turns each box side's 16 bin scores into a distance so: ``[N, 64, A]`` is reshaped to
``[N, 4, 16, A]``, transposed to ``[N, 16, 4, A]``, Softmax over the 16 bins, and a 1x1 convolution with the
fixed filters ``0..15`` (bias-free) sums ``p[c] * c``. XLA ran the transpose, the Softmax's three loops and the
convolution (a library product of one output channel) apart, storing the ``[N, 16, 4, A]`` probabilities in
between. ``sum_c softmax(x)[c] * w[c] = sum_c exp(x[c] - m) * w[c] / sum_c exp(x[c] - m)``, so
:class:`SoftmaxExpectationFusion` makes the op, on the Transpose's input where a Transpose feeds the Softmax
alone (the op's result, with the reduced axis of size 1, is transposed after it: a move of a size-1 axis,
which XLA makes a reshape). The op's value is the pattern's up to f32 rounding (one division at the end
instead of one per probability); the native kernel (:func:`~hetero_sdk_jax.lowering.kernels.softmax.
native_expectation`) runs it in two passes over the bins, elsewhere XLA fuses the definition's reductions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hetero_sdk import Model, Node, Output, PartialShape, Type, opset
from hetero_sdk.plugin import (
    INT,
    Attr,
    ConsumerMap,
    Input,
    MatcherPass,
    OpDef,
    OutputSpec,
    constant_value,
    define,
    namespace,
    replace_node,
    widened,
)

__all__ = ["SOFTMAX_EXPECTATION", "SOFTMAX_EXPECTATION_OP", "SoftmaxExpectationFusion", "softmax_expectation"]

SOFTMAX_EXPECTATION = "XlaSoftmaxExpectation"
"""The op's type name."""


def softmax_expectation(data: Output, weights: Output, axis: int, name: str | None = None) -> Node:
    """``sum(softmax(data, axis) * weights, axis, keepdims=True)``; ``weights`` holds one value per position
    of ``axis`` (shape ``[C]``), ``axis`` is non-negative."""
    return Node(SOFTMAX_EXPECTATION_OP, [data, weights], {"axis": axis}, name)


def _infer(node: Node) -> list[OutputSpec]:
    data, weights = node.input_value(0).partial_shape, node.input_value(1).partial_shape
    axis = node.attrs["axis"]
    if not data.rank_is_static or not 0 <= axis < data.rank:
        raise node.error(f"axis {axis} must be a non-negative axis of the data {data}")
    if weights.rank != 1 or (weights[0] >= 0 and data[axis] >= 0 and weights[0] != data[axis]):
        raise node.error(f"weights {weights} must hold one value per position of axis {axis} of {data}")
    dims = list(data.dims)
    dims[axis] = 1
    return [(node.input_value(0).element_type, PartialShape(dims))]


def _definition(node: Node, x: Any, w: Any) -> Any:
    xp, axis = namespace(x), node.attrs["axis"]
    x = widened(x)
    shifted = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
    weights = xp.reshape(xp.asarray(w, dtype=x.dtype), (-1,) + (1,) * (x.ndim - axis - 1))
    return xp.sum(shifted * weights, axis=axis, keepdims=True) / xp.sum(shifted, axis=axis, keepdims=True)


SOFTMAX_EXPECTATION_OP = define(
    OpDef(
        SOFTMAX_EXPECTATION,
        "normalization",
        _infer,
        inputs=(
            Input("data", frozenset({Type.f32})),
            Input("weights", frozenset({Type.f32}), doc="[C], one value per position of axis"),
        ),
        attrs=(Attr("axis", INT, doc="the Softmax's axis, non-negative"),),
        version="xla",
        evaluate=_definition,
        doc="sum(softmax(data, axis) * weights, axis, keepdims=True) in one op.",
    )
)


def _single_channel_weights(conv: Node) -> np.ndarray | None:
    """The ``[C]`` filters of ``conv`` when it is an f32 Convolution of constant ``[1, C, 1, ...]`` filters with
    unit strides and no padding (a per-position dot over the channels), else None."""
    if conv.type_name != "Convolution" or conv.output(0).element_type != Type.f32:
        return None
    filters = constant_value(conv.input_value(1))
    if filters is None or filters.ndim < 3 or filters.shape[0] != 1 or any(k != 1 for k in filters.shape[2:]):
        return None
    if any(s != 1 for s in conv.attrs["strides"]):
        return None
    explicit = conv.attrs["auto_pad"] in ("explicit", "notset")
    if explicit and any(p != 0 for p in (*conv.attrs["pads_begin"], *conv.attrs["pads_end"])):
        return None
    return np.asarray(filters, np.float32).reshape(filters.shape[1])


def _only_use(output: Output, users: ConsumerMap) -> bool:
    return users.count(output) == 1 and not users.feeds_result(output)


def _transposed_source(softmax: Node, users: ConsumerMap) -> tuple[Output, list[int]] | None:
    """``(x, perm)`` when the Softmax's input is ``Transpose(x, perm)`` by a constant order, used by it alone."""
    source = softmax.input_value(0).node
    if source.type_name != "Transpose" or not _only_use(source.output(0), users):
        return None
    order = constant_value(source.input_value(1))
    rank = softmax.output(0).partial_shape.rank
    if order is None or order.size != rank:
        return None
    return source.input_value(0), [int(v) for v in order.reshape(-1)]


class SoftmaxExpectationFusion(MatcherPass):
    """Rewrites ``Convolution(Softmax(x, axis=1), w)``, the Convolution f32, 1x1, of unit strides and no padding
    to one output channel by constant filters ``w`` ``[1, C, 1, ...]``, the Softmax's result used by it alone,
    into :data:`SOFTMAX_EXPECTATION_OP` ``(x, w[0, :, 0...], axis=1)``; where ``x = Transpose(t, perm)`` is
    used by the Softmax alone, into ``Transpose(XlaSoftmaxExpectation(t, w, axis=perm[1]), perm)``."""

    name = "XlaSoftmaxExpectationFusion"
    anchors = ("Convolution",)

    def apply(self, model: Model, node: Node, users: ConsumerMap) -> bool:
        weights = _single_channel_weights(node)
        softmax = node.input_value(0).node
        if weights is None or softmax.type_name != "Softmax" or not _only_use(softmax.output(0), users):
            return False
        shape = softmax.output(0).partial_shape
        if not shape.rank_is_static or shape.rank < 3 or softmax.attrs["axis"] % shape.rank != 1:
            return False
        fused = [softmax]
        source, perm = softmax.input_value(0), None
        found = _transposed_source(softmax, users)
        if found is not None:
            (source, perm), fused = found, [softmax.input_value(0).node, softmax]
        axis = 1 if perm is None else perm[1]
        expectation = softmax_expectation(source, opset.constant(weights, Type.f32).output(0), axis)
        if perm is None:
            replace_node(model, node, expectation, fused=fused, consumers=users)
            return True
        users.attach(expectation)
        expectation.friendly_name = f"{node.friendly_name}/expectation"
        moved = opset.transpose(expectation, opset.constant(np.asarray(perm, np.int64)))
        replace_node(model, node, moved, fused=fused, consumers=users)
        return True
