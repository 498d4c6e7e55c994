"""Rules for ONNX's image ops: Resize and Upsample (as OpenVINO's Interpolate, or as the ONNX Resize op
where Interpolate computes otherwise: antialiasing, cropping, aspect ratio), and GridSample
(Col2Im and DeformConv are in :mod:`.rules_convolution`)."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.graph.node import Output

__all__: list[str] = []

_I64 = np.int64


def _out(node: object, index: int = 0) -> Output:
    return node.output(index)  # type: ignore[attr-defined, no-any-return]


# -- resizing ----------------------------------------------------------------------------------------

_RESIZE_MODES = {"nearest": "nearest", "linear": "linear_onnx", "cubic": "cubic"}
_TRANSFORMS = ("half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn", "align_corners")
_ONNX_TRANSFORMS = ("half_pixel_symmetric", "tf_crop_and_resize")


def _needs_onnx_resize(ctx: NodeContext, mode: str, by: str, transform: str) -> bool:
    """Whether the node uses what OpenVINO's Interpolate does not compute as ONNX does: then the ONNX
    Resize op translates it."""
    return (
        transform in _ONNX_TRANSFORMS
        or (transform == "align_corners" and by == "scales")  # ONNX measures against scale * length
        or ctx.flag("exclude_outside", False)
        or ctx.attr("keep_aspect_ratio_policy", "stretch") != "stretch"
        or (ctx.flag("antialias", False) and mode != "nearest")
    )


def _interpolate(
    ctx: NodeContext, x: Output, values: Output, by: str, axes: list[int] | None, transform: str, nearest: str
) -> Output:
    mode = ctx.attr("mode", "nearest")
    if mode not in _RESIZE_MODES:
        raise ctx.error(f"mode must be nearest, linear or cubic, not '{mode}'")
    rank = x.partial_shape.rank
    axes = [ctx.check_axis(a, rank, "axes") for a in axes] if axes is not None else list(range(rank))
    if _needs_onnx_resize(ctx, mode, by, transform):
        return _onnx_resize(ctx, x, values, by, axes, transform, nearest)
    if transform not in _TRANSFORMS:
        raise ctx.error(f"coordinate_transformation_mode must be one of {', '.join(_TRANSFORMS + _ONNX_TRANSFORMS)}")
    node = opset.interpolate(
        x,
        values,
        mode=_RESIZE_MODES[mode],
        shape_calculation_mode=by,
        coordinate_transformation_mode=transform,
        nearest_mode=nearest,
        antialias=ctx.flag("antialias", False),
        cube_coeff=ctx.attr("cubic_coeff_a", -0.75),
        axes=ctx.const(axes, _I64),
    )
    return _out(node)


def _onnx_resize(
    ctx: NodeContext, x: Output, values: Output, by: str, axes: list[int], transform: str, nearest: str
) -> Output:
    policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
    if policy not in ("stretch", "not_larger", "not_smaller"):
        raise ctx.error(f"keep_aspect_ratio_policy must be stretch, not_larger or not_smaller, not '{policy}'")
    if nearest not in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"):
        raise ctx.error(f"nearest_mode must be round_prefer_floor, round_prefer_ceil, floor or ceil, not '{nearest}'")
    roi = ctx.optional_input(1) if transform == "tf_crop_and_resize" else None
    if transform == "tf_crop_and_resize" and roi is None:
        raise ctx.error("coordinate_transformation_mode 'tf_crop_and_resize' needs the roi input (input 1)")
    node = opset.resize(
        x,
        values,
        roi,
        shape_calculation_mode=by,
        axes=axes,
        mode=ctx.attr("mode", "nearest"),
        coordinate_transformation_mode=transform,
        nearest_mode=nearest,
        cubic_coeff_a=ctx.attr("cubic_coeff_a", -0.75),
        antialias=ctx.flag("antialias", False),
        exclude_outside=ctx.flag("exclude_outside", False),
        extrapolation_value=ctx.attr("extrapolation_value", 0.0),
        keep_aspect_ratio_policy=policy,
    )
    return _out(node)


_OPSET_10_NEAREST = "simple"
"""How Resize-10 and Upsample round a source position (their ONNX text does not say): ONNX Runtime (and OpenVINO's
Interpolate ``simple``) truncates when upsampling an axis and rounds up when downsampling it."""


@rule("Resize", since=10)
def resize_10(ctx: NodeContext) -> Outputs:
    return [_interpolate(ctx, ctx.input(0), ctx.input(1), "scales", None, "asymmetric", _OPSET_10_NEAREST)]


@rule("Resize", since=11)
def resize_11(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    axes = ctx.attr("axes", None)
    transform = ctx.attr("coordinate_transformation_mode", "half_pixel")
    nearest = ctx.attr("nearest_mode", "round_prefer_floor")
    sizes = ctx.optional_input(3)
    if sizes is not None:
        return [_interpolate(ctx, x, sizes, "sizes", axes, transform, nearest)]
    scales = ctx.input(2)
    return [_interpolate(ctx, x, scales, "scales", axes, transform, nearest)]


@rule("Upsample", since=7)
def upsample_7(ctx: NodeContext) -> Outputs:
    scales = ctx.const(ctx.attr("scales"), np.float32)
    return [_interpolate(ctx, ctx.input(0), scales, "scales", None, "asymmetric", _OPSET_10_NEAREST)]


@rule("Upsample", since=9)
def upsample_9(ctx: NodeContext) -> Outputs:
    return [_interpolate(ctx, ctx.input(0), ctx.input(1), "scales", None, "asymmetric", _OPSET_10_NEAREST)]


_GRID_MODES = {
    "bilinear": "bilinear",
    "linear": "bilinear",
    "bicubic": "bicubic",
    "cubic": "bicubic",
    "nearest": "nearest",
}


@rule("GridSample", since=16)
def grid_sample(ctx: NodeContext) -> Outputs:
    mode = ctx.attr("mode", "linear" if ctx.version >= 20 else "bilinear")
    if mode not in _GRID_MODES:
        raise ctx.error(f"mode must be linear, cubic or nearest (bilinear, bicubic before opset 20), not '{mode}'")
    padding = ctx.attr("padding_mode", "zeros")
    if padding not in ("zeros", "border", "reflection"):
        raise ctx.error(f"padding_mode must be zeros, border or reflection, not '{padding}'")
    rank = ctx.input(0).partial_shape.rank
    if _GRID_MODES[mode] == "bicubic" and rank != 4:
        raise ctx.unsupported(f"mode '{mode}' on {rank}-D data (cubic sampling is 2-D only)")
    if rank not in (4, 5):
        raise ctx.unsupported(f"GridSample of {rank}-D data (4-D and 5-D are supported)")
    node = opset.grid_sample(ctx.input(0), ctx.input(1), _GRID_MODES[mode], padding, ctx.flag("align_corners", False))
    return [_out(node)]
