"""Export rules of the shape manipulation, movement, slicing and reduction families."""

from __future__ import annotations

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter
from hetero_sdk.shape import DYNAMIC

__all__: list[str] = []

_INT64_MAX = np.iinfo(np.int64).max
_INT64_MIN = np.iinfo(np.int64).min


@exporter("Reshape")
def reshape(ctx: ExportContext) -> None:
    # ONNX's 0 copies the input dim (special_zero=True) unless allowzero=1, where 0 is a zero dim
    target = ctx.constant(1)
    zeros_matter = not ctx.attrs["special_zero"] and (target is None or bool(np.any(target == 0)))
    ctx.emit1("Reshape", [ctx.input(0), ctx.i64(1)], ctx.out(), allowzero=1 if zeros_matter else None)


@exporter("Squeeze", "Unsqueeze")
def squeeze(ctx: ExportContext) -> None:
    inputs = [ctx.input(0)] + ([ctx.i64(1)] if ctx.has_input(1) else [])
    ctx.emit1(ctx.current.type_name, inputs, ctx.out())


@exporter("ShapeOf")
def shape_of(ctx: ExportContext) -> None:
    target: Type = ctx.attrs["output_type"]
    if target == Type.i64:
        ctx.emit1("Shape", [ctx.input(0)], ctx.out())
    else:
        ctx.cast(ctx.emit1("Shape", [ctx.input(0)]), Type.i64, target, ctx.out())


@exporter("Broadcast")
def broadcast(ctx: ExportContext) -> None:
    data, mode = ctx.input(0), ctx.attrs["mode"]
    if mode == "explicit":
        mapping = ctx.required_constant(2, "axes_mapping").reshape(-1).astype(int).tolist()
        rank = ctx.port(1).partial_shape[0]
        if rank == DYNAMIC:
            raise ctx.unsupported("an explicit Broadcast to a target shape of unknown length")
        missing = [axis for axis in range(rank) if axis not in mapping]
        if missing:
            data = ctx.emit1("Unsqueeze", [data, ctx.const(missing, name="axes")])
    ctx.emit1("Expand", [data, ctx.i64(1)], ctx.out())


@exporter("Range")
def range_(ctx: ExportContext) -> None:
    target: Type = ctx.attrs["output_type"]
    bounds = [ctx.cast(ctx.input(i), ctx.element_type(i), target) for i in range(3)]
    ctx.emit1("Range", bounds, ctx.out())


@exporter("Tile")
def tile(ctx: ExportContext) -> None:
    data, rank = ctx.input(0), ctx.rank(0)
    count = ctx.port(1).partial_shape[0]
    if count == DYNAMIC:
        raise ctx.unsupported("repeats of unknown length")
    repeats = ctx.i64(1)
    if count < rank:  # OpenVINO pads repeats with leading 1s; ONNX needs one per axis
        repeats = ctx.emit1("Concat", [ctx.const([1] * (rank - count), name="ones"), repeats], axis=0)
    elif count > rank:
        data = ctx.emit1("Unsqueeze", [data, ctx.const(list(range(count - rank)), name="axes")])
    ctx.emit1("Tile", [data, repeats], ctx.out())


@exporter("Transpose")
def transpose(ctx: ExportContext) -> None:
    order = ctx.required_constant(1, "input_order").reshape(-1).astype(int).tolist()
    rank = ctx.rank(0)
    perm = [o % rank for o in order] if order else list(reversed(range(rank)))
    ctx.emit1("Transpose", [ctx.input(0)], ctx.out(), perm=perm or None)


@exporter("Concat")
def concat(ctx: ExportContext) -> None:
    inputs = [ctx.input(i) for i in range(ctx.current.get_input_size())]
    ctx.emit1("Concat", inputs, ctx.out(), axis=ctx.attrs["axis"])


