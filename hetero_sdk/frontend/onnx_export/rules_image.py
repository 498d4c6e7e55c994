"""Export rules of the image family: GridSample, Resize and Interpolate (as ONNX's Resize)."""

from __future__ import annotations

from typing import Any

from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter
from hetero_sdk.ops.image import interpolate_pads
from hetero_sdk.shape import DYNAMIC

__all__: list[str] = []

_RESIZE = {
    "nearest": ("nearest", 0), "linear_onnx": ("linear", 0), "cubic": ("cubic", 0),
    "bilinear_pillow": ("linear", 1), "bicubic_pillow": ("cubic", 1),
}  # fmt: skip
"""Interpolate's modes as ONNX Resize's mode and antialias."""


@exporter("Interpolate")
def interpolate(ctx: ExportContext) -> None:
    attrs = ctx.attrs
    if attrs["mode"] not in _RESIZE:
        raise ctx.unsupported(f"mode '{attrs['mode']}' (OpenVINO's own triangle filter; ONNX has linear_onnx's)")
    mode, pillow = _RESIZE[attrs["mode"]]
    if pillow:
        raise ctx.unsupported(
            f"mode '{attrs['mode']}' (Pillow's filter; ONNX Resize's antialias weighs other taps when downscaling)"
        )
    rank = ctx.rank(0)
    x = ctx.input(0)
    begin, end = interpolate_pads(attrs, rank)
    if any(begin) or any(end):
        x = ctx.emit1("Pad", [x, ctx.const([*begin, *end], name="pads")])
    axes = ctx.required_constant(2, "axes").reshape(-1).astype(int).tolist() if ctx.has_input(2) else None
    resize: dict[str, Any] = {
        "mode": mode,
        "coordinate_transformation_mode": attrs["coordinate_transformation_mode"],
        "antialias": 1 if pillow else None,  # OpenVINO's antialias widens only its own 'linear' filter
        "cubic_coeff_a": -0.5 if attrs["mode"] == "bicubic_pillow" else attrs["cube_coeff"],
        "axes": [a % rank for a in axes] if axes is not None else None,
    }
    if mode == "nearest":
        if attrs["nearest_mode"] == "simple":
            raise ctx.unsupported("nearest_mode 'simple'")
        resize["nearest_mode"] = attrs["nearest_mode"]
    out_dims = ctx.current.get_output_partial_shape(0).dims
    if attrs["shape_calculation_mode"] == "sizes":
        inputs = [x, "", "", ctx.i64(1)]
    elif attrs["coordinate_transformation_mode"] == "align_corners" and axes is not None:
        # ONNX's align_corners measures against scale * length, OpenVINO's against the floored output
        # length: the output sizes say the latter
        sizes = [out_dims[a % rank] for a in axes]
        if DYNAMIC in sizes:
            raise ctx.unsupported("align_corners with scales and a dynamic output size")
        inputs = [x, "", "", ctx.const(sizes, name="sizes")]
    else:
        inputs = [x, "", ctx.cast(ctx.input(1), ctx.element_type(1), Type.f32)]
    ctx.emit1("Resize", inputs, ctx.out(), **resize)


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
