"""``TemplateReshapedMatMul``: a MatMul between the Reshapes around it, as one op, and its fusion.

Exporters write a linear layer of a ``[batch, seq, features]`` tensor as ONNX's 2-D Gemm: a Reshape to
``[-1, features]``, the product, a Reshape back to ``[batch, seq, outputs]`` (GPT-2: four a layer). Each
Reshape is a numpy view, but one more step of the plan; fused, the product and its views are one step
that makes the same numpy calls (the same values, bit for bit).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from hetero_sdk import Node
from hetero_sdk.ops import (
    BOOL,
    INDEX_TYPES,
    INTS,
    REAL_TYPES,
    Attr,
    Input,
    OpDef,
    OutputSpec,
    as_output,
    define,
    expect_same_types,
    reshape_dims,
)
from hetero_sdk.reference import kernel
from hetero_sdk.shape import PartialShape
from hetero_sdk.transformations import ConsumerMap, MatcherPass, replace_node

if TYPE_CHECKING:
    from hetero_sdk import Model

__all__ = ["RESHAPED_MATMUL", "RESHAPED_MATMUL_OP", "ReshapedMatMulFusion", "reshaped_matmul"]

RESHAPED_MATMUL = "TemplateReshapedMatMul"
"""The op type name."""

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def reshaped_matmul(
    data: Any,
    weights: Any,
    before: Any,
    after: Any,
    *,
    zero_before: bool = False,
    zero_after: bool = False,
    output_shape: PartialShape | None = None,
    name: str | None = None,
) -> Node:
    """``Reshape(MatMul(Reshape(data, before), weights), after)`` as one op (no transposes).

    :param data: a real element type.
    :param weights: the MatMul's second operand.
    :param before: the first Reshape's pattern (a 1-D integer tensor).
    :param after: the second Reshape's pattern.
    :param zero_before: the first Reshape's ``special_zero``.
    :param zero_after: the second Reshape's ``special_zero``.
    :param output_shape: the second Reshape's output shape, when the fusion knows it (else dynamic).
    :param name: the node's friendly name.
    """
    attrs: dict[str, Any] = {"zero_before": zero_before, "zero_after": zero_after}
    if output_shape is not None:
        attrs["output_shape"] = list(output_shape.dims)
    inputs = [as_output(data), as_output(weights), as_output(before), as_output(after)]
    return Node(RESHAPED_MATMUL_OP, inputs, attrs, name)


def _infer(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1)
    for index, what in ((2, "before"), (3, "after")):
        shape = node.input_value(index).partial_shape
        if shape.rank != 1 or shape[0] < 0:
            raise node.error(f"pattern {what} {shape} must be 1-D of a static length")
    dims = node.attrs.get("output_shape") or [-1] * node.input_value(3).partial_shape[0]
    if len(dims) != node.input_value(3).partial_shape[0]:
        raise node.error(f"output_shape {dims} must have one dimension per value of the pattern after")
    return [(element_type, PartialShape(dims))]


RESHAPED_MATMUL_OP = define(
    OpDef(
        RESHAPED_MATMUL,
        "template",
        _infer,
        inputs=(
            Input("data", REAL_TYPES),
            Input("weights", REAL_TYPES),
            Input("before", INDEX_TYPES, doc="the first Reshape's pattern"),
            Input("after", INDEX_TYPES, doc="the second Reshape's pattern"),
        ),
        attrs=(
            Attr("zero_before", BOOL, False, doc="the first Reshape's special_zero"),
            Attr("zero_after", BOOL, False, doc="the second Reshape's special_zero"),
            Attr("output_shape", INTS, [], doc="the fused Reshape's output shape, -1 where dynamic"),
        ),
        version="template",
        doc="Reshape(MatMul(Reshape(data, before), weights), after) in one kernel.",
    )
)


@functools.lru_cache(maxsize=64)
def _dims(shape: tuple[int, ...], pattern: tuple[int, ...], special_zero: bool) -> tuple[int, ...]:
    return reshape_dims(shape, pattern, special_zero)


@kernel(RESHAPED_MATMUL)
def _reshaped_matmul_kernel(node: Node, x: Any, w: Any, before: Any, after: Any) -> Any:
    attrs = node.attrs
    x = np.asarray(x)
    flat = x.reshape(_dims(x.shape, tuple(np.asarray(before).tolist()), attrs["zero_before"]))
    y = np.matmul(flat, w)  # what TEMPLATE's MatMul computes for operands of rank 2 or more
    return y.reshape(_dims(y.shape, tuple(np.asarray(after).tolist()), attrs["zero_after"]))


class ReshapedMatMulFusion(MatcherPass):
    """Fuses ``Reshape(MatMul(Reshape(x, before), w), after)`` of f32 or f64, without transposes, the inner
    Reshape and the MatMul each with one use, ``before`` a Constant, both operands of the MatMul of rank 2
    or more, into ``TemplateReshapedMatMul``.
    The fused op takes the outer Reshape's friendly name, tensor names and output shape and records the
    block in ``fused_names``."""

    name = "TemplateReshapedMatMulFusion"
    anchors = ("Reshape",)

    def apply(self, model: Model, outer: Node, users: ConsumerMap) -> bool:
        matmul = outer.input_value(0).node
        if matmul.type_name != "MatMul" or len(users.of(matmul.output(0))) != 1:
            return False
        if matmul.attrs.get("transpose_a") or matmul.attrs.get("transpose_b"):
            return False
        inner = matmul.input_value(0).node
        if inner.type_name != "Reshape" or len(users.of(inner.output(0))) != 1:
            return False
        before, after = inner.input_value(1), outer.input_value(1)
        if before.node.type_name != "Constant" or after.partial_shape.rank != 1 or after.partial_shape[0] < 0:
            return False
        if inner.input_value(0).element_type.value not in ("f32", "f64"):
            return False
        if inner.output(0).partial_shape.rank < 2 or matmul.input_value(1).partial_shape.rank < 2:
            return False
        fused = reshaped_matmul(
            inner.input_value(0), matmul.input_value(1), before, after,
            zero_before=bool(inner.attrs["special_zero"]), zero_after=bool(outer.attrs["special_zero"]),
            output_shape=outer.output(0).partial_shape,
        )  # fmt: skip
        replace_node(model, outer, fused, fused=[inner, matmul], consumers=users)
        return True
