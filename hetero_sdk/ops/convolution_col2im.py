"""Col2Im (ONNX's, outside OpenVINO's opsets): sliding blocks, one per column, summed back into an image,
the inverse arrangement of im2col.

One array-API kernel serves every device: each kernel offset's blocks are spread over the image by the
strides (interleaving zeros) and shifted into place by padding, then summed, so no scatter is needed.
"""

from __future__ import annotations

import math
from itertools import product
from typing import Any

import numpy as np

from hetero_sdk.array_api import namespace
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import INTS, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import INDEX_TYPES, NUMERIC_TYPES, expect_rank
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = ["col2im", "col2im_geometry"]


def col2im(
    data: Any,
    image_shape: Any,
    block_shape: Any,
    dilations: list[int] | None = None,
    pads: list[int] | None = None,
    strides: list[int] | None = None,
    name: str | None = None,
) -> Node:
    """Sums sliding blocks back into images (``Col2Im``, ONNX opset 18).

    :param data: ``[N, C * prod(block_shape), L]``: one block per column, ``L`` blocks.
    :param image_shape: 1-D: the image's spatial dims (before ``pads`` are cut off).
    :param block_shape: 1-D: the block's spatial dims.
    :param dilations: per spatial axis (default 1); ``strides`` likewise.
    :param pads: ``[begins..., ends...]`` (default 0): padding the blocks reach into, cut off.
    """
    inputs = [as_output(data), as_output(image_shape), as_output(block_shape)]
    attrs = {"dilations": list(dilations or []), "pads": list(pads or []), "strides": list(strides or [])}
    return Node(COL2IM, inputs, attrs, name)


def col2im_geometry(attrs: dict[str, Any], image: list[int], block: list[int]) -> tuple[list[int], ...]:
    """``(dilations, begins, ends, strides, blocks per axis)`` of a Col2Im with these image and block dims."""
    rank = len(image)
    dilations = attrs["dilations"] or [1] * rank
    pads = attrs["pads"] or [0] * (2 * rank)
    strides = attrs["strides"] or [1] * rank
    begins, ends = pads[:rank], pads[rank:]
    counts = [
        (i + b + e - (d * (k - 1) + 1)) // s + 1
        for i, b, e, d, k, s in zip(image, begins, ends, dilations, block, strides)
    ]
    return dilations, begins, ends, strides, counts


def _col2im(node: Node) -> list[OutputSpec]:
    data = expect_rank(node, 0, 3, what="data")
    rank = expect_rank(node, 1, 1, what="image_shape")[0]
    expect_rank(node, 2, 1, what="block_shape")
    for key, factor in (("dilations", 1), ("strides", 1), ("pads", 2)):
        values = node.attrs[key]
        if values and rank != DYNAMIC and len(values) != factor * rank:
            raise node.error(
                f"attribute {key} has {len(values)} values; {factor * rank} are due for {rank} spatial axes"
            )
    image, block = constant_value(node.input_value(1)), constant_value(node.input_value(2))
    if image is None or block is None:
        spatial = [DYNAMIC] * max(rank, 0)
        return [(node.input_value(0).element_type, PartialShape([data[0], DYNAMIC, *spatial]))]
    image_dims, block_dims = [int(v) for v in image.reshape(-1)], [int(v) for v in block.reshape(-1)]
    size = math.prod(block_dims)
    if size < 1 or (data[1] != DYNAMIC and data[1] % size):
        raise node.error(f"data's dimension 1 ({data[1]}) must be a multiple of the block size {size} ({block_dims})")
    counts = col2im_geometry(node.attrs, image_dims, block_dims)[4]
    if any(c < 1 for c in counts) or (data[2] != DYNAMIC and data[2] != math.prod(counts)):
        raise node.error(f"data has {data[2]} blocks; an image {image_dims} with these blocks, pads, strides and "
                         f"dilations holds {counts} = {math.prod(counts)}")  # fmt: skip
    channels = DYNAMIC if data[1] == DYNAMIC else data[1] // size
    return [(node.input_value(0).element_type, PartialShape([data[0], channels, *image_dims]))]


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


def _col2im_kernel(node: Node, data: Any, image_shape: Any, block_shape: Any) -> Any:
    xp = namespace(data)
    image = [int(v) for v in np.asarray(image_shape).reshape(-1)]
    block = [int(v) for v in np.asarray(block_shape).reshape(-1)]
    dilations, begins, ends, strides, counts = col2im_geometry(node.attrs, image, block)
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
            Input("data", NUMERIC_TYPES, doc="[N, C * prod(block_shape), L]: one block per column"),
            Input("image_shape", INDEX_TYPES, decides_shape=True, doc="1-D: the image's spatial dims"),
            Input("block_shape", INDEX_TYPES, decides_shape=True, doc="1-D: the block's spatial dims"),
        ),
        attrs=(
            Attr("dilations", INTS, [], doc="per spatial axis (default 1)"),
            Attr("pads", INTS, [], doc="begins then ends (default 0): cut off the summed image"),
            Attr("strides", INTS, [], doc="per spatial axis (default 1)"),
        ),
        version="onnx18",
        evaluate=_col2im_kernel,
        doc="Sums sliding blocks (columns) back into images: the inverse arrangement of im2col.",
    )
)
