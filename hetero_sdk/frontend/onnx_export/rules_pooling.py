"""Export rules of the pooling family: MaxPool and AvgPool."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter
from hetero_sdk.frontend.onnx_export.rules_convolution import window_attributes
from hetero_sdk.shape import DYNAMIC

__all__: list[str] = []


def _ceil_windows_fit(ctx: ExportContext, window: dict[str, Any], kernel: list[int]) -> None:
    """Raises for a ceil-mode pooling whose last window would start past the input and its begin
    padding: ONNX drops that window, OpenVINO keeps it."""
    dims = ctx.port(0).partial_shape.dims[2:]
    pads = window.get("pads")
    if pads is None or DYNAMIC in dims:
        return
    spatial = len(dims)
    dilations = window.get("dilations", [1] * spatial)
    for axis, (size, k, s, d) in enumerate(zip(dims, kernel, window["strides"], dilations)):
        padded = size + pads[axis] + pads[axis + spatial]
        count = -(-(padded - (k - 1) * d - 1) // s) + 1
        if (count - 1) * s >= size + pads[axis]:
            raise ctx.unsupported(
                f"ceil rounding whose last window on spatial axis {axis} starts in the end padding (ONNX drops it)"
            )


@exporter("MaxPool")
def max_pool(ctx: ExportContext) -> None:
    attrs = ctx.attrs
    window = window_attributes(ctx, list(attrs["kernel_shape"]))
    if attrs["rounding_type"] == "ceil":
        _ceil_windows_fit(ctx, window, list(attrs["kernel_shape"]))
    window.update(kernel_shape=list(attrs["kernel_shape"]), ceil_mode=int(attrs["rounding_type"] == "ceil"))
    if not ctx.used(1):
        ctx.emit1("MaxPool", [ctx.input(0)], ctx.out(), **window)
        return
    flat = ctx.names.unique(ctx.out(1) + "/flat")
    indices = ctx.emit("MaxPool", [ctx.input(0)], [ctx.out(0), flat], **window)[1]
    axis = attrs["axis"] % ctx.rank(0)
    if axis:  # ONNX counts over the whole tensor; OpenVINO from ``axis`` on
        dims = ctx.port(0).partial_shape.dims[axis:]
        if DYNAMIC in dims:
            raise ctx.unsupported(f"indices from axis {axis} of an input with dynamic dims there")
        indices = ctx.emit1("Mod", [indices, ctx.const(int(np.prod(dims)), name="stride")], fmod=0)
    ctx.cast(indices, Type.i64, attrs["index_element_type"], ctx.out(1))


@exporter("AvgPool")
def avg_pool(ctx: ExportContext) -> None:
    attrs = ctx.attrs
    window = window_attributes(ctx, list(attrs["kernel_shape"]), dilations=False)
    if attrs["rounding_type"] == "ceil":
        _ceil_windows_fit(ctx, window, list(attrs["kernel_shape"]))
    ctx.emit1(
        "AveragePool",
        [ctx.input(0)],
        ctx.out(),
        kernel_shape=list(attrs["kernel_shape"]),
        ceil_mode=int(attrs["rounding_type"] == "ceil"),
        count_include_pad=int(not attrs["exclude_pad"]),
        **window,
    )
