"""What XLA does to a one-hot matrix product before lowering it: one row of the weight gathered per index.

Exporters write an embedding lookup of integer ids as a one-hot matrix times the table: magika's byte
classifier computes ``Convert(f32)(Equal(bytes[..., None], range(257))) @ W`` with ``W`` ``[257, 64]``,
2048 x 257 x 64 multiply-adds of which all but 2048 x 64 are by zero. XLA:CPU builds the one-hot
matrix and runs the product (0.91 ms of CPU time, one thread, the model about 6.4 ms); gathering the
rows takes 0.09 ms. :class:`OneHotMatMulToGather` rewrites the product into the gather.

The values are the product's: a one-hot row selects ``W[i]`` and adds zeros to it, and an index
outside ``[0, K)`` matches no column, so its row is zeros (the gather reads an extra zero row there).
Only a constant, finite ``W`` qualifies (``0 * inf`` is NaN in the product, in every row); a
weight of ``-0.0`` may come out as ``+0.0`` from the product and stays ``-0.0`` from the gather.
"""

from __future__ import annotations

import numpy as np
from hetero_sdk import Model, Node, Output, Type, opset
from hetero_sdk.plugin import ConsumerMap, MatcherPass, constant_value, replace_node

__all__ = ["OneHotMatMulToGather"]

_FLOATS = frozenset({Type.f32, Type.f16, Type.bf16, Type.f64})
_INDICES = frozenset({Type.i8, Type.i16, Type.i32, Type.i64, Type.u8, Type.u16, Type.u32, Type.u64})


def _one_hot(value: Output) -> tuple[Output, int] | None:
    """``(indices, K)`` when ``value`` is ``Convert(Equal(indices, range(K)))`` (either operand order),
    ``indices`` ``[..., 1]`` of static shape and the range a constant ``[1, ..., 1, K]`` no longer than
    ``indices`` in rank, so that the one-hot matrix is ``indices.shape[:-1] + [K]``."""
    convert = value.node
    if convert.type_name != "Convert" or value.element_type not in _FLOATS:
        return None
    equal = convert.input_value(0).node
    if equal.type_name != "Equal" or equal.attrs["auto_broadcast"] != "numpy":
        return None
    for index in (0, 1):
        indices, columns = equal.input_value(index), constant_value(equal.input_value(1 - index))
        shape = indices.partial_shape
        if columns is None or indices.element_type not in _INDICES or not shape.is_static:
            continue
        dims, size = list(shape.to_shape()), columns.shape[-1] if columns.ndim else 0
        leading_ones = all(d == 1 for d in columns.shape[:-1])
        if not dims or dims[-1] != 1 or columns.ndim > len(dims) or not leading_ones or size < 1:
            continue
        if np.array_equal(columns.reshape(-1), np.arange(size)):
            return indices, size
    return None


class OneHotMatMulToGather(MatcherPass):
    """Replaces ``MatMul(Convert(Equal(i, range(K))), W)`` (``W`` a finite constant ``[K, N]``, or
    ``[N, K]`` with ``transpose_b``) by ``Gather([W; 0], Select(0 <= i < K, i, K), axis 0)``: the same
    values (see the module's docstring). The Equal and Convert stay where something else reads them."""

    name = "OneHotMatMulToGather"
    anchors = ("MatMul",)

    def apply(self, model: Model, node: Node, users: ConsumerMap) -> bool:
        if node.attrs["transpose_a"]:
            return False
        found = _one_hot(node.input_value(0))
        weight = constant_value(node.input_value(1))
        if found is None or weight is None or weight.ndim != 2 or not np.all(np.isfinite(weight)):
            return False
        indices, size = found
        table = weight.T if node.attrs["transpose_b"] else weight
        if table.shape[0] != size or node.input_value(0).element_type != node.input_value(1).element_type:
            return False
        rows = np.concatenate([table, np.zeros((1, table.shape[1]), table.dtype)])  # row K: no match
        dims = list(indices.partial_shape.to_shape())
        kind = indices.element_type.numpy
        flat = opset.reshape(indices, np.array(dims[:-1], np.int64), special_zero=False)
        inside = opset.logical_and(opset.greater_equal(flat, np.array(0, kind)), opset.less(flat, np.array(size, kind)))
        chosen = opset.select(inside, flat, np.array(size, kind))
        if indices.element_type not in (Type.i32, Type.i64):  # Gather's index types (the ids now fit i32)
            chosen = opset.convert(chosen, Type.i32)
        gathered = opset.gather(opset.constant(rows, node.input_value(1).element_type), chosen, np.array(0, np.int64))
        replace_node(model, node, gathered, consumers=users)
        return True
