"""Case recipes of the movement family: Transpose, Concat, Split, VariadicSplit, Pad, Gather, GatherElements,
DepthToSpace and SpaceToDepth."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import I32, I64, Builder, OpCase, recipe
from hetero_sdk.conformance.recipe_parts import DATA_TYPES, draw_data, int_constant


@recipe("Transpose")
def _transpose(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(0, 4)
    order = [int(v) for v in b.rng.permutation(len(shape))]
    node = opset.transpose(b.input(draw_data(b, shape), "x"), int_constant(b, order, "order"), name="op")
    return b.case(op_type, node, "exact", order=order)


@recipe("Concat")
def _concat(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(DATA_TYPES)
    shape = b.shape(1, 4)
    axis = b.integer(-len(shape), len(shape) - 1)
    parts = []
    for i in range(b.integer(1, 4)):
        part = list(shape)
        part[axis] = b.integer(1, 3)
        parts.append(b.operand(b.values(part, dtype, -9, 9), f"p{i}", constant=False if i == 0 else None))
    return b.case(op_type, opset.concat(parts, axis, name="op"), "exact", axis=axis)


@recipe("Split")
def _split(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(1, 4)
    axis = b.integer(-len(shape), len(shape) - 1)
    num_splits = b.integer(1, 3)
    shape[axis] = num_splits * b.integer(1, 2)
    axis_node = opset.constant(np.array(axis, I64), name="axis")
    node = opset.split(b.input(draw_data(b, shape), "x"), axis_node, num_splits, name="op")
    return b.case(op_type, node.outputs(), "exact", axis=axis, num_splits=num_splits)


@recipe("VariadicSplit")
def _variadic_split(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(1, 4)
    axis = b.integer(-len(shape), len(shape) - 1)
    lengths = [b.integer(0, 3) for _ in range(b.integer(1, 3))]
    shape[axis] = sum(lengths)
    if b.flag():
        lengths[b.integer(0, len(lengths) - 1)] = -1
    axis_node = opset.constant(np.array(axis, I64), name="axis")
    node = opset.variadic_split(
        b.input(draw_data(b, shape), "x"), axis_node, int_constant(b, lengths, "lengths"), name="op"
    )
    return b.case(op_type, node.outputs(), "exact", axis=axis, split_lengths=lengths)


@recipe("Pad")
def _pad(b: Builder, op_type: str) -> OpCase:
    mode = b.pick(("constant", "edge", "reflect", "symmetric"))
    shape = b.shape(1, 3, 1, 4)
    most = [min(2, {"reflect": d - 1, "symmetric": d}.get(mode, 2)) for d in shape]
    begin = [b.integer(0, m) for m in most]
    end = [b.integer(0, m) for m in most]
    if mode == "constant" and b.integer(0, 3) == 0:
        axis = b.integer(0, len(shape) - 1)
        if shape[axis] > 1:
            begin[axis] = -1
    x = draw_data(b, shape)
    value = opset.constant(np.array(b.values([], x.dtype, -9, 9)), name="value") if mode == "constant" else None
    node = opset.pad(
        b.input(x, "x"), int_constant(b, begin, "begin"), int_constant(b, end, "end"), mode, value, name="op"
    )
    return b.case(op_type, node, "exact", mode=mode, pads_begin=begin, pads_end=end)


@recipe("Gather")
def _gather(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(1, 3)
    axis = b.integer(-len(shape), len(shape) - 1)
    dim = shape[axis]
    indices = b.rng.integers(-dim, dim, b.shape(0, 2)).astype(b.pick((I32, I64)))
    axis_node = opset.constant(np.array(axis, I64), name="axis")
    node = opset.gather(b.input(draw_data(b, shape), "x"), b.operand(indices, "indices"), axis_node, name="op")
    return b.case(op_type, node, "exact", axis=axis)


@recipe("GatherElements")
def _gather_elements(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(1, 3)
    axis = b.integer(-len(shape), len(shape) - 1)
    taken = [d if i == axis % len(shape) else b.integer(1, d) for i, d in enumerate(shape)]
    taken[axis % len(shape)] = b.integer(1, 4)
    dim = shape[axis]
    indices = b.rng.integers(-dim, dim, taken).astype(b.pick((I32, I64)))
    node = opset.gather_elements(b.input(draw_data(b, shape), "x"), b.operand(indices, "indices"), axis, name="op")
    return b.case(op_type, node, "exact", axis=axis)


@recipe("DepthToSpace", "SpaceToDepth")
def _depth_to_space(b: Builder, op_type: str) -> OpCase:
    spatial = b.shape(1, 3, 1, 3)
    block = b.integer(1, 3 if len(spatial) < 3 else 2)
    mode = b.pick(("blocks_first", "depth_first"))
    channels = b.integer(1, 2)
    if op_type == "DepthToSpace":
        shape = [b.integer(1, 2), channels * block ** len(spatial), *spatial]
        factory = opset.depth_to_space
    else:
        shape = [b.integer(1, 2), channels, *(d * block for d in spatial)]
        factory = opset.space_to_depth
    node = factory(b.input(draw_data(b, shape), "x"), mode, block, name="op")
    return b.case(op_type, node, "exact", mode=mode, block_size=block)
