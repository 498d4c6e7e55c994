"""Export rules of the signal family: STFT and MelWeightMatrix."""

from __future__ import annotations

from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter, onnx_type

__all__: list[str] = []


@exporter("STFT")
def stft(ctx: ExportContext) -> None:
    """ONNX's STFT of the signal with a trailing axis of 1 (and a batch of 1 for a 1-D signal); a window
    shorter than the frame padded to it, centred; the bins moved before the frames for transpose_frames."""
    if ctx.opset < 17:
        raise ctx.unsupported(f"STFT in ONNX opset {ctx.opset} (ONNX defines it from opset 17)")
    batched = ctx.rank(0) == 2
    signal = ctx.emit1("Unsqueeze", [ctx.input(0), ctx.const([2] if batched else [0, 2])])
    window, size = ctx.input(1), ctx.constant(2)
    length = ctx.port(1).partial_shape[0]
    if size is None or length < 0:
        raise ctx.unsupported("an STFT whose frame_size or window length is not static (ONNX's window must be "
                              "as long as the frame)")  # fmt: skip
    frame = int(size.reshape(-1)[0])
    if length < frame:
        before = (frame - length) // 2
        window = ctx.emit1("Pad", [window, ctx.const([before, frame - length - before])])
    transposed = ctx.attrs["transpose_frames"]
    last = batched and not transposed
    inputs = [signal, ctx.cast(ctx.input(3), ctx.element_type(3), Type.i64), window, ctx.const(frame)]
    out = ctx.emit1("STFT", inputs, ctx.out() if last else None, onesided=1)  # [batch, frames, bins, 2]
    if not batched:
        out = ctx.emit1("Squeeze", [out, ctx.const([0])], ctx.out() if not transposed else None)
    if transposed:
        ctx.emit1("Transpose", [out], ctx.out(), perm=[0, 2, 1, 3] if batched else [1, 0, 2])


@exporter("MelWeightMatrix")
def mel_weight_matrix(ctx: ExportContext) -> None:
    if ctx.opset < 17:
        raise ctx.unsupported(f"MelWeightMatrix in ONNX opset {ctx.opset} (ONNX defines it from opset 17)")
    inputs = [ctx.i64(0), ctx.i64(1), ctx.i64(2), ctx.input(3), ctx.input(4)]
    ctx.emit1("MelWeightMatrix", inputs, ctx.out(), output_datatype=onnx_type(ctx.attrs["output_type"]))
