"""Linear algebra ops: MatMul."""

from __future__ import annotations

from typing import Any

from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import BOOL, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import NUMERIC_TYPES, expect_same_types, merge_dims
from hetero_sdk.shape import PartialShape, broadcast_shapes

__all__ = ["MATMUL", "matmul", "matmul_shape"]


def matmul(
    data_a: Any, data_b: Any, transpose_a: bool = False, transpose_b: bool = False, name: str | None = None
) -> Node:
    """Matrix product with numpy's ``matmul`` semantics (``MatMul``).

    The last two dimensions of each input are the matrices; the dimensions before them are batch
    dimensions, broadcast with numpy rules. A 1-D ``data_a`` is a row vector ``[1, K]`` and a 1-D
    ``data_b`` a column vector ``[K, 1]``; the added dimension is removed from the result again.

    :param data_a: the left operand, rank >= 1.
    :param data_b: the right operand, rank >= 1, of the same element type.
    :param transpose_a: swap the last two dimensions of ``data_a`` first (ignored when it is 1-D).
    :param transpose_b: swap the last two dimensions of ``data_b`` first (ignored when it is 1-D).
    :param name: the node's friendly name.
    """
    a = as_output(data_a)
    b = as_output(data_b, like=a)
    attrs = {"transpose_a": transpose_a, "transpose_b": transpose_b}
    return Node(MATMUL, [a, b], attrs, name)


def _matmul(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1)
    a, b = node.input_value(0).partial_shape, node.input_value(1).partial_shape
    return [(element_type, matmul_shape(node, a, b, node.attrs["transpose_a"], node.attrs["transpose_b"]))]


def matmul_shape(node: Node, a: PartialShape, b: PartialShape, transpose_a: bool, transpose_b: bool) -> PartialShape:
    """The output shape of MatMul on shapes ``a`` and ``b`` (numpy rules: 1-D promotion, batch
    broadcasting); raises ``node.error`` when they do not fit. Fused ops that contain a MatMul reuse it."""
    if a.rank == 0 or b.rank == 0:
        raise node.error(f"inputs must have rank >= 1 (scalars are not matrices), got {a} and {b}")
    a_dims = [1, a[0]] if a.rank == 1 else list(a.dims)
    b_dims = [b[0], 1] if b.rank == 1 else list(b.dims)
    if a.rank > 1 and transpose_a:
        a_dims[-2], a_dims[-1] = a_dims[-1], a_dims[-2]
    if b.rank > 1 and transpose_b:
        b_dims[-2], b_dims[-1] = b_dims[-1], b_dims[-2]
    merge_dims(node, a_dims[-1], b_dims[-2], f"the inner dimensions of {a} and {b} (after transposes) must match")
    batch = broadcast_shapes(PartialShape(a_dims[:-2]), PartialShape(b_dims[:-2]))
    if batch is None:
        raise node.error(f"batch dimensions of {a} and {b} do not broadcast (numpy rules)")
    dims = [*batch.dims]
    if a.rank > 1:
        dims.append(a_dims[-2])
    if b.rank > 1:
        dims.append(b_dims[-1])
    return PartialShape(dims)


MATMUL = define(
    OpDef(
        "MatMul",
        "linear_algebra",
        _matmul,
        inputs=(Input(types=NUMERIC_TYPES), Input(types=NUMERIC_TYPES)),
        attrs=(
            Attr("transpose_a", BOOL, False, doc="swap the last two dimensions of A first"),
            Attr("transpose_b", BOOL, False, doc="swap the last two dimensions of B first"),
        ),
        doc="Matrix product with numpy's matmul semantics (1-D operands promoted, batches broadcast).",
    )
)