@exporter("Gather")
def gather(ctx: ExportContext) -> None:
    axis = int(ctx.required_constant(2, "axis").reshape(-1)[0])
    if ctx.attrs["batch_dims"] != 0:
        raise ctx.unsupported(f"batch_dims={ctx.attrs['batch_dims']} (ONNX's Gather has no batch dimensions)")
    ctx.emit1("Gather", [ctx.input(0), ctx.input(1)], ctx.out(), axis=axis)


@exporter("GatherElements")
def gather_elements(ctx: ExportContext) -> None:
    ctx.emit1("GatherElements", [ctx.input(0), ctx.input(1)], ctx.out(), axis=ctx.attrs["axis"])


@exporter("Split")
def split(ctx: ExportContext) -> None:
    axis = int(ctx.required_constant(1, "axis").reshape(-1)[0])
    count = ctx.attrs["num_splits"]
    ctx.emit("Split", [ctx.input(0)], ctx.outputs or [], axis=axis, num_outputs=count)


@exporter("VariadicSplit")
def variadic_split(ctx: ExportContext) -> None:
    axis = int(ctx.required_constant(1, "axis").reshape(-1)[0])
    lengths = ctx.constant(2)
    if lengths is not None and bool(np.any(lengths == -1)):
        dim = ctx.port(0).partial_shape[axis]
        if dim == DYNAMIC:
            raise ctx.unsupported("a split length of -1 along a dynamic axis")
        lengths = np.where(lengths == -1, dim - (lengths.sum() + 1), lengths)
        sizes = ctx.const(lengths, name="split")
    elif lengths is not None:
        sizes = ctx.const(lengths, name="split")
    else:
        sizes = ctx.i64(2)
    ctx.emit("Split", [ctx.input(0), sizes], ctx.outputs or [], axis=axis)


@exporter("Pad")
def pad(ctx: ExportContext) -> None:
    mode = ctx.attrs["pad_mode"]
    if mode == "symmetric":
        raise ctx.unsupported("pad_mode 'symmetric' (ONNX pads with constant, edge, reflect or wrap)")
    pads = ctx.emit1("Concat", [ctx.i64(1), ctx.i64(2)], axis=0)
    inputs = [ctx.input(0), pads] + ([ctx.input(3)] if ctx.has_input(3) and mode == "constant" else [])
    ctx.emit1("Pad", inputs, ctx.out(), mode=mode)


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


_REDUCTIONS = {
    "ReduceMax": "ReduceMax", "ReduceMean": "ReduceMean", "ReduceMin": "ReduceMin", "ReduceProd": "ReduceProd",
    "ReduceSum": "ReduceSum",
}  # fmt: skip


@exporter(*_REDUCTIONS)
def reduce(ctx: ExportContext) -> None:
    # noop_with_empty_axes: OpenVINO reduces nothing over empty axes, ONNX by default everything
    ctx.emit1(
        _REDUCTIONS[ctx.current.type_name],
        [ctx.input(0), ctx.i64(1)],
        ctx.out(),
        keepdims=int(ctx.attrs["keep_dims"]),
        noop_with_empty_axes=1,
    )


_ONNX_BLOCK_MODES = {"blocks_first": "DCR", "depth_first": "CRD"}
"""OpenVINO's DepthToSpace and SpaceToDepth modes as ONNX names them."""


@exporter("DepthToSpace", "SpaceToDepth")
def depth_to_space(ctx: ExportContext) -> None:
    op, mode = ctx.current.type_name, ctx.attrs["mode"]
    if ctx.rank(0) != 4:
        raise ctx.unsupported(f"{ctx.rank(0)}-D data (ONNX's {op} takes 4-D [N, C, H, W] only)")
    if op == "SpaceToDepth" and mode == "depth_first" and ctx.opset < 28:
        raise ctx.unsupported(f"mode 'depth_first' in ONNX opset {ctx.opset} (ONNX's SpaceToDepth has CRD from 28)")
    attrs = {"mode": _ONNX_BLOCK_MODES[mode]} if op == "DepthToSpace" or mode == "depth_first" else {}
    ctx.emit1(op, [ctx.input(0)], ctx.out(), blocksize=ctx.attrs["block_size"], **attrs)
