"""Case recipes of the image and region ops whose operands constrain each other: GridSample (a grid per data
batch, with one coordinate per spatial axis), Resize (values per resized axis, crops) and ROIAlign (regions
within the feature maps, batch indices in range), Col2Im (as many columns as the image holds blocks),
DeformableConvolution (offsets and mask for each output position and tap)."""

from __future__ import annotations

import math

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import F32, FLOATS, I64, Builder, OpCase, recipe
from hetero_sdk.ops.convolution import resolve_pads


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
    node = opset.resize(
        b.input(data, "x"), opset.constant(values, name="values"), roi, shape_calculation_mode=by, axes=[2, 3],
        mode=mode, coordinate_transformation_mode=transform, antialias=antialias, exclude_outside=exclude,
        extrapolation_value=2.5, name="op",
    )  # fmt: skip
    return b.case(op_type, node, "accumulate", 64, mode=mode, transform=transform, by=by, antialias=antialias)


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
