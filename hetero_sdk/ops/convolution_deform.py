"""DeformableConvolution (OpenVINO opset 8): each kernel tap reads the input at its regular position plus
a learned offset, bilinearly, optionally scaled by a mask; the samples are then convolved with the filters.

One array-API kernel serves every device: the samples of every tap gathered at once (four corners), then
one batched matrix product per convolution group.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hetero_sdk.array_api import namespace, widened
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import BOOL, INT, INTS, LOWER_STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import REAL_TYPES, expect_rank, expect_same_types
from hetero_sdk.ops.convolution import AUTO_PADS, check_window_attrs, resolve_pads, window_output_dims
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = ["deformable_convolution"]


def deformable_convolution(
    data: Any,
    offsets: Any,
    filters: Any,
    strides: Sequence[int],
    pads_begin: Sequence[int],
    pads_end: Sequence[int],
    dilations: Sequence[int],
    mask: Any = None,
    auto_pad: str = "explicit",
    group: int = 1,
    deformable_group: int = 1,
    bilinear_interpolation_pad: bool = False,
    name: str | None = None,
) -> Node:
    """A 2-D deformable convolution (``DeformableConvolution``, OpenVINO opset 8).

    Output ``[N, OC, oH, oW]`` at ``p`` is ``sum_k w_k * x(p + p_k + offset_k) * mask_k``: tap ``k`` of the
    kernel samples the input bilinearly at its regular position plus its learned ``(y, x)`` offset.

    :param data: ``[N, C, H, W]``.
    :param offsets: ``[N, deformable_group * kH * kW * 2, oH, oW]``: per deformable group and tap, the
        ``y`` then the ``x`` offset.
    :param filters: ``[OC, C / group, kH, kW]``.
    :param strides: ``[sH, sW]``; ``dilations`` likewise.
    :param pads_begin: ``[top, left]``; ``pads_end``: ``[bottom, right]`` (ignored unless ``auto_pad`` is
        ``explicit``).
    :param mask: ``[N, deformable_group * kH * kW, oH, oW]``: multiplies each sample (default 1).
    :param auto_pad: ``explicit``, ``same_upper``, ``same_lower`` or ``valid``.
    :param group: convolution groups splitting the input and output channels.
    :param deformable_group: channel groups of the input sharing one set of offsets (and mask).
    :param bilinear_interpolation_pad: True: a sample reads zeros past the input's edges, so one within a
        pixel of the input still weighs its inside neighbours; False: a sample outside ``[0, H) x [0, W)``
        is zero and one inside reads the nearest edge pixel for a neighbour past the edge.
    :param name: the node's friendly name.
    :returns: the node; its output is ``[N, OC, oH, oW]``.
    """
    inputs = [as_output(data)]
    inputs += [as_output(v, like=inputs[0]) for v in (offsets, filters) + (() if mask is None else (mask,))]
    attrs = {
        "strides": list(strides),
        "pads_begin": list(pads_begin),
        "pads_end": list(pads_end),
        "dilations": list(dilations),
        "auto_pad": str(auto_pad).lower(),
        "group": int(group),
        "deformable_group": int(deformable_group),
        "bilinear_interpolation_pad": bool(bilinear_interpolation_pad),
    }
    return Node(DEFORMABLE_CONVOLUTION, inputs, attrs, name)


def _deformable_convolution(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, *range(node.get_input_size()))
    data = expect_rank(node, 0, 4, what="data")
    offsets = expect_rank(node, 1, 4, what="offsets")
    filters = expect_rank(node, 2, 4, what="filters")
    attrs = node.attrs
    check_window_attrs(node, 2, "strides", "dilations", "pads_begin", "pads_end")
    group, deformable = attrs["group"], attrs["deformable_group"]
    if group < 1 or deformable < 1:
        raise node.error(f"group ({group}) and deformable_group ({deformable}) must be positive")
    channels, out_channels, kh, kw = data[1], filters[0], filters[2], filters[3]
    if channels >= 0 and (channels % group or channels % deformable):
        raise node.error(
            f"data's {channels} channels must split into {group} groups and {deformable} deformable groups"
        )
    if channels >= 0 and filters[1] >= 0 and filters[1] * group != channels:
        raise node.error(f"filters {filters} take {filters[1]} channels per group; data's {channels} in {group} "
                         f"groups give {channels // group}")  # fmt: skip
    if out_channels >= 0 and out_channels % group:
        raise node.error(f"filters' {out_channels} output channels must split into {group} groups")
    taps = DYNAMIC if DYNAMIC in (kh, kw) else deformable * kh * kw
    if taps >= 0 and offsets[1] not in (DYNAMIC, 2 * taps):
        raise node.error(f"offsets has {offsets[1]} channels; {deformable} deformable groups of a {kh}x{kw} kernel "
                         f"need {2 * taps}")  # fmt: skip
    dims = window_output_dims(
        node, data.dims[2:], [kh, kw], attrs["strides"], attrs["dilations"], attrs["pads_begin"], attrs["pads_end"],
        attrs["auto_pad"],
    )  # fmt: skip
    expected = [[2 * taps if taps >= 0 else DYNAMIC, *dims]]
    if node.get_input_size() > 3:
        mask = expect_rank(node, 3, 4, what="mask")
        expected.append([taps, *dims])
        shapes = [offsets, mask]
    else:
        shapes = [offsets]
    for what, shape, want in zip(("offsets", "mask"), shapes, expected):
        if any(a >= 0 and b >= 0 and a != b for a, b in zip(shape.dims[1:], want)):
            raise node.error(f"{what} is {shape}; this data, kernel and these attributes need [N, {want[0]}, "
                             f"{want[1]}, {want[2]}]")  # fmt: skip
        if shape[0] >= 0 and data[0] >= 0 and shape[0] != data[0]:
            raise node.error(f"{what} has batch {shape[0]}; data has {data[0]}")
    return [(element_type, PartialShape([data[0], out_channels, *dims]))]


def _deformable_convolution_kernel(node: Node, data: Any, offsets: Any, filters: Any, mask: Any = None) -> Any:
    xp = namespace(data, offsets, filters)
    attrs = node.attrs
    x = widened(data)
    n, channels, height, width = data.shape
    out_channels, per_group, kh, kw = filters.shape
    groups, deformable = attrs["group"], attrs["deformable_group"]
    oh, ow = offsets.shape[2], offsets.shape[3]
    (sh, sw), (dh, dw) = attrs["strides"], attrs["dilations"]
    begin, _ = resolve_pads(
        attrs["auto_pad"], [height, width], [kh, kw], [sh, sw], [dh, dw], attrs["pads_begin"], attrs["pads_end"]
    )
    shift = xp.reshape(xp.astype(widened(offsets), x.dtype), (n, deformable, kh, kw, 2, oh, ow))
    rows = xp.reshape(xp.arange(oh, dtype=x.dtype) * sh - begin[0], (1, 1, 1, 1, oh, 1))
    cols = xp.reshape(xp.arange(ow, dtype=x.dtype) * sw - begin[1], (1, 1, 1, 1, 1, ow))
    tap_y = xp.reshape(xp.arange(kh, dtype=x.dtype) * dh, (1, 1, kh, 1, 1, 1))
    tap_x = xp.reshape(xp.arange(kw, dtype=x.dtype) * dw, (1, 1, 1, kw, 1, 1))
    y = rows + tap_y + shift[:, :, :, :, 0]  # [N, G, kh, kw, oh, ow]
    x_pos = cols + tap_x + shift[:, :, :, :, 1]
    grouped = xp.permute_dims(xp.reshape(x, (n, deformable, channels // deformable, height, width)), (0, 1, 3, 4, 2))
    batch = xp.reshape(xp.arange(n), (n, 1, 1, 1, 1, 1))
    group = xp.reshape(xp.arange(deformable), (1, deformable, 1, 1, 1, 1))
    y0, x0 = xp.floor(y), xp.floor(x_pos)
    if attrs["bilinear_interpolation_pad"]:  # zeros past the edges
        y_corners, x_corners, within = (y0, y0 + 1), (x0, x0 + 1), None
    else:  # nothing outside [0, H) x [0, W); inside, a neighbour past the edge is the edge pixel
        y_corners, x_corners = (y0, xp.minimum(y0 + 1, height - 1)), (x0, xp.minimum(x0 + 1, width - 1))
        within = (y >= 0) & (y < height) & (x_pos >= 0) & (x_pos < width)
    samples = None
    for yy, wy in zip(y_corners, (y0 + 1 - y, y - y0)):
        for xx, wx in zip(x_corners, (x0 + 1 - x_pos, x_pos - x0)):
            inside = (yy >= 0) & (yy <= height - 1) & (xx >= 0) & (xx <= width - 1)
            if within is not None:
                inside = inside & within
            yi = xp.astype(xp.clip(yy, 0, height - 1), xp.int32)
            xi = xp.astype(xp.clip(xx, 0, width - 1), xp.int32)
            weight = xp.where(inside, wy * wx, xp.zeros_like(wy))
            term = grouped[batch, group, yi, xi] * weight[..., None]  # [N, G, kh, kw, oh, ow, C/G]
            samples = term if samples is None else samples + term
    if mask is not None:
        samples = samples * xp.reshape(xp.astype(widened(mask), x.dtype), (n, deformable, kh, kw, oh, ow, 1))
    # columns [N, C, kh, kw, oh*ow], then per convolution group [N, group, C/group * kh * kw, oh*ow]
    columns = xp.permute_dims(samples, (0, 1, 6, 2, 3, 4, 5))
    columns = xp.reshape(columns, (n, groups, per_group * kh * kw, oh * ow))
    kernel = xp.reshape(xp.astype(widened(filters), x.dtype), (1, groups, out_channels // groups, per_group * kh * kw))
    out = xp.reshape(xp.matmul(kernel, columns), (n, out_channels, oh, ow))
    return xp.astype(out, data.dtype)


DEFORMABLE_CONVOLUTION = define(
    OpDef(
        "DeformableConvolution",
        "convolution",
        _deformable_convolution,
        inputs=(
            Input("data", REAL_TYPES, doc="[N, C, H, W]"),
            Input("offsets", REAL_TYPES, doc="[N, deformable_group * kH * kW * 2, oH, oW]: (y, x) per tap"),
            Input("filters", REAL_TYPES, doc="[OC, C / group, kH, kW]"),
            Input("mask", REAL_TYPES, optional=True, doc="[N, deformable_group * kH * kW, oH, oW]"),
        ),
        attrs=(
            Attr("strides", INTS, doc="[sH, sW]"),
            Attr("pads_begin", INTS, doc="[top, left]"),
            Attr("pads_end", INTS, doc="[bottom, right]"),
            Attr("dilations", INTS, doc="[dH, dW]"),
            Attr("auto_pad", LOWER_STRING, "explicit", AUTO_PADS, doc="explicit pads, same_upper, same_lower or valid"),
            Attr("group", INT, 1, doc="convolution groups"),
            Attr("deformable_group", INT, 1, doc="channel groups sharing one set of offsets"),
            Attr("bilinear_interpolation_pad", BOOL, False, doc="zeros past the edges (true) or the edge (false)"),
        ),
        version="opset8",
        evaluate=_deformable_convolution_kernel,
        doc="2-D deformable convolution: each kernel tap samples the input bilinearly at a learned offset.",
    )
)
