"""Case recipes of the indexing family: GatherND, ScatterElementsUpdate, ScatterNDUpdate, ReverseSequence.

Scatters without a reduction draw distinct positions: which of two updates of one position wins is
unspecified, so devices may differ there."""

from __future__ import annotations

import math

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import F32, I32, I64, Builder, OpCase, recipe
from hetero_sdk.ops.indexing import REDUCTIONS

_DATA_TYPES = (F32, I32, np.int8, np.bool_)
_FOLDED_TYPES = (F32, I32, I64)


def _reduction_and_data(b: Builder, shape: list[int]) -> tuple[str, np.ndarray]:
    reduction = b.pick(REDUCTIONS)
    dtype = b.pick(_DATA_TYPES if reduction == "none" else _FOLDED_TYPES)
    return reduction, b.values(shape, dtype, -3, 3)


@recipe("GatherND")
def _gather_nd(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(1, 3)
    batch = b.integer(0, min(1, len(shape) - 1))
    k = b.integer(1, len(shape) - batch)
    middle = b.shape(0, 2, 1, 3)
    sizes = np.array(shape[batch : batch + k])
    indices = b.rng.integers(-sizes, sizes, (*shape[:batch], *middle, k)).astype(b.pick((I32, I64)))
    data = b.values(shape, b.pick(_DATA_TYPES), -9, 9)
    node = opset.gather_nd(b.input(data, "x"), b.operand(indices, "indices"), batch, name="op")
    return b.case(op_type, node, "exact", batch_dims=batch)


@recipe("ScatterElementsUpdate")
def _scatter_elements(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(1, 3)
    axis = b.integer(-len(shape), len(shape) - 1)
    at = axis % len(shape)
    size = shape[at]
    reduction, data = _reduction_and_data(b, shape)
    taken = [b.integer(1, d) for d in shape]
    taken[at] = b.integer(1, size)
    if reduction == "none":  # distinct positions along each line: the first entries of a shuffle
        order = np.argsort(b.rng.random([*taken[:at], size, *taken[at + 1 :]]), axis=at)
        indices = np.take(order, np.arange(taken[at]), axis=at)
    else:
        indices = b.rng.integers(0, size, taken)
    indices = np.where(b.rng.random(indices.shape) < 0.3, indices - size, indices).astype(b.pick((I32, I64)))
    updates = b.values(taken, data.dtype, -3, 3)
    node = opset.scatter_elements_update(
        b.input(data, "x"), b.operand(indices, "indices"), b.input(updates, "updates"), axis, reduction, name="op"
    )
    return b.case(op_type, node, "accumulate", taken[at], axis=axis, reduction=reduction)


@recipe("ScatterNDUpdate")
def _scatter_nd(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(1, 3)
    k = b.integer(1, len(shape))
    reduction, data = _reduction_and_data(b, shape)
    cells = math.prod(shape[:k])
    count = b.integer(1, cells if reduction == "none" else 4)
    flat = b.rng.choice(cells, count, replace=reduction != "none")
    indices = np.stack(np.unravel_index(flat, shape[:k]), -1).astype(b.pick((I32, I64)))
    updates = b.values([count, *shape[k:]], data.dtype, -3, 3)
    node = opset.scatter_nd_update(
        b.input(data, "x"), b.operand(indices, "indices"), b.input(updates, "updates"), reduction, name="op"
    )
    return b.case(op_type, node, "accumulate", count, reduction=reduction)


@recipe("ReverseSequence")
def _reverse_sequence(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(2, 3)
    batch = b.integer(0, len(shape) - 1)
    seq = b.pick([a for a in range(len(shape)) if a != batch])
    lengths = b.rng.integers(1, shape[seq] + 1, shape[batch]).astype(b.pick((I32, I64)))
    data = b.values(shape, b.pick(_DATA_TYPES), -9, 9)
    node = opset.reverse_sequence(b.input(data, "x"), b.operand(lengths, "seq_lengths"), batch, seq, name="op")
    return b.case(op_type, node, "exact", batch_axis=batch, seq_axis=seq)
