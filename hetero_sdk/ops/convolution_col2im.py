"""Col2Im (OpenVINO opset 15): sliding blocks, one per column, summed back into a 2-D image, the inverse
arrangement of im2col (``torch.nn.Fold``).

One array-API kernel serves every device: each kernel offset's blocks are spread over the image by the
strides (interleaving zeros) and shifted into place by padding, then summed, so no scatter is needed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import product
from typing import Any

import numpy as np

from hetero_sdk.array_api import namespace
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import INTS, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import INDEX_TYPES, NUMERIC_TYPES, expect_rank
from hetero_sdk.ops.convolution import check_window_attrs
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = ["col2im", "col2im_geometry"]


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
