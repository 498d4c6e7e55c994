"""Case recipes of the image and region ops whose operands constrain each other: GridSample (a grid per data
batch, with one coordinate per spatial axis), Resize and Interpolate (values per resized axis, crops,
pads) and ROIAlign (regions
within the feature maps, batch indices in range), Col2Im (as many columns as the image holds blocks),
DeformableConvolution (offsets and mask for each output position and tap)."""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import F32, FLOATS, I32, I64, Builder, OpCase, key_case, recipe
from hetero_sdk.ops.convolution import resolve_pads
from hetero_sdk.ops.image import COORDINATE_TRANSFORMATION_MODES, MODES, NEAREST_MODES
from hetero_sdk.ops.image_resize import RESIZE_MODES, RESIZE_NEAREST_MODES, RESIZE_TRANSFORMS


@recipe("GridSample")
def _grid_sample(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    mode, padding = b.pick(("bilinear", "bicubic", "nearest")), b.pick(("zeros", "border", "reflection"))
    spatial = 3 if mode != "bicubic" and b.flag() else 2
    data = b.values([b.integer(1, 2), b.integer(1, 3), *(b.integer(1, 4) for _ in range(spatial))], dtype, -2, 2)
    grid_shape = [data.shape[0], *(b.integer(1, 3) for _ in range(spatial)), spatial]
    grid = b.values(grid_shape, dtype, -1.3, 1.3)
    align = b.flag()
    node = opset.grid_sample(b.input(data, "x"), b.operand(grid, "grid"), mode, padding, align, name="op")
    return b.case(op_type, node, "accumulate", 4**spatial, mode=mode, padding_mode=padding, align_corners=align)


@recipe("Resize")
def _resize(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    mode = b.pick(("nearest", "linear", "cubic"))
    transform = b.pick(("half_pixel", "half_pixel_symmetric", "align_corners", "asymmetric", "tf_crop_and_resize"))
    data = b.values([1, b.integer(1, 2), b.integer(1, 5), b.integer(2, 6)], dtype, -2, 2)
    crop = transform == "tf_crop_and_resize"
    # align_corners with scales is left to the node tests: ONNX measures it against scale * length (as the
    # op does), ONNX Runtime, which checks the export of these cases, against the floored length
    by = "sizes" if crop or transform == "align_corners" else b.pick(("scales", "sizes"))
    if by == "sizes":
        values = np.array([b.integer(1, 7), b.integer(1, 7)], I64)
    else:
        values = np.array([b.pick((0.45, 0.6, 1.0, 1.7, 2.5)) for _ in range(2)], F32)
    roi = opset.constant(np.array([-0.15, 0.27, 0.9, 1.33], F32), name="roi") if crop else None
    antialias, exclude = b.flag(), b.flag()
    nearest = b.pick(RESIZE_NEAREST_MODES)
    node = opset.resize(
        b.input(data, "x"), opset.constant(values, name="values"), roi, shape_calculation_mode=by, axes=[2, 3],
        mode=mode, coordinate_transformation_mode=transform, nearest_mode=nearest, antialias=antialias,
        exclude_outside=exclude, extrapolation_value=2.5, name="op",
    )  # fmt: skip
    attrs = {"mode": mode, "transform": transform, "by": by, "antialias": antialias, "nearest_mode": nearest}
    return b.case(op_type, node, "accumulate", 64, **attrs)


@key_case("Resize")
def _resize_nearest_rounds() -> OpCase:
    """Nearest upsampling by 1.5 (half_pixel, round_prefer_floor): source coordinates 0.5 apart land between
    pixels, where rounding and flooring pick different ones."""
    b = Builder.fixed(10)
    data = b.input(b.values([1, 1, 4, 4], F32, -2, 2), "x")
    node = opset.resize(
        data, opset.constant(np.array([6, 6], I64)), shape_calculation_mode="sizes", axes=[2, 3], mode="nearest",
        name="op",
    )  # fmt: skip
    attrs = {"mode": "nearest", "transform": "half_pixel", "by": "sizes", "antialias": False}
    return b.case("Resize", node, "exact", nearest_mode="round_prefer_floor", **attrs)


def _resize_pair(mode: str, transform: str, seed: int, sizes: tuple[int, int] = (5, 3)) -> OpCase:
    """Resize in ``mode`` with ``transform``: a 3x4 image to ``sizes`` (by default up one axis, down the
    other), cropped partly outside the image with ``tf_crop_and_resize``."""
    b = Builder.fixed(seed)
    crop = transform == "tf_crop_and_resize"
    roi = opset.constant(np.array([-0.15, 0.27, 0.9, 1.33], F32), name="roi") if crop else None
    node = opset.resize(
        b.input(b.values([1, 2, 3, 4], F32, -2, 2), "x"), opset.constant(np.array(sizes, I64)), roi,
        shape_calculation_mode="sizes", axes=[2, 3], mode=mode, coordinate_transformation_mode=transform,
        extrapolation_value=2.5, name="op",
    )  # fmt: skip
    attrs = {"mode": mode, "transform": transform, "by": "sizes", "antialias": False}
    return b.case("Resize", node, "accumulate", 64, nearest_mode="round_prefer_floor", **attrs)


for _index, (_mode, _transform) in enumerate((m, t) for m in RESIZE_MODES for t in RESIZE_TRANSFORMS):
    key_case("Resize")(partial(_resize_pair, _mode, _transform, 100 + _index))
for _mode in RESIZE_MODES:  # a crop to the image's own size is no copy (ORT once took it for one)
    key_case("Resize")(partial(_resize_pair, _mode, "tf_crop_and_resize", 150, (3, 4)))


@recipe("Interpolate")
def _interpolate(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    mode = b.pick(MODES)
    transform = b.pick(COORDINATE_TRANSFORMATION_MODES)
    nearest = b.pick(NEAREST_MODES)
    data = b.values([1, b.integer(1, 2), b.integer(1, 5), b.integer(2, 6)], dtype, -2, 2)
    axes = b.pick(([2, 3], [3], [3, 2], None))
    if axes is None and mode.endswith("_pillow"):
        axes = [2, 3]  # without axes every axis is resized; the pillow modes resize two at most
    resized = [2, 3] if axes is None else axes
    by = b.pick(("sizes", "scales"))
    padded = b.integer(0, 3) == 0
    pads = [[0, 0, *(b.integer(0, 1) if padded else 0 for _ in range(2))] for _ in range(2)]
    if by == "sizes":
        sizes = {axis: b.integer(1, 7) for axis in resized}
        values = np.array([sizes.get(a, data.shape[a] + pads[0][a] + pads[1][a]) for a in axes or range(4)])
        values = values.astype(b.pick((I64, I32)))
    else:
        scales = {axis: b.pick((0.5, 0.6, 1.0, 1.5, 2.0, 2.5)) for axis in resized}
        values = np.array([scales.get(a, 1.0) for a in axes or range(4)], F32)
    antialias, cube = b.flag(), b.pick((-0.75, -0.5))
    axes_node = None if axes is None else opset.constant(np.array(axes, b.pick((I64, I32))), name="axes")
    node = opset.interpolate(
        b.input(data, "x"), opset.constant(values, name="values"), mode, by, pads[0], pads[1], transform, nearest,
        antialias, cube, axes_node, name="op",
    )  # fmt: skip
    attrs = {"mode": mode, "by": by, "axes": axes, "transform": transform, "nearest_mode": nearest, "pads": pads}
    return b.case(op_type, node, "accumulate", 64, antialias=antialias, cube_coeff=cube, **attrs)


def _interpolate_pair(mode: str, transform: str, seed: int) -> OpCase:
    """Interpolate in ``mode`` with ``transform``: a 3x4 image to 5x3 by sizes."""
    b = Builder.fixed(seed)
    node = opset.interpolate(
        b.input(b.values([1, 2, 3, 4], F32, -2, 2), "x"), opset.constant(np.array([5, 3], I64)), mode, "sizes",
        coordinate_transformation_mode=transform, axes=opset.constant(np.array([2, 3], I64)), name="op",
    )  # fmt: skip
    attrs = {"mode": mode, "by": "sizes", "axes": [2, 3], "transform": transform, "nearest_mode": "round_prefer_floor"}
    return b.case("Interpolate", node, "accumulate", 64, antialias=False, **attrs)


for _index, (_mode, _transform) in enumerate((m, t) for m in MODES for t in COORDINATE_TRANSFORMATION_MODES):
    key_case("Interpolate")(partial(_interpolate_pair, _mode, _transform, 200 + _index))


@key_case("Interpolate")
def _interpolate_to_an_empty_axis() -> OpCase:
    """Scales of 0.5 on a one-pixel axis: floor(0.5) leaves it empty (ORT once failed to run it)."""
    b = Builder.fixed(13)
    node = opset.interpolate(
        b.input(b.values([1, 1, 1, 2], F32, -2, 2), "x"), opset.constant(np.array([0.5, 0.5], F32)), "nearest",
        "scales", coordinate_transformation_mode="align_corners", axes=opset.constant(np.array([2, 3], I64)),
        name="op",
    )  # fmt: skip
    attrs = {"mode": "nearest", "by": "scales", "axes": [2, 3], "transform": "align_corners", "pads": "none"}
    return b.case("Interpolate", node, "accumulate", 64, antialias=False, **attrs)


@key_case("Interpolate")
def _interpolate_linear_downsampling_with_antialias() -> OpCase:
    """Bilinear downsampling by 0.6 with antialias and pads (OpenVINO's defaults otherwise)."""
    b = Builder.fixed(11)
    data = b.input(b.values([1, 2, 5, 5], F32, -2, 2), "x")
    node = opset.interpolate(
        data, opset.constant(np.array([0.6, 0.6], F32)), "linear", "scales", [0, 0, 1, 0], [0, 0, 0, 1],
        antialias=True, axes=opset.constant(np.array([2, 3], I64)), name="op",
    )  # fmt: skip
    attrs = {"mode": "linear", "by": "scales", "axes": [2, 3], "transform": "half_pixel", "pads": "1 before, 1 after"}
    return b.case("Interpolate", node, "accumulate", 64, antialias=True, **attrs)


@recipe("ROIAlign")
def _roi_align(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    data = b.values([b.integer(1, 2), b.integer(1, 3), b.integer(2, 6), b.integer(2, 6)], dtype, -2, 2)
    count = b.integer(1, 3)
    corners = b.values([count, 2], F32, 0, 4)
    sizes = b.values([count, 2], F32, 0.5, 4)
    rois = np.concatenate([corners, corners + sizes], axis=1).astype(dtype)
    batch = np.array([b.integer(0, data.shape[0] - 1) for _ in range(count)], I64)
    mode, aligned = b.pick(("avg", "max")), b.pick(("half_pixel", "asymmetric"))
    pooled, ratio = (b.integer(1, 3), b.integer(1, 3)), b.integer(1, 3)
    node = opset.roi_align(
        b.input(data, "x"), b.operand(rois, "rois"), opset.constant(batch, name="batch"), pooled[0], pooled[1],
        ratio, b.pick((0.5, 1.0)), mode, aligned, name="op",
    )  # fmt: skip
    return b.case(op_type, node, "accumulate", 4 * ratio * ratio, mode=mode, aligned_mode=aligned)


@recipe("Col2Im")
def _col2im(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    block = [b.integer(1, 3) for _ in range(2)]
    dilations, strides = [b.integer(1, 2) for _ in range(2)], [b.integer(1, 2) for _ in range(2)]
    pads_begin, pads_end = [b.integer(0, 1) for _ in range(2)], [b.integer(0, 1) for _ in range(2)]
    image = [b.integer(d * (k - 1) + 1, 5) for d, k in zip(dilations, block)]
    counts = [(i + p + q - (d * (k - 1) + 1)) // s + 1
              for i, p, q, d, k, s in zip(image, pads_begin, pads_end, dilations, block, strides)]  # fmt: skip
    batch = [b.integer(1, 2)] if b.flag() else []
    data = b.values([*batch, b.integer(1, 2) * math.prod(block), math.prod(counts)], dtype, -2, 2)
    node = opset.col2im(
        b.input(data, "x"), opset.constant(np.array(image, I64)), opset.constant(np.array(block, I64)),
        strides, dilations, pads_begin, pads_end, name="op",
    )  # fmt: skip
    return b.case(op_type, node, "accumulate", math.prod(block), block=block, strides=strides, batched=bool(batch))


@recipe("DeformableConvolution")
def _deformable_convolution(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    group, deformable = b.integer(1, 2), b.integer(1, 2)
    kernel, dilations = [b.integer(1, 3), b.integer(1, 2)], [b.integer(1, 2), b.integer(1, 2)]
    strides = [b.integer(1, 2), b.integer(1, 2)]
    pads_begin, pads_end = [b.integer(0, 1), b.integer(0, 1)], [b.integer(0, 1), b.integer(0, 1)]
    auto_pad, pad = b.pick(("explicit", "valid", "same_upper", "same_lower")), b.flag()
    channels = group * deformable * b.integer(1, 2)
    size = [b.integer(d * (k - 1) + 1, 5) for d, k in zip(dilations, kernel)]
    data = b.values([b.integer(1, 2), channels, *size], dtype, -2, 2)
    filters = b.operand(b.values([group * b.integer(1, 2), channels // group, *kernel], dtype, -1, 1), "filters")
    begin, end = resolve_pads(auto_pad, size, kernel, strides, dilations, pads_begin, pads_end)
    dims = [(n + p + q - d * (k - 1) - 1) // s + 1
            for n, p, q, d, k, s in zip(size, begin, end, dilations, kernel, strides)]  # fmt: skip
    taps = deformable * math.prod(kernel)
    # quarter steps plus an eighth: no sample lands on an edge, where the two interpolation modes jump
    offsets = (np.floor(b.values([data.shape[0], 2 * taps, *dims], F32, -2, 2) * 4) / 4 + 0.125).astype(dtype)
    mask = b.operand(b.values([data.shape[0], taps, *dims], dtype, 0, 1), "mask") if b.flag() else None
    node = opset.deformable_convolution(
        b.input(data, "x"), b.operand(offsets, "offsets"), filters, strides, pads_begin, pads_end, dilations, mask,
        auto_pad, group, deformable, pad, name="op",
    )  # fmt: skip
    attrs = {"group": group, "deformable_group": deformable, "auto_pad": auto_pad, "bilinear_interpolation_pad": pad}
    return b.case(op_type, node, "accumulate", 4 * channels * math.prod(kernel), **attrs)
