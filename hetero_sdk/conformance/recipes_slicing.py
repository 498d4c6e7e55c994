"""Case recipes of the slicing family: Slice and StridedSlice."""

from __future__ import annotations

from collections.abc import Callable

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import Builder, OpCase, recipe
from hetero_sdk.conformance.recipe_parts import draw_data, int_constant
from hetero_sdk.graph import Node

_SLICE: Callable[..., Node] = opset.slice


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
    data = b.input(draw_data(b, shape), "x")
    ints = [int_constant(b, v, n) for v, n in ((start, "start"), (stop, "stop"), (step, "step"), (axes, "axes"))]
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
    data = b.input(draw_data(b, shape), "x")
    node = opset.strided_slice(
        data, int_constant(b, begin, "begin"), int_constant(b, end, "end"), int_constant(b, strides, "strides"),
        begin_mask, end_mask, shrink_axis_mask=shrink, name="op",
    )  # fmt: skip
    attrs = {"begin": begin, "end": end, "strides": strides, "begin_mask": begin_mask, "end_mask": end_mask}
    return b.case(op_type, node, "exact", shrink_axis_mask=shrink, **attrs)
