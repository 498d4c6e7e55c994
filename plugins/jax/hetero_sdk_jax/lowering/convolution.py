"""Lowerings of Convolution, GroupConvolution and ConvolutionBackpropData on ``lax.conv_general_dilated``.

Layouts are OpenVINO's (``NC...`` data, ``OI...`` filters), handed to XLA as dimension numbers; XLA
picks the device's own layout.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax.numpy as jnp
from hetero_sdk import Node
from hetero_sdk.ops import backprop_geometry, resolve_pads
from jax import lax

from hetero_sdk_jax.lowering.linear_algebra import accumulation
from hetero_sdk_jax.lowering.registry import lowering, precision_of

_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def conv(
    x: jnp.ndarray,
    w: jnp.ndarray,
    strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    dilations: Sequence[int],
    lhs_dilation: Sequence[int] | None = None,
    groups: int = 1,
) -> jnp.ndarray:
    """A cross-correlation of ``x`` ``[N, C, ...]`` with ``w`` ``[O, I, ...]``; negative pads crop."""
    spatial = _SPATIAL[x.ndim - 2]
    return lax.conv_general_dilated(
        x,
        w,
        window_strides=tuple(strides),
        padding=[(int(b), int(e)) for b, e in padding],
        lhs_dilation=None if lhs_dilation is None else tuple(lhs_dilation),
        rhs_dilation=tuple(dilations),
        dimension_numbers=(f"NC{spatial}", f"OI{spatial}", f"NC{spatial}"),
        feature_group_count=groups,
        precision=precision_of(x.dtype),
        preferred_element_type=accumulation(x.dtype),
    )


@lowering("Convolution", "GroupConvolution")
def convolution(node: Node, x: jnp.ndarray, w: jnp.ndarray) -> jnp.ndarray:
    attrs = node.attrs
    groups = 1
    if node.type_name == "GroupConvolution":
        groups = w.shape[0]
        w = w.reshape((groups * w.shape[1], *w.shape[2:]))
    strides, dilations = attrs["strides"], attrs["dilations"]
    begin, end = resolve_pads(
        attrs["auto_pad"], x.shape[2:], w.shape[2:], strides, dilations, attrs["pads_begin"], attrs["pads_end"]
    )
    return conv(x, w, strides, list(zip(begin, end)), dilations, groups=groups)


@lowering("ConvolutionBackpropData")
def convolution_backprop_data(node: Node, x: jnp.ndarray, w: jnp.ndarray, output_shape: object = None) -> jnp.ndarray:
    attrs = node.attrs
    kernel, sizes = w.shape[2:], x.shape[2:]
    strides, dilations = attrs["strides"], attrs["dilations"]
    target = None if output_shape is None else [int(v) for v in output_shape.reshape(-1)]  # type: ignore[attr-defined]
    begin, out = backprop_geometry(node, sizes, kernel, target)
    # The transposed convolution is a convolution of the stride-dilated data with the flipped,
    # in/out-swapped filters; its pads select the output window of the full result (negative: crop,
    # past the end: zeros).
    spatial_axes = tuple(range(2, w.ndim))
    flipped = jnp.swapaxes(jnp.flip(w, spatial_axes), 0, 1)
    padding = []
    for b, o, size, k, s, d in zip(begin, out, sizes, kernel, strides, dilations):
        edge = (k - 1) * d
        full = s * (size - 1) + edge + 1
        padding.append((edge - b, edge + b + o - full))
    return conv(x, flipped, [1] * len(kernel), padding, dilations, lhs_dilation=strides)
