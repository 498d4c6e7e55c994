"""Export rules of the detection family: TopK, NonZero, NonMaxSuppression, Unique and ROIAlign."""

from __future__ import annotations

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter

__all__: list[str] = []


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
    data = ctx.input(0)
    if ctx.rank(0) == 0:  # OpenVINO indexes a scalar as one element ([1, n]); ONNX's NonZero gives [0, n]
        data = ctx.emit1("Reshape", [data, ctx.const([1], name="one_element")])
    ctx.cast(ctx.emit1("NonZero", [data]), Type.i64, target, ctx.out())


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


_ROI_TRANSFORMS = {"half_pixel": "half_pixel", "asymmetric": "output_half_pixel"}


@exporter("ROIAlign")
def roi_align(ctx: ExportContext) -> None:
    attrs = ctx.attrs
    transform = _ROI_TRANSFORMS.get(attrs["aligned_mode"])
    if transform is None:
        raise ctx.unsupported(f"aligned_mode '{attrs['aligned_mode']}' (ONNX has half_pixel and output_half_pixel)")
    if ctx.opset < 16 and transform != "output_half_pixel":
        raise ctx.unsupported(f"aligned_mode 'half_pixel' in ONNX opset {ctx.opset} (from opset 16)")
    ctx.emit1(
        "RoiAlign",
        [ctx.input(0), ctx.input(1), ctx.i64(2)],
        ctx.out(),
        mode=attrs["mode"],
        output_height=attrs["pooled_h"],
        output_width=attrs["pooled_w"],
        sampling_ratio=attrs["sampling_ratio"],
        spatial_scale=attrs["spatial_scale"],
        coordinate_transformation_mode=transform if ctx.opset >= 16 else None,
    )
