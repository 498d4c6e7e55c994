"""Case recipes of the convolution family: Convolution, GroupConvolution, ConvolutionBackpropData (a filter that
fits the data), Col2Im (as many columns as the image holds blocks), DeformableConvolution (offsets and mask
for each output position and tap)."""

from __future__ import annotations

import math

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import F32, FLOATS, I64, Builder, OpCase, recipe
from hetero_sdk.conformance.recipe_parts import draw_pads, draw_sizes, draw_window
from hetero_sdk.ops.convolution import resolve_pads


@recipe("Convolution", "GroupConvolution")
def _convolution(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    spatial = b.integer(1, 3) if b.integer(0, 4) else 3
    kernel, strides, dilations = draw_window(b, spatial, 3 if spatial < 3 else 2)
    pads_begin, pads_end = draw_pads(b, kernel)
    auto_pad = b.pick(("explicit", "valid", "same_upper", "same_lower"))
    groups, c_in, c_out = (
        (b.integer(1, 3), b.integer(1, 2), b.integer(1, 2))
        if op_type == "GroupConvolution"
        else (1, b.integer(1, 3), b.integer(1, 3))
    )
    data = b.values([b.integer(1, 2), groups * c_in, *draw_sizes(b, kernel, dilations)], dtype, -2, 2)
    shape = [groups, c_out, c_in, *kernel] if op_type == "GroupConvolution" else [c_out, c_in, *kernel]
    filters = b.operand(b.values(shape, dtype, -1, 1), "filters")
    fn = opset.group_convolution if op_type == "GroupConvolution" else opset.convolution
    node = fn(b.input(data, "x"), filters, strides, pads_begin, pads_end, dilations, auto_pad=auto_pad, name="op")
    attrs = {"strides": strides, "pads": (pads_begin, pads_end), "dilations": dilations, "auto_pad": auto_pad}
    return b.case(op_type, node, "accumulate", c_in * math.prod(kernel), **attrs)


@recipe("ConvolutionBackpropData")
def _backprop(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    spatial = b.integer(1, 2)
    kernel, strides, dilations = draw_window(b, spatial)
    pads_begin, pads_end = draw_pads(b, kernel)
    output_padding = [b.integer(0, s - 1) for s in strides]
    auto_pad = b.pick(("explicit", "valid"))
    c_in, c_out = b.integer(1, 3), b.integer(1, 3)
    sizes = [b.integer(1, 4) for _ in range(spatial)]
    for i, (k, s, d) in enumerate(zip(kernel, strides, dilations)):
        if s * (sizes[i] - 1) + d * (k - 1) + 1 + output_padding[i] - pads_begin[i] - pads_end[i] < 1:
            pads_begin[i] = pads_end[i] = 0
    data = b.values([b.integer(1, 2), c_in, *sizes], dtype, -2, 2)
    filters = b.operand(b.values([c_in, c_out, *kernel], dtype, -1, 1), "filters")
    node = opset.convolution_backprop_data(
        b.input(data, "x"), filters, strides, pads_begin=pads_begin, pads_end=pads_end, dilations=dilations,
        auto_pad=auto_pad, output_padding=output_padding, name="op",
    )  # fmt: skip
    attrs = {
        "strides": strides,
        "pads": (pads_begin, pads_end),
        "dilations": dilations,
        "output_padding": output_padding,
    }
    return b.case(op_type, node, "accumulate", c_in * math.prod(kernel), auto_pad=auto_pad, **attrs)


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
