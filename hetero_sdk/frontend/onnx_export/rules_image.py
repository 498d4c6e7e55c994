"""Export rules of the image and region ops ONNX has under the same meaning: GridSample, Resize,
ROIAlign, Col2Im and DeformableConvolution (as DeformConv; Interpolate's rule is in :mod:`.rules_nn`),
and the signal ops STFT and MelWeightMatrix."""

from __future__ import annotations

from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter, onnx_type
from hetero_sdk.frontend.onnx_export.rules_nn import window_attributes

__all__: list[str] = []

_GRID_MODES = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}
"""GridSample's modes as ONNX names them from opset 20 (opset 16 used the SDK's names)."""


@exporter("GridSample")
def grid_sample(ctx: ExportContext) -> None:
    attrs = ctx.attrs
    if ctx.opset < 16:
        raise ctx.unsupported(f"GridSample in ONNX opset {ctx.opset} (ONNX defines it from opset 16)")
    if ctx.opset < 20 and ctx.rank(0) != 4:
        raise ctx.unsupported(f"{ctx.rank(0)}-D GridSample in ONNX opset {ctx.opset} (5-D from opset 20)")
    mode = _GRID_MODES[attrs["mode"]] if ctx.opset >= 20 else attrs["mode"]
    ctx.emit1(
        "GridSample",
        [ctx.input(0), ctx.input(1)],
        ctx.out(),
        mode=mode,
        padding_mode=attrs["padding_mode"],
        align_corners=int(attrs["align_corners"]),
    )


@exporter("Resize")
def resize(ctx: ExportContext) -> None:
    attrs = ctx.attrs
    if ctx.opset < 19:
        raise ctx.unsupported(f"ONNX Resize-19's attributes in ONNX opset {ctx.opset}")
    roi = ctx.cast(ctx.input(2), ctx.element_type(2), Type.f32) if ctx.has_input(2) else ""
    if attrs["shape_calculation_mode"] == "sizes":
        inputs = [ctx.input(0), roi, "", ctx.i64(1)]
    else:
        inputs = [ctx.input(0), roi, ctx.cast(ctx.input(1), ctx.element_type(1), Type.f32)]
    filtered = attrs["mode"] == "linear" and attrs["antialias"]
    ctx.emit1(
        "Resize",
        inputs,
        ctx.out(),
        axes=attrs["axes"],
        mode=attrs["mode"],
        coordinate_transformation_mode=attrs["coordinate_transformation_mode"],
        nearest_mode=attrs["nearest_mode"],
        cubic_coeff_a=attrs["cubic_coeff_a"],
        # nearest ignores both; linear without antialias has no tap outside that clamping would not give
        # the same value (ONNX Runtime refuses exclude_outside there)
        antialias=int(attrs["antialias"] and attrs["mode"] != "nearest"),
        exclude_outside=int(attrs["exclude_outside"] and (attrs["mode"] == "cubic" or bool(filtered))),
        extrapolation_value=attrs["extrapolation_value"],
        keep_aspect_ratio_policy=attrs["keep_aspect_ratio_policy"],
    )


_ROI_TRANSFORMS = {"half_pixel": "half_pixel", "asymmetric": "output_half_pixel"}


@exporter("ROIAlign")
def roi_align(ctx: ExportContext) -> None:
    attrs = ctx.attrs
    transform = _ROI_TRANSFORMS.get(attrs["aligned_mode"])
    if transform is None:
        raise ctx.unsupported(f"aligned_mode '{attrs['aligned_mode']}' (ONNX has half_pixel and output_half_pixel)")
    if ctx.opset < 16 and transform != "output_half_pixel":
        raise ctx.unsupported(f"aligned_mode 'half_pixel' in ONNX opset {ctx.opset} (from opset 16)")
    ctx.emit1(
        "RoiAlign",
        [ctx.input(0), ctx.input(1), ctx.i64(2)],
        ctx.out(),
        mode=attrs["mode"],
        output_height=attrs["pooled_h"],
        output_width=attrs["pooled_w"],
        sampling_ratio=attrs["sampling_ratio"],
        spatial_scale=attrs["spatial_scale"],
        coordinate_transformation_mode=transform if ctx.opset >= 16 else None,
    )


@exporter("Col2Im")
def col2im(ctx: ExportContext) -> None:
    if ctx.opset < 18:
        raise ctx.unsupported(f"Col2Im in ONNX opset {ctx.opset} (ONNX defines it from opset 18)")
    attrs = ctx.attrs
    pads = list(attrs["pads_begin"]) + list(attrs["pads_end"])
    window = {"strides": attrs["strides"], "dilations": attrs["dilations"], "pads": pads}
    data, out = ctx.input(0), ctx.out()
    batched = ctx.rank(0) == 3
    if not batched:  # ONNX's Col2Im takes a batch: add one, and take it away after
        data = ctx.emit1("Unsqueeze", [data, ctx.const([0])])
    result = ctx.emit1("Col2Im", [data, ctx.i64(1), ctx.i64(2)], out if batched else None, **window)
    if not batched:
        ctx.emit1("Squeeze", [result, ctx.const([0])], out)


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


@exporter("DeformableConvolution")
def deformable_convolution(ctx: ExportContext) -> None:
    attrs = ctx.attrs
    if ctx.opset < 19:
        raise ctx.unsupported(f"DeformableConvolution in ONNX opset {ctx.opset} (ONNX's DeformConv is from opset 19)")
    if not attrs["bilinear_interpolation_pad"]:
        raise ctx.unsupported(
            "bilinear_interpolation_pad=False (a sample near the edge reads the edge pixel; ONNX's DeformConv reads "
            "zeros, as bilinear_interpolation_pad=True does)"
        )
    window = window_attributes(ctx, list(ctx.port(2).partial_shape.dims[2:]))
    if "auto_pad" in window:
        raise ctx.unsupported(
            f"auto_pad {attrs['auto_pad']} with dynamic spatial dims (DeformConv takes explicit pads)"
        )
    inputs = [ctx.input(0), ctx.input(2), ctx.input(1)] + (["", ctx.input(3)] if ctx.has_input(3) else [])
    ctx.emit1("DeformConv", inputs, ctx.out(), group=attrs["group"], offset_group=attrs["deformable_group"], **window)
