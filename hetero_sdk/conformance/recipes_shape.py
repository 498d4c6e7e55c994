"""Case recipes of the shape-manipulation family: Reshape, Transpose, Concat, Split, VariadicSplit,
Squeeze, Unsqueeze, Broadcast, Tile, Pad, Gather, GatherElements, CumSum, CumProd, Slice, StridedSlice, ShapeOf,
Range, DepthToSpace, SpaceToDepth."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import F16, F32, I32, I64, Builder, OpCase, recipe
from hetero_sdk.graph import Node

_DATA_TYPES = (F32, I32, F16, np.int8, np.bool_)
_SLICE: Callable[..., Node] = opset.slice
_RANGE: Callable[..., Node] = opset.range


def _data(b: Builder, shape: list[int]) -> np.ndarray:
    return b.values(shape, b.pick(_DATA_TYPES), -9, 9)


def _ints(b: Builder, values: list[int], name: str) -> Node:
    return opset.constant(np.array(values, b.pick((I64, I32))), name=name)


@recipe("Reshape")
def _reshape(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(0, 4)
    total = math.prod(shape)
    variant = b.integer(0, 4)
    special_zero = False
    if variant == 0:
        target = [total]
    elif variant == 1:
        target = [-1]
    elif variant == 2:
        target = shape[::-1]
    elif variant == 3 and shape:
        special_zero = True
        target = [0, -1]
    else:
        target = [*shape, 1] if not shape or shape[-1] != 1 else [1, *shape]
    node = opset.reshape(b.input(_data(b, shape), "x"), _ints(b, target, "shape"), special_zero=special_zero, name="op")
    return b.case(op_type, node, "exact", target=target, special_zero=special_zero)


@recipe("Transpose")
def _transpose(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(0, 4)
    order = [int(v) for v in b.rng.permutation(len(shape))]
    node = opset.transpose(b.input(_data(b, shape), "x"), _ints(b, order, "order"), name="op")
    return b.case(op_type, node, "exact", order=order)


@recipe("Concat")
def _concat(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(_DATA_TYPES)
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
    node = opset.split(b.input(_data(b, shape), "x"), axis_node, num_splits, name="op")
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
    node = opset.variadic_split(b.input(_data(b, shape), "x"), axis_node, _ints(b, lengths, "lengths"), name="op")
    return b.case(op_type, node.outputs(), "exact", axis=axis, split_lengths=lengths)


@recipe("Squeeze")
def _squeeze(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(0, 3)
    for _ in range(b.integer(1, 2)):
        shape.insert(b.integer(0, len(shape)), 1)
    ones = [i for i, d in enumerate(shape) if d == 1]
    axes = None if b.integer(0, 3) == 0 else sorted({b.pick(ones) for _ in range(b.integer(1, len(ones)))})
    if axes is not None:
        axes = [a - len(shape) if b.flag() else a for a in axes]
    data = b.input(_data(b, shape), "x")
    node = opset.squeeze(data, _ints(b, axes, "axes") if axes is not None else None, name="op")
    return b.case(op_type, node, "exact", axes=axes)


@recipe("Unsqueeze")
def _unsqueeze(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(0, 3)
    out_rank = len(shape) + b.integer(1, 2)
    axes = sorted({b.integer(0, out_rank - 1) for _ in range(out_rank - len(shape))})
    while len(axes) < out_rank - len(shape):
        axes = sorted({*axes, next(a for a in range(out_rank) if a not in axes)})
    axes = [a - out_rank if b.flag() else a for a in axes]
    node = opset.unsqueeze(b.input(_data(b, shape), "x"), _ints(b, axes, "axes"), name="op")
    return b.case(op_type, node, "exact", axes=axes)


@recipe("Broadcast")
def _broadcast(b: Builder, op_type: str) -> OpCase:
    mode = b.pick(("numpy", "bidirectional", "explicit"))
    shape = b.shape(0, 3)
    if mode == "explicit":
        target = b.shape(len(shape), len(shape) + 2, 1, 3)
        mapping = sorted(int(v) for v in b.rng.choice(len(target), len(shape), replace=False))
        for data_axis, out_axis in enumerate(mapping):
            shape[data_axis] = b.pick((1, target[out_axis]))
        data = b.input(_data(b, shape), "x")
        node = opset.broadcast(
            data, _ints(b, target, "shape"), _ints(b, mapping, "mapping"), mode="explicit", name="op"
        )
        return b.case(op_type, node, "exact", mode=mode, target=target, axes_mapping=mapping)
    shape = [1 if b.integer(0, 2) == 0 else d for d in shape]
    target = [*b.shape(0, 2, 1, 3), *(b.integer(1, 3) if d == 1 else d for d in shape)]
    if mode == "bidirectional":
        target = [1 if b.integer(0, 3) == 0 else d for d in target]
    node = opset.broadcast(b.input(_data(b, shape), "x"), _ints(b, target, "shape"), mode=mode, name="op")
    return b.case(op_type, node, "exact", mode=mode, target=target)


@recipe("Tile")
def _tile(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(0, 3)
    repeats = [b.integer(1, 3) for _ in range(b.integer(max(0, len(shape) - 1), len(shape) + 1))]
    node = opset.tile(b.input(_data(b, shape), "x"), _ints(b, repeats, "repeats"), name="op")
    return b.case(op_type, node, "exact", repeats=repeats)


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
    x = _data(b, shape)
    value = opset.constant(np.array(b.values([], x.dtype, -9, 9)), name="value") if mode == "constant" else None
    node = opset.pad(b.input(x, "x"), _ints(b, begin, "begin"), _ints(b, end, "end"), mode, value, name="op")
    return b.case(op_type, node, "exact", mode=mode, pads_begin=begin, pads_end=end)


@recipe("Gather")
def _gather(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(1, 3)
    axis = b.integer(-len(shape), len(shape) - 1)
    dim = shape[axis]
    indices = b.rng.integers(-dim, dim, b.shape(0, 2)).astype(b.pick((I32, I64)))
    axis_node = opset.constant(np.array(axis, I64), name="axis")
    node = opset.gather(b.input(_data(b, shape), "x"), b.operand(indices, "indices"), axis_node, name="op")
    return b.case(op_type, node, "exact", axis=axis)


@recipe("GatherElements")
def _gather_elements(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(1, 3)
    axis = b.integer(-len(shape), len(shape) - 1)
    taken = [d if i == axis % len(shape) else b.integer(1, d) for i, d in enumerate(shape)]
    taken[axis % len(shape)] = b.integer(1, 4)
    dim = shape[axis]
    indices = b.rng.integers(-dim, dim, taken).astype(b.pick((I32, I64)))
    node = opset.gather_elements(b.input(_data(b, shape), "x"), b.operand(indices, "indices"), axis, name="op")
    return b.case(op_type, node, "exact", axis=axis)


@recipe("CumSum", "CumProd")
def _cum_sum(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(1, 3)
    axis = b.integer(-len(shape), len(shape) - 1)
    exclusive, reverse = bool(b.integer(0, 1)), bool(b.integer(0, 1))
    axis_node = opset.constant(np.array(axis, I64), name="axis")
    data = b.values(shape, b.pick((np.float32, np.int32, np.int64)), -9, 9)
    factory = opset.cum_sum if op_type == "CumSum" else opset.cum_prod
    node = factory(b.input(data, "x"), axis_node, exclusive, reverse, name="op")
    return b.case(op_type, node, "accumulate", shape[axis], axis=axis, exclusive=exclusive, reverse=reverse)


@recipe("Slice")
def _slice(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(1, 3, 1, 5)
    axes = [int(a) for a in b.rng.permutation(len(shape))[: b.integer(1, len(shape))]]
    start, stop, step = [], [], []
    for a in axes:
        d = shape[a]
        start.append(b.integer(-d - 1, d + 1))
        stop.append(b.integer(-d - 1, d + 1))
        step.append(b.pick((1, 2, -1, -2)))
    data = b.input(_data(b, shape), "x")
    ints = [_ints(b, v, n) for v, n in ((start, "start"), (stop, "stop"), (step, "step"), (axes, "axes"))]
    node = _SLICE(data, *ints, name="op")
    return b.case(op_type, node, "exact", start=start, stop=stop, step=step, axes=axes)


@recipe("StridedSlice")
def _strided_slice(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(1, 3, 1, 5)
    count = b.integer(1, len(shape))
    begin = [b.integer(-shape[i], shape[i] - 1) for i in range(count)]
    end = [b.integer(-shape[i] - 1, shape[i] + 1) for i in range(count)]
    strides = [b.pick((1, 2, -1)) for _ in range(count)]
    begin_mask = [b.integer(0, 1) for _ in range(count)]
    end_mask = [b.integer(0, 1) for _ in range(count)]
    shrink = [0] * count
    if b.integer(0, 3) == 0:
        shrink[b.integer(0, count - 1)] = 1
    data = b.input(_data(b, shape), "x")
    node = opset.strided_slice(
        data, _ints(b, begin, "begin"), _ints(b, end, "end"), _ints(b, strides, "strides"), begin_mask, end_mask,
        shrink_axis_mask=shrink, name="op",
    )  # fmt: skip
    attrs = {"begin": begin, "end": end, "strides": strides, "begin_mask": begin_mask, "end_mask": end_mask}
    return b.case(op_type, node, "exact", shrink_axis_mask=shrink, **attrs)


@recipe("ShapeOf")
def _shape_of(b: Builder, op_type: str) -> OpCase:
    output_type = b.pick((I64, I32))
    node = opset.shape_of(b.input(_data(b, b.shape(0, 4)), "x"), output_type, name="op")
    return b.case(op_type, node, "exact", output_type=np.dtype(output_type).name)


@recipe("Range")
def _range(b: Builder, op_type: str) -> OpCase:
    output_type = np.dtype(b.pick((I64, F32, I32)))
    step = b.pick((1, 2, 3, -1, -2)) if output_type.kind == "i" else b.pick((0.5, 1.0, 0.25, -0.5, -1.5))
    start = b.integer(-5, 5)
    stop = start + step * b.integer(0, 12) + (0 if output_type.kind == "i" else b.pick((0.0, 0.1)))
    values = [
        opset.constant(np.array(v, output_type), name=n) for v, n in ((start, "start"), (stop, "stop"), (step, "step"))
    ]
    node = _RANGE(*values, output_type, name="op")
    scale = abs(float(start)) + abs(float(stop)) + 1.0
    case = b.case(op_type, node, "simple", start=start, stop=stop, step=step)
    case.atol *= scale
    return case


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
    node = factory(b.input(_data(b, shape), "x"), mode, block, name="op")
    return b.case(op_type, node, "exact", mode=mode, block_size=block)
