"""Export rules of the quantization family: FakeQuantize, written out in ONNX's elementwise ops."""

from __future__ import annotations

from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter

__all__: list[str] = []


@exporter("FakeQuantize")
def fake_quantize(ctx: ExportContext) -> None:
    x, low, high, out_low, out_high = (ctx.input(i) for i in range(5))
    steps = ctx.const(ctx.attrs["levels"] - 1, ctx.element_type(0), "steps")
    ratio = ctx.emit1("Div", [ctx.emit1("Sub", [x, low]), ctx.emit1("Sub", [high, low])])
    level = ctx.emit1("Div", [ctx.emit1("Round", [ctx.emit1("Mul", [ratio, steps])]), steps])
    inside = ctx.emit1("Add", [ctx.emit1("Mul", [level, ctx.emit1("Sub", [out_high, out_low])]), out_low])
    above = ctx.emit1("Where", [ctx.emit1("Greater", [x, ctx.emit1("Max", [low, high])]), out_high, inside])
    below = ctx.emit1("LessOrEqual", [x, ctx.emit1("Min", [low, high])])
    ctx.emit1("Where", [below, out_low, above], ctx.out())
