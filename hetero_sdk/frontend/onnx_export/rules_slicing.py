"""Export rules of the slicing family: Slice and StridedSlice (its masks resolved into ONNX's Slice)."""

from __future__ import annotations

import numpy as np

from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter
from hetero_sdk.shape import DYNAMIC

__all__: list[str] = []

_INT64_MAX = np.iinfo(np.int64).max


_INT64_MIN = np.iinfo(np.int64).min


@exporter("Slice")
def slice_(ctx: ExportContext) -> None:
    axes = ctx.i64(4) if ctx.has_input(4) else ""
    _onnx_slice(ctx, ctx.i64(1), ctx.i64(2), axes, ctx.i64(3), ctx.constant(3))


def _onnx_slice(ctx: ExportContext, starts: str, ends: str, axes: str, steps: str, known_steps: object) -> None:
    """ONNX's Slice of input 0 giving what the SDK's Slice gives (Python's slices) for the same bounds.

    They clamp alike but in one case: a start below ``-dim`` with a negative step is an empty slice in
    Python, while ONNX clamps it to 0 and takes the first element. Where a step may be negative, such
    a start gets the end 0, which empties ONNX's slice as well; and an end past the dimension is written
    as the dimension, which means the same to ONNX, where ONNX Runtime reads an end of ``INT64_MAX`` with a
    negative step as "through the first element".
    """
    if known_steps is None or (np.asarray(known_steps) < 0).any():
        shape = ctx.emit1("Shape", [ctx.input(0)])
        if axes:
            dims = ctx.emit1("Gather", [shape, axes], axis=0)
        else:  # the first len(starts) axes
            dims = ctx.emit1("Slice", [shape, ctx.const([0], name="first"), ctx.emit1("Shape", [starts])])
        before = ctx.emit1("Less", [starts, ctx.emit1("Neg", [dims])])
        backwards = ctx.emit1("Less", [steps, ctx.const(0, name="zero")])
        empty = ctx.emit1("And", [before, backwards])
        within = ctx.emit1("Min", [ends, dims])
        ends = ctx.emit1("Where", [empty, ctx.const(0, name="first_end"), within])
    ctx.emit1("Slice", [ctx.input(0), starts, ends, axes, steps], ctx.out())


def _mask(ctx: ExportContext, name: str, count: int) -> list[int]:
    values = list(ctx.attrs[name])
    return [int(v) for v in values[:count]] + [0] * (count - len(values))


@exporter("StridedSlice")
def strided_slice(ctx: ExportContext) -> None:
    masks = ("begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask", "ellipsis_mask")
    plain = not any(any(ctx.attrs[m]) for m in masks)
    if plain:  # a Slice over the leading axes, whatever the bounds
        count = ctx.port(1).partial_shape[0]
        if count == DYNAMIC:
            raise ctx.unsupported("begin of unknown length")
        step_input = ctx.i64(3) if ctx.has_input(3) else ctx.const([1] * count, name="steps")
        known_steps = ctx.constant(3) if ctx.has_input(3) else np.ones(count)
        axes_input = ctx.const(list(range(count)), name="axes")
        _onnx_slice(ctx, ctx.i64(1), ctx.i64(2), axes_input, step_input, known_steps)
        return
    begin = ctx.required_constant(1, "begin with masks").reshape(-1).astype(np.int64)
    end = ctx.required_constant(2, "end with masks").reshape(-1).astype(np.int64)
    strides = (
        ctx.required_constant(3, "strides with masks").reshape(-1).astype(np.int64)
        if ctx.has_input(3)
        else np.ones_like(begin)
    )
    count, rank = len(begin), ctx.rank(0)
    begin_mask, end_mask, new_axis, shrink, ellipsis = (_mask(ctx, m, count) for m in masks)
    starts: list[int] = []
    ends: list[int] = []
    axes: list[int] = []
    steps: list[int] = []
    squeezed: list[int] = []
    unsqueezed: list[int] = []
    axis = out_axis = 0
    specified = sum(1 for i in range(count) if not new_axis[i] and not ellipsis[i])
    for i in range(count):
        if ellipsis[i]:
            skipped = max(rank - specified, 0)
            axis += skipped
            out_axis += skipped
            continue
        if new_axis[i]:
            unsqueezed.append(out_axis)
            out_axis += 1
            continue
        step = int(strides[i])
        if shrink[i]:
            b = int(begin[i])
            starts.append(b)
            ends.append(b + 1 if b != -1 else _INT64_MAX)
            steps.append(1)
            axes.append(axis)
            squeezed.append(axis)
            axis += 1
            continue
        starts.append((_INT64_MAX if step < 0 else 0) if begin_mask[i] else int(begin[i]))
        ends.append((_INT64_MIN if step < 0 else _INT64_MAX) if end_mask[i] else int(end[i]))
        steps.append(step)
        axes.append(axis)
        axis += 1
        out_axis += 1
    if axis > rank:
        raise ctx.unsupported(f"masks that address {axis} axes of a rank-{rank} input")
    y = ctx.input(0)
    dims = ctx.port(0).partial_shape.dims
    for k, (start, step, axis) in enumerate(zip(starts, steps, axes)):
        if step < 0 and dims[axis] != DYNAMIC:  # as _onnx_slice writes them
            ends[k] = 0 if start < -dims[axis] else min(ends[k], dims[axis])
    if axes:
        y = ctx.emit1(
            "Slice",
            [y, ctx.const(starts, name="starts"), ctx.const(ends, name="ends"), ctx.const(axes, name="axes"),
             ctx.const(steps, name="steps")],
        )  # fmt: skip
    if squeezed:
        y = ctx.emit1("Squeeze", [y, ctx.const(squeezed, name="squeeze_axes")])
    if unsqueezed:
        y = ctx.emit1("Unsqueeze", [y, ctx.const(unsqueezed, name="unsqueeze_axes")])
    ctx.emit1("Identity", [y], ctx.out())
