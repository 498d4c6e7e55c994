"""Export rules of the neural-network families: convolutions, pooling, normalizations, MatMul,
Interpolate, and the detection ops (TopK, NonZero, NonMaxSuppression, Unique)."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter
from hetero_sdk.ops.image import interpolate_pads
from hetero_sdk.shape import DYNAMIC

__all__ = ["window_attributes"]

_AUTO_PAD = {"explicit": "NOTSET", "same_upper": "SAME_UPPER", "same_lower": "SAME_LOWER", "valid": "VALID"}


def window_attributes(ctx: ExportContext, kernel: list[int] | None, dilations: bool = True) -> dict[str, Any]:
    """ONNX's strides, pads, dilations and auto_pad of a convolution or pooling node. With static
    spatial dims and a known ``kernel``, ``same_*`` and ``valid`` become explicit pads (ONNX Runtime
    refuses dilations with ``SAME_*``)."""
    attrs = ctx.attrs
    spatial = ctx.rank(0) - 2
    strides = list(attrs["strides"]) or [1] * spatial
    dilation = (list(attrs["dilations"]) or [1] * spatial) if dilations else [1] * spatial
    window: dict[str, Any] = {"strides": strides}
    if dilations:
        window["dilations"] = dilation
    auto_pad = attrs["auto_pad"]
    dims = ctx.port(0).partial_shape.dims[2:]
    if auto_pad == "explicit":
        begin, end = list(attrs["pads_begin"]) or [0] * spatial, list(attrs["pads_end"]) or [0] * spatial
        window["pads"] = begin + end
    elif auto_pad == "valid":
        window["pads"] = [0] * 2 * spatial
    elif kernel is not None and DYNAMIC not in dims and DYNAMIC not in kernel:
        begin, end = [], []
        for size, k, s, d in zip(dims, kernel, strides, dilation):
            total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
            first = total // 2 if auto_pad == "same_upper" else total - total // 2
            begin.append(first)
            end.append(total - first)
        window["pads"] = begin + end
    else:
        window["auto_pad"] = _AUTO_PAD[auto_pad]
    return window


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


def _kernel(ctx: ExportContext) -> list[int]:
    return list(ctx.port(1).partial_shape.dims[-(ctx.rank(0) - 2) :])


@exporter("Convolution")
def convolution(ctx: ExportContext) -> None:
    ctx.emit1("Conv", [ctx.input(0), ctx.input(1)], ctx.out(), **window_attributes(ctx, _kernel(ctx)))


@exporter("GroupConvolution")
def group_convolution(ctx: ExportContext) -> None:
    dims = ctx.port(1).partial_shape.dims  # [groups, out / groups, in / groups, *kernel] -> [out, in / groups, *kernel]
    groups = dims[0]
    weights = ctx.constant(1)
    if weights is not None:
        filters = ctx.const(weights.reshape(dims[0] * dims[1], *dims[2:]), weights.dtype, "filters")
    elif DYNAMIC in dims[:3]:
        raise ctx.unsupported("grouped filters of dynamic shape (ONNX needs the group count)")
    else:
        filters = ctx.emit1("Reshape", [ctx.input(1), ctx.const([dims[0] * dims[1], *dims[2:]], name="shape")])
    ctx.emit1("Conv", [ctx.input(0), filters], ctx.out(), group=groups, **window_attributes(ctx, _kernel(ctx)))


@exporter("ConvolutionBackpropData")
def convolution_backprop_data(ctx: ExportContext) -> None:
    window = window_attributes(ctx, None)
    padding = list(ctx.attrs["output_padding"])
    if any(padding):
        window["output_padding"] = padding
    if ctx.has_input(2):
        shape = ctx.required_constant(2, "output_shape").reshape(-1).astype(int).tolist()
        window.pop("pads", None)
        window["output_shape"] = shape
        if window.get("auto_pad") == "SAME_LOWER":
            raise ctx.unsupported("an output_shape with auto_pad same_lower")
        window["auto_pad"] = "SAME_UPPER"
    ctx.emit1("ConvTranspose", [ctx.input(0), ctx.input(1)], ctx.out(), **window)


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


@exporter("BatchNormInference")
def batch_norm(ctx: ExportContext) -> None:
    inputs = [ctx.input(i) for i in range(5)]
    ctx.emit1("BatchNormalization", inputs, ctx.out(), epsilon=ctx.attrs["epsilon"])


@exporter("Softmax", "LogSoftmax")
def softmax(ctx: ExportContext) -> None:
    ctx.emit1(ctx.current.type_name, [ctx.input(0)], ctx.out(), axis=ctx.attrs["axis"])


@exporter("MVN")
def mvn(ctx: ExportContext) -> None:
    x, element_type, axes = ctx.input(0), ctx.element_type(0), ctx.i64(1)
    centered = ctx.emit1("Sub", [x, ctx.emit1("ReduceMean", [x, axes], keepdims=1)])
    if not ctx.attrs["normalize_variance"]:
        ctx.emit1("Identity", [centered], ctx.out())
        return
    variance = ctx.emit1("ReduceMean", [ctx.emit1("Mul", [centered, centered]), axes], keepdims=1)
    eps = ctx.const(ctx.attrs["eps"], element_type, "eps")
    if ctx.attrs["eps_mode"] == "inside_sqrt":
        deviation = ctx.emit1("Sqrt", [ctx.emit1("Add", [variance, eps])])
    else:
        deviation = ctx.emit1("Add", [ctx.emit1("Sqrt", [variance]), eps])
    ctx.emit1("Div", [centered, deviation], ctx.out())


def _transposed_last(ctx: ExportContext, index: int) -> str:
    rank = ctx.rank(index)
    if rank < 2:
        return ctx.input(index)
    return ctx.emit1("Transpose", [ctx.input(index)], perm=[*range(rank - 2), rank - 1, rank - 2])


@exporter("MatMul")
def matmul(ctx: ExportContext) -> None:
    a = _transposed_last(ctx, 0) if ctx.attrs["transpose_a"] else ctx.input(0)
    b = _transposed_last(ctx, 1) if ctx.attrs["transpose_b"] else ctx.input(1)
    ctx.emit1("MatMul", [a, b], ctx.out())


# -- image ---------------------------------------------------------------------------------------------

_RESIZE = {
    "nearest": ("nearest", 0), "linear_onnx": ("linear", 0), "cubic": ("cubic", 0),
    "bilinear_pillow": ("linear", 1), "bicubic_pillow": ("cubic", 1),
}  # fmt: skip
"""Interpolate's modes as ONNX Resize's mode and antialias."""


@exporter("Interpolate")
def interpolate(ctx: ExportContext) -> None:
    attrs = ctx.attrs
    if attrs["mode"] not in _RESIZE:
        raise ctx.unsupported(f"mode '{attrs['mode']}' (OpenVINO's own triangle filter; ONNX has linear_onnx's)")
    mode, pillow = _RESIZE[attrs["mode"]]
    rank = ctx.rank(0)
    x = ctx.input(0)
    begin, end = interpolate_pads(attrs, rank)
    if any(begin) or any(end):
        x = ctx.emit1("Pad", [x, ctx.const([*begin, *end], name="pads")])
    axes = ctx.required_constant(2, "axes").reshape(-1).astype(int).tolist() if ctx.has_input(2) else None
    resize: dict[str, Any] = {
        "mode": mode,
        "coordinate_transformation_mode": attrs["coordinate_transformation_mode"],
        "antialias": 1 if pillow or attrs["antialias"] else None,
        "cubic_coeff_a": -0.5 if attrs["mode"] == "bicubic_pillow" else attrs["cube_coeff"],
        "axes": [a % rank for a in axes] if axes is not None else None,
    }
    if mode == "nearest":
        if attrs["nearest_mode"] == "simple":
            raise ctx.unsupported("nearest_mode 'simple'")
        resize["nearest_mode"] = attrs["nearest_mode"]
    out_dims = ctx.current.get_output_partial_shape(0).dims
    if attrs["shape_calculation_mode"] == "sizes":
        inputs = [x, "", "", ctx.i64(1)]
    elif attrs["coordinate_transformation_mode"] == "align_corners" and axes is not None:
        # ONNX's align_corners measures against scale * length, OpenVINO's against the floored output
        # length: the output sizes say the latter
        sizes = [out_dims[a % rank] for a in axes]
        if DYNAMIC in sizes:
            raise ctx.unsupported("align_corners with scales and a dynamic output size")
        inputs = [x, "", "", ctx.const(sizes, name="sizes")]
    else:
        inputs = [x, "", ctx.cast(ctx.input(1), ctx.element_type(1), Type.f32)]
    ctx.emit1("Resize", inputs, ctx.out(), **resize)


# -- detection -----------------------------------------------------------------------------------------


@exporter("TopK")
def topk(ctx: ExportContext) -> None:
    attrs = ctx.attrs
    axis = attrs["axis"] % ctx.rank(0)
    k = ctx.emit1("Reshape", [ctx.i64(1), ctx.const([1], name="shape")])
    largest = int(attrs["mode"] == "max")
    index_type: Type = attrs["index_element_type"]
    if attrs["sort"] != "index":
        values, indices = ctx.emit("TopK", [ctx.input(0), k], [ctx.out(0), ctx.names.unique(f"{ctx.name}/indices")],
                                   axis=axis, largest=largest, sorted=1)  # fmt: skip
        ctx.cast(indices, Type.i64, index_type, ctx.out(1))
        return
    values, indices = ctx.emit("TopK", [ctx.input(0), k], 2, axis=axis, largest=largest, sorted=1)
    ordered, positions = ctx.emit("TopK", [indices, k], 2, axis=axis, largest=0, sorted=1)
    ctx.emit1("GatherElements", [values, positions], ctx.out(0), axis=axis)
    ctx.cast(ordered, Type.i64, index_type, ctx.out(1))


@exporter("NonZero")
def non_zero(ctx: ExportContext) -> None:
    target: Type = ctx.attrs["output_type"]
    ctx.cast(ctx.emit1("NonZero", [ctx.input(0)]), Type.i64, target, ctx.out())


def _selected_scores(ctx: ExportContext, selected: str) -> str:
    """``scores[b, c, n]`` for each selected ``(b, c, n)``: a Gather from the flattened scores."""
    shape = ctx.emit1("Shape", [ctx.input(1)])
    classes = ctx.emit1("Gather", [shape, ctx.const(1)], axis=0)
    boxes = ctx.emit1("Gather", [shape, ctx.const(2)], axis=0)
    b, c, n = (ctx.emit1("Gather", [selected, ctx.const(i)], axis=1) for i in range(3))
    flat = ctx.emit1("Add", [ctx.emit1("Mul", [ctx.emit1("Add", [ctx.emit1("Mul", [b, classes]), c]), boxes]), n])
    return ctx.emit1("Gather", [ctx.emit1("Reshape", [ctx.input(1), ctx.const([-1])]), flat], axis=0)


@exporter("NonMaxSuppression")
def non_max_suppression(ctx: ExportContext) -> None:
    attrs = ctx.attrs
    sigma = ctx.constant(5) if ctx.has_input(5) else np.zeros(())
    if sigma is None or bool(np.any(sigma != 0)):
        raise ctx.unsupported("Soft-NMS (a soft_nms_sigma other than 0)")
    scores_type = ctx.element_type(1)

    def scalar(index: int, default: float, dtype: Type) -> str:
        if not ctx.has_input(index):
            return ctx.const([default], dtype, "default")
        return ctx.emit1("Reshape", [ctx.cast(ctx.input(index), ctx.element_type(index), dtype), ctx.const([1])])

    inputs = [
        ctx.input(0),
        ctx.input(1),
        scalar(2, 0, Type.i64),
        scalar(3, 0.0, Type.f32),
        scalar(4, 0.0, Type.f32),
    ]
    selected = ctx.emit1("NonMaxSuppression", inputs, center_point_box=int(attrs["box_encoding"] == "center"))
    scores = _selected_scores(ctx, selected)
    if attrs["sort_result_descending"]:  # ONNX orders by batch and class; OpenVINO here by score overall
        count = ctx.emit1("Shape", [selected], start=0, end=1)
        _, order = ctx.emit("TopK", [scores, count], 2, axis=0, largest=1, sorted=1)
        selected = ctx.emit1("Gather", [selected, order], axis=0)
        scores = ctx.emit1("Gather", [scores, order], axis=0)
    output_type: Type = attrs["output_type"]
    ctx.cast(selected, Type.i64, output_type, ctx.out(0))
    if ctx.used(1):
        batch_class = ctx.emit1("Slice", [selected, ctx.const([0]), ctx.const([2]), ctx.const([1])])
        columns = [
            ctx.cast(batch_class, Type.i64, Type.f32),
            ctx.emit1("Unsqueeze", [ctx.cast(scores, scores_type, Type.f32), ctx.const([1])]),
        ]
        ctx.emit1("Concat", columns, ctx.out(1), axis=1)
    if ctx.used(2):
        ctx.cast(ctx.emit1("Shape", [selected], start=0, end=1), Type.i64, output_type, ctx.out(2))


@exporter("Einsum")
def einsum(ctx: ExportContext) -> None:
    inputs = [ctx.input(i) for i in range(ctx.current.get_input_size())]
    ctx.emit1("Einsum", inputs, ctx.out(), equation=ctx.attrs["equation"])


@exporter("Det")
def det(ctx: ExportContext) -> None:
    ctx.emit1("Det", [ctx.input(0)], ctx.out())


@exporter("LRN")
def lrn(ctx: ExportContext) -> None:
    axes = sorted(int(a) % ctx.rank(0) for a in ctx.required_constant(1, "axes").reshape(-1))
    if axes != [1] or ctx.rank(0) != 4:
        raise ctx.unsupported(f"a window over axes {axes} of a rank-{ctx.rank(0)} tensor (ONNX's LRN sums over the "
                              "channels of NCHW tensors only)")  # fmt: skip
    attrs = ctx.attrs
    if attrs["size"] % 2 == 0:
        raise ctx.unsupported(
            f"an even window size ({attrs['size']}): ONNX Runtime and ONNX's reference run odd ones only"
        )
    ctx.emit1("LRN", [ctx.input(0)], ctx.out(), alpha=attrs["alpha"], beta=attrs["beta"], bias=attrs["bias"],
              size=attrs["size"])  # fmt: skip


@exporter("CumSum", "CumProd")
def cum_sum(ctx: ExportContext) -> None:
    op_type = ctx.current.type_name
    if op_type == "CumProd" and ctx.opset < 26:
        raise ctx.unsupported(f"CumProd in ONNX opset {ctx.opset} (ONNX defines it from opset 26)")
    axis = int(ctx.required_constant(1, "axis").reshape(-1)[0])
    attrs = ctx.attrs
    ctx.emit1(op_type, [ctx.input(0), ctx.const(axis)], ctx.out(), exclusive=int(attrs["exclusive"]),
              reverse=int(attrs["reverse"]))  # fmt: skip


@exporter("Unique")
def unique(ctx: ExportContext) -> None:
    """ONNX's indices and counts are int64: outputs of another type are cast."""
    axis = None if not ctx.has_input(1) else int(ctx.required_constant(1, "axis").reshape(-1)[0])
    index_type, count_type = ctx.attrs["index_element_type"], ctx.attrs["count_element_type"]
    types = {1: index_type, 2: index_type, 3: count_type}
    names = [ctx.out(0)]
    names += [ctx.out(i) if t == Type.i64 else ctx.names.unique(f"{ctx.name}/Unique") for i, t in types.items()]
    ctx.emit("Unique", [ctx.input(0)], names, axis=axis, sorted=int(ctx.attrs["sorted"]))
    for i, target in types.items():
        if target != Type.i64:
            ctx.cast(names[i], Type.i64, target, ctx.out(i))
