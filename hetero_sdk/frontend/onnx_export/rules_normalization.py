"""Export rules of the normalization family: BatchNormInference, Softmax, LogSoftmax, MVN and LRN."""

from __future__ import annotations

from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter

__all__: list[str] = []


@exporter("BatchNormInference")
def batch_norm(ctx: ExportContext) -> None:
    inputs = [ctx.input(i) for i in range(5)]
    ctx.emit1("BatchNormalization", inputs, ctx.out(), epsilon=ctx.attrs["epsilon"])


@exporter("Softmax", "LogSoftmax")
def softmax(ctx: ExportContext) -> None:
    ctx.emit1(ctx.current.type_name, [ctx.input(0)], ctx.out(), axis=ctx.attrs["axis"])


@exporter("MVN")
def mvn(ctx: ExportContext) -> None:
    x, element_type, axes = ctx.input(0), ctx.element_type(0), ctx.i64(1)
    centered = ctx.emit1("Sub", [x, ctx.emit1("ReduceMean", [x, axes], keepdims=1)])
    if not ctx.attrs["normalize_variance"]:
        ctx.emit1("Identity", [centered], ctx.out())
        return
    variance = ctx.emit1("ReduceMean", [ctx.emit1("Mul", [centered, centered]), axes], keepdims=1)
    eps = ctx.const(ctx.attrs["eps"], element_type, "eps")
    if ctx.attrs["eps_mode"] == "inside_sqrt":
        deviation = ctx.emit1("Sqrt", [ctx.emit1("Add", [variance, eps])])
    else:
        deviation = ctx.emit1("Add", [ctx.emit1("Sqrt", [variance]), eps])
    ctx.emit1("Div", [centered, deviation], ctx.out())


@exporter("LRN")
def lrn(ctx: ExportContext) -> None:
    axes = sorted(int(a) % ctx.rank(0) for a in ctx.required_constant(1, "axes").reshape(-1))
    if axes != [1] or ctx.rank(0) != 4:
        raise ctx.unsupported(f"a window over axes {axes} of a rank-{ctx.rank(0)} tensor (ONNX's LRN sums over the "
                              "channels of NCHW tensors only)")  # fmt: skip
    attrs = ctx.attrs
    if attrs["size"] % 2 == 0:
        raise ctx.unsupported(
            f"an even window size ({attrs['size']}): ONNX Runtime and ONNX's reference run odd ones only"
        )
    ctx.emit1("LRN", [ctx.input(0)], ctx.out(), alpha=attrs["alpha"], beta=attrs["beta"], bias=attrs["bias"],
              size=attrs["size"])  # fmt: skip
