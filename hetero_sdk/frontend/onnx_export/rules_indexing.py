"""Export rules of the indexing family: GatherND, the scatters and ReverseSequence."""

from __future__ import annotations

from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter

__all__: list[str] = []

_REDUCTIONS = {"none": "none", "sum": "add", "prod": "mul", "max": "max", "min": "min"}
"""The SDK's scatter reductions and ONNX's names for them (max and min since ONNX opset 18)."""


@exporter("GatherND")
def gather_nd(ctx: ExportContext) -> None:
    ctx.emit1("GatherND", [ctx.input(0), ctx.i64(1)], ctx.out(), batch_dims=ctx.attrs["batch_dims"])


@exporter("ScatterElementsUpdate")
def scatter_elements(ctx: ExportContext) -> None:
    inputs = [ctx.input(0), ctx.i64(1), ctx.input(2)]
    reduction = _REDUCTIONS[ctx.attrs["reduction"]]
    ctx.emit1("ScatterElements", inputs, ctx.out(), axis=ctx.attrs["axis"], reduction=reduction)


@exporter("ScatterNDUpdate")
def scatter_nd(ctx: ExportContext) -> None:
    inputs = [ctx.input(0), ctx.i64(1), ctx.input(2)]
    ctx.emit1("ScatterND", inputs, ctx.out(), reduction=_REDUCTIONS[ctx.attrs["reduction"]])


@exporter("ReverseSequence")
def reverse_sequence(ctx: ExportContext) -> None:
    rank = ctx.rank(0)
    batch, seq = ctx.attrs["batch_axis"] % rank, ctx.attrs["seq_axis"] % rank
    if {batch, seq} != {0, 1}:
        raise ctx.unsupported(f"batch_axis={batch}, seq_axis={seq} (ONNX's axes are 0 and 1)")
    ctx.emit1("ReverseSequence", [ctx.input(0), ctx.i64(1)], ctx.out(), batch_axis=batch, time_axis=seq)
