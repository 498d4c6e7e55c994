"""Convolution ops: Convolution, GroupConvolution, ConvolutionBackpropData, DeformableConvolution and
Col2Im; and the window geometry
(padding, output sizes) that the pooling ops and every device's kernels share.

Layouts are OpenVINO's: data ``[N, C, spatial...]``, filters ``[C_OUT, C_IN, kernel...]`` (grouped:
``[GROUPS, C_OUT/GROUPS, C_IN/GROUPS, kernel...]``; backprop: ``[C_IN, C_OUT, kernel...]``), with
1, 2 or 3 spatial dimensions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import product
from typing import Any

import numpy as np

from hetero_sdk.array_api import namespace, widened
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import BOOL, INT, INTS, LOWER_STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import (
    INDEX_TYPES,
    NUMERIC_TYPES,
    REAL_TYPES,
    dim_mul,
    dims_equal_or_dynamic,
    expect_rank,
    expect_same_types,
)
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = [
    "AUTO_PADS", "CONVOLUTIONS", "CONVOLUTION_BACKPROP_DATA", "backprop_geometry", "check_window_attrs", "col2im",
    "col2im_geometry", "convolution", "convolution_backprop_data", "deformable_convolution", "group_convolution",
    "resolve_pads", "window_output_dims",
]  # fmt: skip

AUTO_PADS = ("explicit", "same_upper", "same_lower", "valid")
"""The values of ``auto_pad``: pads from the attributes, pads that keep ``ceil(size / stride)``
outputs (an odd total puts the extra pad at the end for ``same_upper``, at the beginning for
``same_lower``), or no padding."""


def convolution(
    data: Any,
    filters: Any,
    strides: Sequence[int],
    pads_begin: Sequence[int],
    pads_end: Sequence[int],
    dilations: Sequence[int],
    auto_pad: str = "explicit",
    name: str | None = None,
) -> Node:
    """1D, 2D or 3D convolution (``Convolution``), really a cross-correlation as in every framework.

    Each spatial output size is ``floor((size + pad_begin + pad_end - dilated_kernel) / stride) + 1``
    where ``dilated_kernel = (kernel - 1) * dilation + 1``.

    :param data: ``[N, C_IN, spatial...]``.
    :param filters: ``[C_OUT, C_IN, kernel...]``, of the data's element type.
    :param strides: step per spatial axis (positive).
    :param pads_begin: zeros added before each spatial axis (negative values crop).
    :param pads_end: zeros added after each spatial axis (negative values crop).
    :param dilations: distance between kernel taps per spatial axis (positive).
    :param auto_pad: one of :data:`AUTO_PADS`; anything but ``explicit`` ignores the pads.
    :param name: the node's friendly name.
    """
    return _conv_node("Convolution", data, filters, strides, pads_begin, pads_end, dilations, auto_pad, name)


def group_convolution(
    data: Any,
    filters: Any,
    strides: Sequence[int],
    pads_begin: Sequence[int],
    pads_end: Sequence[int],
    dilations: Sequence[int],
    auto_pad: str = "explicit",
    name: str | None = None,
) -> Node:
    """Grouped convolution (``GroupConvolution``): channels split into ``GROUPS`` independent convolutions.

    :param data: ``[N, GROUPS * C_IN, spatial...]``.
    :param filters: ``[GROUPS, C_OUT, C_IN, kernel...]``; the output has ``GROUPS * C_OUT`` channels.
    :param strides: as in :func:`convolution`, as are the other parameters.
    :param pads_begin: as in :func:`convolution`.
    :param pads_end: as in :func:`convolution`.
    :param dilations: as in :func:`convolution`.
    :param auto_pad: as in :func:`convolution`.
    :param name: the node's friendly name.
    """
    return _conv_node("GroupConvolution", data, filters, strides, pads_begin, pads_end, dilations, auto_pad, name)


def convolution_backprop_data(
    data: Any,
    filters: Any,
    strides: Sequence[int],
    output_shape: Any = None,
    pads_begin: Sequence[int] | None = None,
    pads_end: Sequence[int] | None = None,
    dilations: Sequence[int] | None = None,
    auto_pad: str = "explicit",
    output_padding: Sequence[int] | None = None,
    name: str | None = None,
) -> Node:
    """Transposed convolution (``ConvolutionBackpropData``): the gradient of a convolution wrt its data.

    Without ``output_shape`` each spatial output size is
    ``stride * (size - 1) + dilated_kernel - pad_begin - pad_end + output_padding``, pads being zero
    unless ``auto_pad`` is ``explicit``. With ``output_shape``, the output has exactly that spatial
    shape; the first ``pad_begin`` elements of the full result are dropped, where ``pad_begin`` is the
    attribute (``explicit``), 0 (``valid``), or half the surplus rounded up (``same_upper``) or down
    (``same_lower``), as OpenVINO computes it.

    :param data: ``[N, C_IN, spatial...]``.
    :param filters: ``[C_IN, C_OUT, kernel...]``, of the data's element type.
    :param strides: step per spatial axis of the output (positive).
    :param output_shape: optional 1-D integer tensor (or list) with the output's spatial shape.
    :param pads_begin: elements cropped at the start of each output axis (default zeros).
    :param pads_end: elements cropped at the end of each output axis (default zeros).
    :param dilations: distance between kernel taps (default ones).
    :param auto_pad: one of :data:`AUTO_PADS`.
    :param output_padding: elements added at the end of each output axis (default zeros).
    :param name: the node's friendly name.
    """
    n = len(strides)
    inputs = [as_output(data)]
    inputs.append(as_output(filters, like=inputs[0]))
    if output_shape is not None:
        is_list = isinstance(output_shape, (list, tuple))
        inputs.append(as_output(np.asarray(output_shape, np.int64) if is_list else output_shape))
    attrs = {
        "strides": list(strides),
        "pads_begin": list(pads_begin) if pads_begin is not None else [0] * n,
        "pads_end": list(pads_end) if pads_end is not None else [0] * n,
        "dilations": list(dilations) if dilations is not None else [1] * n,
        "auto_pad": str(auto_pad).lower(),
        "output_padding": list(output_padding) if output_padding is not None else [0] * n,
    }
    return Node(CONVOLUTION_BACKPROP_DATA, inputs, attrs, name)


def _conv_node(
    type_name: str,
    data: Any,
    filters: Any,
    strides: Sequence[int],
    pads_begin: Sequence[int],
    pads_end: Sequence[int],
    dilations: Sequence[int],
    auto_pad: str,
    name: str | None,
) -> Node:
    inputs = [as_output(data)]
    inputs.append(as_output(filters, like=inputs[0]))
    attrs = {
        "strides": list(strides),
        "pads_begin": list(pads_begin),
        "pads_end": list(pads_end),
        "dilations": list(dilations),
        "auto_pad": str(auto_pad).lower(),
    }
    return Node(CONVOLUTIONS[type_name], inputs, attrs, name)


# -- window geometry, shared with pooling and device kernels ------------------------------------------


def resolve_pads(
    auto_pad: str,
    sizes: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pads_begin: Sequence[int],
    pads_end: Sequence[int],
) -> tuple[list[int], list[int]]:
    """The pads a forward window op (convolution, pooling) applies, after ``auto_pad``.

    :param sizes: the spatial input sizes; ``-1`` (dynamic) gives ``-1`` pads for the ``same_*`` modes.
    :param kernel: the undilated kernel sizes.
    :returns: ``(pads_begin, pads_end)``.
    """
    if auto_pad == "explicit":
        return list(pads_begin), list(pads_end)
    if auto_pad == "valid":
        return [0] * len(sizes), [0] * len(sizes)
    begin, end = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations):
        if DYNAMIC in (size, k):
            begin.append(DYNAMIC)
            end.append(DYNAMIC)
            continue
        total = max(0, (-(-size // s) - 1) * s + (k - 1) * d + 1 - size)
        small, large = total // 2, total - total // 2
        begin.append(small if auto_pad == "same_upper" else large)
        end.append(large if auto_pad == "same_upper" else small)
    return begin, end


def window_output_dims(
    node: Node,
    sizes: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pads_begin: Sequence[int],
    pads_end: Sequence[int],
    auto_pad: str,
    ceil_mode: bool = False,
) -> list[int]:
    """The spatial output sizes of a forward window op, ``-1`` where an input size is dynamic.

    :raises ModelValidationError: when the dilated kernel is larger than the padded input.
    """
    begin, end = resolve_pads(auto_pad, sizes, kernel, strides, dilations, pads_begin, pads_end)
    dims = []
    for axis, (size, k, s, d, pb, pe) in enumerate(zip(sizes, kernel, strides, dilations, begin, end)):
        if DYNAMIC in (size, k):
            dims.append(DYNAMIC)
            continue
        extent, padded = (k - 1) * d + 1, size + pb + pe
        if extent > padded:
            raise node.error(
                f"the dilated kernel ({extent}) is larger than the padded input ({padded}) on spatial axis {axis}"
            )
        span = padded - extent
        dims.append((-(-span // s) if ceil_mode else span // s) + 1)
    return dims


def backprop_geometry(
    node: Node,
    sizes: Sequence[int],
    kernel: Sequence[int],
    output_shape: Sequence[int] | None,
) -> tuple[list[int], list[int]]:
    """Where a ConvolutionBackpropData output window lies in the full transposed-convolution result.

    The full result has ``stride * (size - 1) + dilated_kernel`` elements per axis; the output is
    the window of it that starts at ``pads_begin`` (elements past the full result are zeros).

    :param sizes: the spatial input sizes (``-1`` where dynamic).
    :param output_shape: the value of the ``output_shape`` input, None when absent or unknown.
    :returns: ``(pads_begin, output_sizes)``, ``-1`` where unknown.
    """
    attrs = node.attrs
    auto_pad = attrs["auto_pad"]
    rows = zip(sizes, kernel, attrs["strides"], attrs["dilations"], attrs["pads_begin"], attrs["pads_end"])
    begins, outs = [], []
    for i, (size, k, s, d, pb, pe) in enumerate(rows):
        pad = attrs["output_padding"][i]
        full = DYNAMIC if DYNAMIC in (size, k) else s * (size - 1) + (k - 1) * d + 1
        if output_shape is not None:
            out = int(output_shape[i])
            if auto_pad == "explicit":
                begin = pb
            elif auto_pad == "valid":
                begin = 0
            elif full == DYNAMIC:
                begin = DYNAMIC
            else:
                total = max(0, full + pad - out)
                begin = total - total // 2 if auto_pad == "same_upper" else total // 2
        else:
            begin, end = (pb, pe) if auto_pad == "explicit" else (0, 0)
            out = DYNAMIC
            if full != DYNAMIC:
                out = full - begin - end + pad
                if out < 1:
                    raise node.error(f"the output would have {out} elements on spatial axis {i}; reduce the pads")
        begins.append(begin)
        outs.append(out)
    return begins, outs


# -- inference ----------------------------------------------------------------------------------------


def check_window_attrs(node: Node, n: int, *names: str, negative_pads: bool = False) -> None:
    """Validates the int-list window attributes for ``n`` spatial axes (their kinds are declared)."""
    for attr in names:
        values = node.attrs[attr]
        if len(values) != n:
            raise node.error(f"attribute {attr}={values} must have {n} values")
        if attr in ("strides", "dilations", "kernel_shape") and any(v < 1 for v in values):
            raise node.error(f"attribute {attr}={values} must hold positive integers")
        if attr not in ("strides", "dilations", "kernel_shape") and not negative_pads and any(v < 0 for v in values):
            raise node.error(f"attribute {attr}={values} must hold non-negative integers")


def _spatial_rank(node: Node) -> tuple[PartialShape, int]:
    data = expect_rank(node, 0, 3, 4, 5, what="data")
    return data, data.rank - 2


def _check_kernel(node: Node, kernel: Sequence[int]) -> None:
    if 0 in kernel:
        raise node.error(f"filters have an empty spatial dimension (kernel {list(kernel)})")


def _infer_forward(node: Node, grouped: bool) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1)
    data, n = _spatial_rank(node)
    filters = expect_rank(node, 1, data.rank + grouped, what="filters")
    check_window_attrs(node, n, "strides", "dilations", "pads_begin", "pads_end", negative_pads=True)
    if grouped:
        groups, c_out_g, c_in_g = filters[0], filters[1], filters[2]
        c_in, c_out, kernel = dim_mul(groups, c_in_g), dim_mul(groups, c_out_g), filters.dims[3:]
        if groups != DYNAMIC and data[1] != DYNAMIC and data[1] % groups:
            raise node.error(f"data has {data[1]} channels, not a multiple of the {groups} groups of filters {filters}")
    else:
        c_out, c_in, kernel = filters[0], filters[1], filters.dims[2:]
    if not dims_equal_or_dynamic(data[1], c_in):
        raise node.error(f"data {data} has {data[1]} input channels; filters {filters} expect {c_in}")
    _check_kernel(node, kernel)
    attrs = node.attrs
    spatial = window_output_dims(
        node, data.dims[2:], kernel, attrs["strides"], attrs["dilations"], attrs["pads_begin"], attrs["pads_end"],
        attrs["auto_pad"],
    )  # fmt: skip
    return [(element_type, PartialShape([data[0], c_out, *spatial]))]


def _convolution(node: Node) -> list[OutputSpec]:
    return _infer_forward(node, grouped=False)


def _group_convolution(node: Node) -> list[OutputSpec]:
    return _infer_forward(node, grouped=True)


def _convolution_backprop_data(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1)
    data, n = _spatial_rank(node)
    filters = expect_rank(node, 1, data.rank, what="filters")
    for attr in ("pads_begin", "pads_end", "dilations", "output_padding"):
        if not node.attrs[attr]:
            node.attrs[attr] = [1 if attr == "dilations" else 0] * n
    check_window_attrs(node, n, "strides", "dilations", "pads_begin", "pads_end", "output_padding")
    if not dims_equal_or_dynamic(data[1], filters[0]):
        raise node.error(f"data {data} has {data[1]} input channels; filters {filters} expect {filters[0]}")
    kernel = filters.dims[2:]
    _check_kernel(node, kernel)
    output_shape = None
    if node.get_input_size() == 3:
        shape_of_shape = expect_rank(node, 2, 1, what="output_shape")
        if shape_of_shape[0] not in (n, DYNAMIC):
            raise node.error(f"output_shape has {shape_of_shape[0]} values; expected {n}, one per spatial axis")
        value = constant_value(node.input_value(2))
        if value is not None:
            output_shape = [int(v) for v in value.reshape(-1)]
            if len(output_shape) != n or any(v < 1 for v in output_shape):
                raise node.error(f"output_shape {output_shape} must hold {n} positive sizes")
    if node.get_input_size() == 3 and output_shape is None:
        spatial = [DYNAMIC] * n
    else:
        _, spatial = backprop_geometry(node, data.dims[2:], kernel, output_shape)
    return [(element_type, PartialShape([data[0], filters[1], *spatial]))]


# -- definitions ----------------------------------------------------------------------------------------

_WINDOW = (
    Attr("strides", INTS, doc="step per spatial axis (positive)"),
    Attr("pads_begin", INTS, doc="zeros added before each spatial axis (negative crops)"),
    Attr("pads_end", INTS, doc="zeros added after each spatial axis (negative crops)"),
    Attr("dilations", INTS, doc="distance between kernel taps per spatial axis (positive)"),
    Attr("auto_pad", LOWER_STRING, "explicit", AUTO_PADS, doc="explicit pads, same_upper, same_lower or valid"),
)
_OPERANDS = (Input("data", NUMERIC_TYPES, doc="[N, C_IN, spatial...]"), Input("filters", NUMERIC_TYPES))

CONVOLUTIONS = {
    "Convolution": define(
        OpDef(
            "Convolution",
            "convolution",
            lambda node: _infer_forward(node, grouped=False),
            _OPERANDS,
            _WINDOW,
            doc="1D, 2D or 3D convolution (a cross-correlation); filters [C_OUT, C_IN, kernel...].",
        )
    ),
    "GroupConvolution": define(
        OpDef(
            "GroupConvolution",
            "convolution",
            lambda node: _infer_forward(node, grouped=True),
            _OPERANDS,
            _WINDOW,
            doc="Grouped convolution; filters [GROUPS, C_OUT, C_IN, kernel...].",
        )
    ),
}
"""Convolution and GroupConvolution by type name."""

CONVOLUTION_BACKPROP_DATA = define(
    OpDef(
        "ConvolutionBackpropData",
        "convolution",
        _convolution_backprop_data,
        inputs=(
            *_OPERANDS,
            Input("output_shape", INDEX_TYPES, optional=True, decides_shape=True, doc="the output's spatial shape"),
        ),
        attrs=(
            Attr("strides", INTS, doc="step per spatial axis of the output"),
            Attr("pads_begin", INTS, [], doc="elements cropped at the start of each output axis"),
            Attr("pads_end", INTS, [], doc="elements cropped at the end of each output axis"),
            Attr("dilations", INTS, [], doc="distance between kernel taps (ones by default)"),
            Attr("auto_pad", LOWER_STRING, "explicit", AUTO_PADS),
            Attr("output_padding", INTS, [], doc="elements added at the end of each output axis"),
        ),
        doc="Transposed convolution: the gradient of a convolution with respect to its data.",
    )
)


# -- DeformableConvolution (OpenVINO opset 8): each kernel tap reads the input at its regular position plus
# a learned offset, bilinearly, optionally scaled by a mask; the samples are then convolved with the filters.
#
# One array-API kernel serves every device: the samples of every tap gathered at once (four corners), then
# one batched matrix product per convolution group.


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


# -- Col2Im (OpenVINO opset 15): sliding blocks, one per column, summed back into a 2-D image, the inverse
# arrangement of im2col (``torch.nn.Fold``).
#
# One array-API kernel serves every device: each kernel offset's blocks are spread over the image by the
# strides (interleaving zeros) and shifted into place by padding, then summed, so no scatter is needed.


def col2im(
    data: Any,
    output_size: Any,
    kernel_size: Any,
    strides: Sequence[int] | None = None,
    dilations: Sequence[int] | None = None,
    pads_begin: Sequence[int] | None = None,
    pads_end: Sequence[int] | None = None,
    name: str | None = None,
) -> Node:
    """Sums sliding blocks back into 2-D images (``Col2Im``, OpenVINO opset 15).

    :param data: ``[N, C * kH * kW, L]`` (or ``[C * kH * kW, L]``, unbatched): one block per column, ``L``
        blocks, as many as fit the padded image.
    :param output_size: ``[H, W]``: the image's spatial dims.
    :param kernel_size: ``[kH, kW]``: the block's spatial dims.
    :param strides: ``[sH, sW]`` between blocks (default ``[1, 1]``).
    :param dilations: ``[dH, dW]`` between a block's elements (default ``[1, 1]``).
    :param pads_begin: ``[top, left]`` (default 0): padding the blocks reach into, cut off; ``pads_end``:
        ``[bottom, right]`` likewise.
    :param name: the node's friendly name.
    :returns: the node; its output is ``[N, C, H, W]`` (``[C, H, W]`` unbatched).
    """
    inputs = [as_output(data), as_output(output_size), as_output(kernel_size)]
    attrs = {
        "strides": list(strides or [1, 1]),
        "dilations": list(dilations or [1, 1]),
        "pads_begin": list(pads_begin or [0, 0]),
        "pads_end": list(pads_end or [0, 0]),
    }
    return Node(COL2IM, inputs, attrs, name)


def col2im_geometry(attrs: dict[str, Any], image: list[int], block: list[int]) -> list[int]:
    """The blocks per spatial axis of a Col2Im with these attributes and image and block dims."""
    rows = zip(image, attrs["pads_begin"], attrs["pads_end"], attrs["dilations"], block, attrs["strides"])
    return [(i + b + e - (d * (k - 1) + 1)) // s + 1 for i, b, e, d, k, s in rows]


def _col2im(node: Node) -> list[OutputSpec]:
    data = expect_rank(node, 0, 2, 3, what="data")
    for index, what in ((1, "output_size"), (2, "kernel_size")):
        count = expect_rank(node, index, 1, what=what)[0]
        if count not in (2, DYNAMIC):
            raise node.error(f"{what} must hold 2 values (the image is 2-D), not {count}")
    check_window_attrs(node, 2, "strides", "dilations", "pads_begin", "pads_end")
    batch, (columns, blocks) = ([data[0]] if data.rank == 3 else []), data.dims[-2:]
    image, kernel = constant_value(node.input_value(1)), constant_value(node.input_value(2))
    size = DYNAMIC
    if kernel is not None:
        kernel_dims = [int(v) for v in kernel.reshape(-1)]
        size = math.prod(kernel_dims)
        if size < 1 or (columns != DYNAMIC and columns % size):
            raise node.error(
                f"data's {columns} rows must be a multiple of the kernel's {size} elements ({kernel_dims})"
            )
    channels = DYNAMIC if DYNAMIC in (columns, size) else columns // size
    if image is None:
        return [(node.input_value(0).element_type, PartialShape([*batch, channels, DYNAMIC, DYNAMIC]))]
    image_dims = [int(v) for v in image.reshape(-1)]
    if kernel is not None:
        counts = col2im_geometry(node.attrs, image_dims, kernel_dims)
        if any(c < 1 for c in counts) or (blocks != DYNAMIC and blocks != math.prod(counts)):
            raise node.error(f"data has {blocks} blocks; an image {image_dims} with these blocks, pads, strides and "
                             f"dilations holds {counts} = {math.prod(counts)}")  # fmt: skip
    return [(node.input_value(0).element_type, PartialShape([*batch, channels, *image_dims]))]


def _spread(xp: Any, piece: Any, axis: int, stride: int, before: int, total: int) -> Any:
    """``piece``'s entries along ``axis`` placed ``stride`` apart from position ``before``, zeros elsewhere,
    ``total`` long."""
    count = piece.shape[axis]
    if stride > 1 and count > 1:
        spaced = xp.stack([piece] + [xp.zeros_like(piece)] * (stride - 1), axis=axis + 1)
        shape = list(piece.shape)
        shape[axis] = count * stride
        piece = xp.reshape(spaced, tuple(shape))
        piece = xp.take(piece, xp.arange((count - 1) * stride + 1), axis=axis)
    parts = []
    for length in (before, total - before - piece.shape[axis]):
        if length > 0:
            shape = list(piece.shape)
            shape[axis] = length
            parts.append(xp.zeros(tuple(shape), dtype=piece.dtype))
    return xp.concat([parts[0], piece, *parts[1:]] if before > 0 else [piece, *parts], axis=axis)


def _col2im_kernel(node: Node, data: Any, output_size: Any, kernel_size: Any) -> Any:
    xp = namespace(data)
    if data.ndim == 2:
        return _col2im_kernel(node, data[None, ...], output_size, kernel_size)[0, ...]
    image = [int(v) for v in np.asarray(output_size).reshape(-1)]
    block = [int(v) for v in np.asarray(kernel_size).reshape(-1)]
    attrs = node.attrs
    dilations, begins, ends, strides = attrs["dilations"], attrs["pads_begin"], attrs["pads_end"], attrs["strides"]
    counts = col2im_geometry(attrs, image, block)
    batch, channels = data.shape[0], data.shape[1] // math.prod(block)
    columns = xp.reshape(data, (batch, channels, *block, *counts))
    padded = [i + b + e for i, b, e in zip(image, begins, ends)]
    result = xp.zeros((batch, channels, *padded), dtype=data.dtype)
    for offsets in product(*(range(k) for k in block)):
        piece = columns[(slice(None), slice(None), *offsets)]
        for axis, (offset, dilation, stride, total) in enumerate(zip(offsets, dilations, strides, padded)):
            piece = _spread(xp, piece, 2 + axis, stride, offset * dilation, total)
        result = result + piece
    crop = tuple(slice(b, b + i) for b, i in zip(begins, image))
    return result[(slice(None), slice(None), *crop)]


COL2IM = define(
    OpDef(
        "Col2Im",
        "convolution",
        _col2im,
        inputs=(
            Input("data", NUMERIC_TYPES, doc="[N, C * kH * kW, L] or [C * kH * kW, L]: one block per column"),
            Input("output_size", INDEX_TYPES, decides_shape=True, doc="[H, W]: the image's spatial dims"),
            Input("kernel_size", INDEX_TYPES, decides_shape=True, doc="[kH, kW]: the block's spatial dims"),
        ),
        attrs=(
            Attr("strides", INTS, [1, 1], doc="[sH, sW] between blocks"),
            Attr("dilations", INTS, [1, 1], doc="[dH, dW] between a block's elements"),
            Attr("pads_begin", INTS, [0, 0], doc="[top, left]: cut off the summed image"),
            Attr("pads_end", INTS, [0, 0], doc="[bottom, right]: cut off the summed image"),
        ),
        version="opset15",
        evaluate=_col2im_kernel,
        doc="Sums sliding blocks (columns) back into 2-D images: the inverse arrangement of im2col.",
    )
)
