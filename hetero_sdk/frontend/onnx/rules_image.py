"""Rules for ONNX's image ops: Resize and Upsample (as OpenVINO's Interpolate, or as the ONNX Resize op
where Interpolate computes otherwise: antialiasing, cropping, aspect ratio), GridSample, Col2Im, DeformConv."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.frontend.onnx.rules_nn import channel_bias, window_attrs
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


@rule("Col2Im", since=18)
def col2im(ctx: NodeContext) -> Outputs:
    """OpenVINO's Col2Im for 2-D images; other ranks as one 2-D Col2Im per spatial axis (the sum of
    blocks separates by axis), with a unit first axis."""
    rank = ctx.input(1).partial_shape[0]
    if rank < 1:
        raise ctx.unsupported("a Col2Im whose image_shape has an unknown length")
    dilations, strides = ctx.attr("dilations", [1] * rank), ctx.attr("strides", [1] * rank)
    pads = ctx.attr("pads", [0] * 2 * rank)
    image, block = (opset.convert(ctx.input(i), Type.i64).output(0) for i in (1, 2))
    if rank == 2:
        node = opset.col2im(ctx.input(0), image, block, strides, dilations, pads[:2], pads[2:])
        return [_out(node)]
    # blocks per axis: (image + pads - dilation * (block - 1) - 1) // stride + 1
    reach = opset.add(opset.multiply(block, ctx.const(dilations, _I64)), ctx.const([1 - d for d in dilations], _I64))
    room = opset.subtract(opset.add(image, ctx.const([b + e for b, e in zip(pads[:rank], pads[rank:])], _I64)), reach)
    counts = opset.add(opset.divide(room, ctx.const(strides, _I64)), ctx.const([1] * rank, _I64))
    target = opset.concat([ctx.const([0, -1], _I64), block, counts], 0)
    x = _out(opset.reshape(ctx.input(0), target, special_zero=True))  # [N, C, blocks..., counts...]
    axes = ["n", "c", *(f"k{a}" for a in range(rank)), *(f"l{a}" for a in range(rank))]
    for a in range(rank):
        rest = [name for name in axes if name not in (f"k{a}", f"l{a}")]
        order = [axes.index(name) for name in (*rest, f"k{a}", f"l{a}")]
        moved = opset.transpose(x, ctx.const(order, _I64))
        dims = opset.shape_of(moved, Type.i64)
        flat = opset.reshape(moved, opset.concat([ctx.const([-1], _I64), _gather(ctx, dims, [-2, -1])], 0), False)
        one = ctx.const([1], _I64)
        summed = opset.col2im(
            flat, opset.concat([one, _gather(ctx, image, [a])], 0), opset.concat([one, _gather(ctx, block, [a])], 0),
            [1, strides[a]], [1, dilations[a]], [0, pads[a]], [0, pads[rank + a]],
        )  # fmt: skip  # [-1, 1, 1, image[a]]
        target = opset.concat([_gather(ctx, dims, list(range(len(rest)))), _gather(ctx, image, [a])], 0)
        x = _out(opset.reshape(summed, target, special_zero=False))
        axes = [*rest, f"i{a}"]
    order = [axes.index(name) for name in ("n", "c", *(f"i{a}" for a in range(rank)))]
    return [_out(opset.transpose(x, ctx.const(order, _I64)))]


def _gather(ctx: NodeContext, values: object, indices: list[int]) -> Output:
    return _out(opset.gather(values, ctx.const(indices, _I64), ctx.const(0, _I64)))


@rule("DeformConv", since=19)
def deform_conv(ctx: NodeContext) -> Outputs:
    """OpenVINO's DeformableConvolution with ``bilinear_interpolation_pad`` (ONNX samples zeros past the
    edges), then the bias added per output channel, as OpenVINO's ONNX frontend translates it."""
    x = ctx.input(0)
    if x.partial_shape.rank != 4:
        raise ctx.unsupported(f"a {x.partial_shape.rank}-D DeformConv (2-D images only)")
    node = opset.deformable_convolution(
        x, ctx.input(2), ctx.input(1), mask=ctx.optional_input(4), group=ctx.attr("group", 1),
        deformable_group=ctx.attr("offset_group", 1), bilinear_interpolation_pad=True, **window_attrs(ctx, 2),
    )  # fmt: skip
    return [channel_bias(ctx, _out(node), ctx.optional_input(3))]
