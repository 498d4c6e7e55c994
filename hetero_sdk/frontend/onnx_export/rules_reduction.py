"""Export rules of the reduction family: ReduceSum, ReduceMean, ReduceMax, ReduceMin and ReduceProd."""

from __future__ import annotations

from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter

__all__: list[str] = []

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
