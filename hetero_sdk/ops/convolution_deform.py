"""DeformConv (ONNX opset 19's deformable convolution, with ONNX's semantics): each kernel tap reads the
input at its regular position plus a learned offset, bilinearly (zero outside the input), optionally
scaled by a mask; the samples are then convolved with the weights.

One array-API kernel serves every device: the samples of every tap gathered at once (four corners), then
one batched matrix product per convolution group.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetero_sdk.array_api import namespace, widened
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import INT, INTS, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output, constant
from hetero_sdk.ops.checks import REAL_TYPES, expect_rank
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = ["deform_conv"]


def deform_conv(
    data: Any,
    weights: Any,
    offsets: Any,
    bias: Any = None,
    mask: Any = None,
    strides: list[int] | None = None,
    pads: list[int] | None = None,
    dilations: list[int] | None = None,
    group: int = 1,
    offset_group: int = 1,
    name: str | None = None,
) -> Node:
    """A 2-D deformable convolution (``DeformConv``, ONNX opset 19).

    :param data: ``[N, C, H, W]``.
    :param weights: ``[OC, C / group, kH, kW]``.
    :param offsets: ``[N, offset_group * kH * kW * 2, oH, oW]``: per tap, the (y, x) offset of its sample.
    :param bias: ``[OC]`` (default 0).
    :param mask: ``[N, offset_group * kH * kW, oH, oW]``: multiplies each sample (default 1).
    :param strides: ``[sH, sW]`` (default 1); ``dilations`` likewise.
    :param pads: ``[top, left, bottom, right]`` (default 0).
    :param group: convolution groups; ``offset_group``: channel groups sharing one set of offsets.
    """
    inputs = [as_output(data), as_output(weights), as_output(offsets)]
    if bias is not None or mask is not None:
        inputs.append(as_output(bias) if bias is not None else _zeros_like_bias(weights))
    if mask is not None:
        inputs.append(as_output(mask))
    attrs = {
        "strides": list(strides or [1, 1]),
        "pads": list(pads or [0, 0, 0, 0]),
        "dilations": list(dilations or [1, 1]),
        "group": int(group),
        "offset_group": int(offset_group),
    }
    return Node(DEFORM_CONV, inputs, attrs, name)


def _zeros_like_bias(weights: Any) -> Any:
    w = as_output(weights)
    return constant(np.zeros(w.partial_shape[0], w.element_type.numpy)).output(0)


def _output_dims(attrs: dict[str, Any], size: list[int], kernel: list[int]) -> list[int]:
    pads, strides, dilations = attrs["pads"], attrs["strides"], attrs["dilations"]
    return [
        DYNAMIC if s < 0 or k < 0 else (s + pads[a] + pads[2 + a] - dilations[a] * (k - 1) - 1) // strides[a] + 1
        for a, (s, k) in enumerate(zip(size, kernel))
    ]


def _deform_conv(node: Node) -> list[OutputSpec]:
    data = expect_rank(node, 0, 4, what="data")
    weights = expect_rank(node, 1, 4, what="weights")
    offsets = expect_rank(node, 2, 4, what="offsets")
    attrs = node.attrs
    for key, count in (("strides", 2), ("dilations", 2), ("pads", 4)):
        if len(attrs[key]) != count:
            raise node.error(f"attribute {key}={attrs[key]} needs {count} values for 2-D data")
    group, offset_group = attrs["group"], attrs["offset_group"]
    kh, kw = weights[2], weights[3]
    if data[1] >= 0 and (
        data[1] % group or data[1] % offset_group or (weights[1] >= 0 and weights[1] * group != data[1])
    ):
        raise node.error(f"data's {data[1]} channels must split into {group} groups of weights' {weights[1]} "
                         f"and into {offset_group} offset groups")  # fmt: skip
    if min(kh, kw) >= 0 and offsets[1] not in (DYNAMIC, offset_group * kh * kw * 2):
        raise node.error(f"offsets has {offsets[1]} channels; {offset_group} offset groups of a {kh}x{kw} kernel "
                         f"need {offset_group * kh * kw * 2}")  # fmt: skip
    dims = _output_dims(attrs, [data[2], data[3]], [kh, kw])
    return [(node.input_value(0).element_type, PartialShape([data[0], weights[0], *dims]))]


def _deform_conv_kernel(node: Node, data: Any, weights: Any, offsets: Any, bias: Any = None, mask: Any = None) -> Any:
    xp = namespace(data, weights, offsets)
    attrs = node.attrs
    x = widened(data)
    n, channels, height, width = data.shape
    out_channels, per_group, kh, kw = weights.shape
    groups, offset_groups = attrs["group"], attrs["offset_group"]
    oh, ow = offsets.shape[2], offsets.shape[3]
    (sh, sw), (dh, dw), pads = attrs["strides"], attrs["dilations"], attrs["pads"]
    shift = xp.reshape(xp.astype(widened(offsets), x.dtype), (n, offset_groups, kh, kw, 2, oh, ow))
    rows = xp.reshape(xp.arange(oh, dtype=x.dtype) * sh - pads[0], (1, 1, 1, 1, oh, 1))
    cols = xp.reshape(xp.arange(ow, dtype=x.dtype) * sw - pads[1], (1, 1, 1, 1, 1, ow))
    tap_y = xp.reshape(xp.arange(kh, dtype=x.dtype) * dh, (1, 1, kh, 1, 1, 1))
    tap_x = xp.reshape(xp.arange(kw, dtype=x.dtype) * dw, (1, 1, 1, kw, 1, 1))
    y = rows + tap_y + shift[:, :, :, :, 0]  # [N, G, kh, kw, oh, ow]
    x_pos = cols + tap_x + shift[:, :, :, :, 1]
    grouped = xp.permute_dims(
        xp.reshape(x, (n, offset_groups, channels // offset_groups, height, width)), (0, 1, 3, 4, 2)
    )
    batch = xp.reshape(xp.arange(n), (n, 1, 1, 1, 1, 1))
    group = xp.reshape(xp.arange(offset_groups), (1, offset_groups, 1, 1, 1, 1))
    y0, x0 = xp.floor(y), xp.floor(x_pos)
    samples = None
    for yy, wy in ((y0, y0 + 1 - y), (y0 + 1, y - y0)):
        for xx, wx in ((x0, x0 + 1 - x_pos), (x0 + 1, x_pos - x0)):
            inside = (yy >= 0) & (yy <= height - 1) & (xx >= 0) & (xx <= width - 1)
            yi = xp.astype(xp.clip(yy, 0, height - 1), xp.int32)
            xi = xp.astype(xp.clip(xx, 0, width - 1), xp.int32)
            weight = xp.where(inside, wy * wx, xp.zeros_like(wy))
            term = grouped[batch, group, yi, xi] * weight[..., None]  # [N, G, kh, kw, oh, ow, C/G]
            samples = term if samples is None else samples + term
    if mask is not None:
        samples = samples * xp.reshape(xp.astype(widened(mask), x.dtype), (n, offset_groups, kh, kw, oh, ow, 1))
    # columns [N, C, kh, kw, oh*ow], then per convolution group [N, group, C/group * kh * kw, oh*ow]
    columns = xp.permute_dims(samples, (0, 1, 6, 2, 3, 4, 5))
    columns = xp.reshape(columns, (n, groups, per_group * kh * kw, oh * ow))
    kernel = xp.reshape(xp.astype(widened(weights), x.dtype), (1, groups, out_channels // groups, per_group * kh * kw))
    out = xp.reshape(xp.matmul(kernel, columns), (n, out_channels, oh, ow))
    if bias is not None:
        out = out + xp.reshape(xp.astype(widened(bias), x.dtype), (1, out_channels, 1, 1))
    return xp.astype(out, data.dtype)


DEFORM_CONV = define(
    OpDef(
        "DeformConv",
        "convolution",
        _deform_conv,
        inputs=(
            Input("data", REAL_TYPES, doc="[N, C, H, W]"),
            Input("weights", REAL_TYPES, doc="[OC, C / group, kH, kW]"),
            Input("offsets", REAL_TYPES, doc="[N, offset_group * kH * kW * 2, oH, oW]: (y, x) per tap"),
            Input("bias", REAL_TYPES, optional=True, doc="[OC]"),
            Input("mask", REAL_TYPES, optional=True, doc="[N, offset_group * kH * kW, oH, oW]"),
        ),
        attrs=(
            Attr("strides", INTS, [1, 1], doc="[sH, sW]"),
            Attr("pads", INTS, [0, 0, 0, 0], doc="[top, left, bottom, right]"),
            Attr("dilations", INTS, [1, 1], doc="[dH, dW]"),
            Attr("group", INT, 1, doc="convolution groups"),
            Attr("offset_group", INT, 1, doc="channel groups sharing one set of offsets"),
        ),
        version="onnx19",
        evaluate=_deform_conv_kernel,
        doc="2-D deformable convolution: each kernel tap samples the input bilinearly at a learned offset.",
    )
)
