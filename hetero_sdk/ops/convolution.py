"""Convolution ops: Convolution, GroupConvolution, ConvolutionBackpropData; and the window geometry
(padding, output sizes) that the pooling ops and every device's kernels share.

Layouts are OpenVINO's: data ``[N, C, spatial...]``, filters ``[C_OUT, C_IN, kernel...]`` (grouped:
``[GROUPS, C_OUT/GROUPS, C_IN/GROUPS, kernel...]``; backprop: ``[C_IN, C_OUT, kernel...]``), with
1, 2 or 3 spatial dimensions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import INTS, LOWER_STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import (
    INDEX_TYPES,
    NUMERIC_TYPES,
    dim_mul,
    dims_equal_or_dynamic,
    expect_rank,
    expect_same_types,
)
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = [
    "AUTO_PADS", "CONVOLUTIONS", "CONVOLUTION_BACKPROP_DATA", "backprop_geometry", "check_window_attrs",
    "convolution", "convolution_backprop_data", "group_convolution", "resolve_pads", "window_output_dims",
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
