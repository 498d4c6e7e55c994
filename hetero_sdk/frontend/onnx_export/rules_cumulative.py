"""Export rules of the cumulative family: CumSum and CumProd."""

from __future__ import annotations

from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter

__all__: list[str] = []


@exporter("CumSum", "CumProd")
def cum_sum(ctx: ExportContext) -> None:
    op_type = ctx.current.type_name
    if op_type == "CumProd" and ctx.opset < 26:
        raise ctx.unsupported(f"CumProd in ONNX opset {ctx.opset} (ONNX defines it from opset 26)")
    axis = int(ctx.required_constant(1, "axis").reshape(-1)[0])
    attrs = ctx.attrs
    ctx.emit1(op_type, [ctx.input(0), ctx.const(axis)], ctx.out(), exclusive=int(attrs["exclusive"]),
              reverse=int(attrs["reverse"]))  # fmt: skip
