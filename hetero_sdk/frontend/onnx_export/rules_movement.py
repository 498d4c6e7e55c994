"""Export rules of the movement family: Transpose, Concat, Gather, GatherElements, Split, VariadicSplit, Pad,
DepthToSpace and SpaceToDepth."""

from __future__ import annotations

import numpy as np

from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter
from hetero_sdk.shape import DYNAMIC

__all__: list[str] = []


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
