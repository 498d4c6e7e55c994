"""Case recipes of the shape-manipulation family: Reshape, Squeeze, Unsqueeze, Broadcast, Tile, ShapeOf and Range."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import F32, I32, I64, Builder, OpCase, recipe
from hetero_sdk.conformance.recipe_parts import draw_data, int_constant
from hetero_sdk.graph import Node

_RANGE: Callable[..., Node] = opset.range


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
    node = opset.reshape(
        b.input(draw_data(b, shape), "x"), int_constant(b, target, "shape"), special_zero=special_zero, name="op"
    )
    return b.case(op_type, node, "exact", target=target, special_zero=special_zero)


@recipe("Squeeze")
def _squeeze(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(0, 3)
    for _ in range(b.integer(1, 2)):
        shape.insert(b.integer(0, len(shape)), 1)
    ones = [i for i, d in enumerate(shape) if d == 1]
    axes = None if b.integer(0, 3) == 0 else sorted({b.pick(ones) for _ in range(b.integer(1, len(ones)))})
    if axes is not None:
        axes = [a - len(shape) if b.flag() else a for a in axes]
    data = b.input(draw_data(b, shape), "x")
    node = opset.squeeze(data, int_constant(b, axes, "axes") if axes is not None else None, name="op")
    return b.case(op_type, node, "exact", axes=axes)


@recipe("Unsqueeze")
def _unsqueeze(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(0, 3)
    out_rank = len(shape) + b.integer(1, 2)
    axes = sorted({b.integer(0, out_rank - 1) for _ in range(out_rank - len(shape))})
    while len(axes) < out_rank - len(shape):
        axes = sorted({*axes, next(a for a in range(out_rank) if a not in axes)})
    axes = [a - out_rank if b.flag() else a for a in axes]
    node = opset.unsqueeze(b.input(draw_data(b, shape), "x"), int_constant(b, axes, "axes"), name="op")
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
        data = b.input(draw_data(b, shape), "x")
        node = opset.broadcast(
            data, int_constant(b, target, "shape"), int_constant(b, mapping, "mapping"), mode="explicit", name="op"
        )
        return b.case(op_type, node, "exact", mode=mode, target=target, axes_mapping=mapping)
    shape = [1 if b.integer(0, 2) == 0 else d for d in shape]
    target = [*b.shape(0, 2, 1, 3), *(b.integer(1, 3) if d == 1 else d for d in shape)]
    if mode == "bidirectional":
        target = [1 if b.integer(0, 3) == 0 else d for d in target]
    node = opset.broadcast(b.input(draw_data(b, shape), "x"), int_constant(b, target, "shape"), mode=mode, name="op")
    return b.case(op_type, node, "exact", mode=mode, target=target)


@recipe("Tile")
def _tile(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(0, 3)
    repeats = [b.integer(1, 3) for _ in range(b.integer(max(0, len(shape) - 1), len(shape) + 1))]
    node = opset.tile(b.input(draw_data(b, shape), "x"), int_constant(b, repeats, "repeats"), name="op")
    return b.case(op_type, node, "exact", repeats=repeats)


@recipe("ShapeOf")
def _shape_of(b: Builder, op_type: str) -> OpCase:
    output_type = b.pick((I64, I32))
    node = opset.shape_of(b.input(draw_data(b, b.shape(0, 4)), "x"), output_type, name="op")
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
