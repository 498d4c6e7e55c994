"""Export rules of the convolution family: Convolution, GroupConvolution, ConvolutionBackpropData, Col2Im and
DeformableConvolution (as DeformConv); :func:`window_attributes` writes the window attributes pooling shares."""

from __future__ import annotations

from typing import Any

from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter
from hetero_sdk.shape import DYNAMIC

__all__ = ["window_attributes"]

_AUTO_PAD = {"explicit": "NOTSET", "same_upper": "SAME_UPPER", "same_lower": "SAME_LOWER", "valid": "VALID"}


def window_attributes(ctx: ExportContext, kernel: list[int] | None, dilations: bool = True) -> dict[str, Any]:
    """ONNX's strides, pads, dilations and auto_pad of a convolution or pooling node. With static
    spatial dims and a known ``kernel``, ``same_*`` and ``valid`` become explicit pads (ONNX Runtime
    refuses dilations with ``SAME_*``)."""
    attrs = ctx.attrs
    spatial = ctx.rank(0) - 2
    strides = list(attrs["strides"]) or [1] * spatial
    dilation = (list(attrs["dilations"]) or [1] * spatial) if dilations else [1] * spatial
    window: dict[str, Any] = {"strides": strides}
    if dilations:
        window["dilations"] = dilation
    auto_pad = attrs["auto_pad"]
    dims = ctx.port(0).partial_shape.dims[2:]
    if auto_pad == "explicit":
        begin, end = list(attrs["pads_begin"]) or [0] * spatial, list(attrs["pads_end"]) or [0] * spatial
        window["pads"] = begin + end
    elif auto_pad == "valid":
        window["pads"] = [0] * 2 * spatial
    elif kernel is not None and DYNAMIC not in dims and DYNAMIC not in kernel:
        begin, end = [], []
        for size, k, s, d in zip(dims, kernel, strides, dilation):
            total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
            first = total // 2 if auto_pad == "same_upper" else total - total // 2
            begin.append(first)
            end.append(total - first)
        window["pads"] = begin + end
    else:
        window["auto_pad"] = _AUTO_PAD[auto_pad]
    return window


def _kernel(ctx: ExportContext) -> list[int]:
    return list(ctx.port(1).partial_shape.dims[-(ctx.rank(0) - 2) :])


@exporter("Convolution")
def convolution(ctx: ExportContext) -> None:
    ctx.emit1("Conv", [ctx.input(0), ctx.input(1)], ctx.out(), **window_attributes(ctx, _kernel(ctx)))


@exporter("GroupConvolution")
def group_convolution(ctx: ExportContext) -> None:
    dims = ctx.port(1).partial_shape.dims  # [groups, out / groups, in / groups, *kernel] -> [out, in / groups, *kernel]
    groups = dims[0]
    weights = ctx.constant(1)
    if weights is not None:
        filters = ctx.const(weights.reshape(dims[0] * dims[1], *dims[2:]), weights.dtype, "filters")
    elif DYNAMIC in dims[:3]:
        raise ctx.unsupported("grouped filters of dynamic shape (ONNX needs the group count)")
    else:
        filters = ctx.emit1("Reshape", [ctx.input(1), ctx.const([dims[0] * dims[1], *dims[2:]], name="shape")])
    ctx.emit1("Conv", [ctx.input(0), filters], ctx.out(), group=groups, **window_attributes(ctx, _kernel(ctx)))


@exporter("ConvolutionBackpropData")
def convolution_backprop_data(ctx: ExportContext) -> None:
    window = window_attributes(ctx, None)
    padding = list(ctx.attrs["output_padding"])
    if any(padding):
        window["output_padding"] = padding
    if ctx.has_input(2):
        shape = ctx.required_constant(2, "output_shape").reshape(-1).astype(int).tolist()
        window.pop("pads", None)
        window["output_shape"] = shape
        if window.get("auto_pad") == "SAME_LOWER":
            raise ctx.unsupported("an output_shape with auto_pad same_lower")
        window["auto_pad"] = "SAME_UPPER"
    ctx.emit1("ConvTranspose", [ctx.input(0), ctx.input(1)], ctx.out(), **window)


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
