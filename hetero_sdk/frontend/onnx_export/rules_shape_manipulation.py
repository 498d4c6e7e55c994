"""Export rules of the shape-manipulation family: Reshape, Squeeze, Unsqueeze, ShapeOf, Broadcast, Range and
Tile."""

from __future__ import annotations

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter
from hetero_sdk.shape import DYNAMIC

__all__: list[str] = []


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
