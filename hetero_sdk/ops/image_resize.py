"""ONNX's Resize (opset 19) with the semantics OpenVINO's Interpolate lacks: antialiased linear and cubic
filters, ``exclude_outside``, ``keep_aspect_ratio_policy``, the ``half_pixel_symmetric`` and
``tf_crop_and_resize`` coordinate transformations, and source coordinates measured against the real
(unfloored) resized length ``scale * input_length``, as ONNX defines them.

Every mode is separable. :func:`resize_tables` turns the node's attributes and the values of its
``scales_or_sizes`` and ``roi`` inputs into one table per resized axis (source indices, or an
``[output, input]`` weight matrix, and which outputs extrapolate); the one array-API kernel applies them,
so TEMPLATE (values at run time) and XLA (values known while tracing) share every rounding decision.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetero_sdk.array_api import namespace
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import BOOL, FLOAT, INTS, STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import NUMERIC_TYPES, REAL_TYPES, expect_rank, expect_type
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = ["AxisTable", "apply_resize", "resize", "resize_tables"]

RESIZE_MODES = ("nearest", "linear", "cubic")
RESIZE_TRANSFORMS = (
    "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
    "tf_half_pixel_for_nn", "tf_crop_and_resize",
)  # fmt: skip
RESIZE_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
ASPECT_POLICIES = ("stretch", "not_larger", "not_smaller")


def resize(
    image: Any,
    scales_or_sizes: Any,
    roi: Any = None,
    *,
    shape_calculation_mode: str,
    axes: Sequence[int],
    mode: str = "nearest",
    coordinate_transformation_mode: str = "half_pixel",
    nearest_mode: str = "round_prefer_floor",
    cubic_coeff_a: float = -0.75,
    antialias: bool = False,
    exclude_outside: bool = False,
    extrapolation_value: float = 0.0,
    keep_aspect_ratio_policy: str = "stretch",
    name: str | None = None,
) -> Node:
    """Resizes ``image`` along ``axes`` as ONNX's Resize-19 does (``Resize``, an ONNX op outside OpenVINO's
    opsets; use :func:`~hetero_sdk.opset.interpolate` for OpenVINO's Interpolate).

    :param image: the tensor to resize.
    :param scales_or_sizes: 1-D, one value per axis: real scales or integer output sizes.
    :param roi: 1-D ``[starts..., ends...]`` per axis, normalized: the crop of ``tf_crop_and_resize``.
    :param shape_calculation_mode: ``scales`` or ``sizes``.
    :param axes: the resized axes, non-negative, in the order of ``scales_or_sizes``.
    :param mode: ``nearest``, ``linear`` or ``cubic``.
    :param coordinate_transformation_mode: how an output coordinate maps to the input (ONNX's names).
    :param nearest_mode: rounding for ``nearest``.
    :param cubic_coeff_a: the ``a`` of the cubic kernel.
    :param antialias: widen the linear or cubic filter by ``1 / scale`` when downsampling.
    :param exclude_outside: give taps outside the input weight 0 and renormalize the others (linear and
        cubic; nearest ignores it).
    :param extrapolation_value: the value of outputs that fall outside the input (``tf_crop_and_resize``).
    :param keep_aspect_ratio_policy: with sizes, ``stretch`` each axis, or scale all by one factor so
        that the result is ``not_larger`` or ``not_smaller`` than the sizes.
    """
    inputs = [as_output(image), as_output(scales_or_sizes)]
    if roi is not None:
        inputs.append(as_output(roi))
    attrs = {
        "shape_calculation_mode": shape_calculation_mode,
        "axes": [int(a) for a in axes],
        "mode": mode,
        "coordinate_transformation_mode": coordinate_transformation_mode,
        "nearest_mode": nearest_mode,
        "cubic_coeff_a": float(cubic_coeff_a),
        "antialias": bool(antialias),
        "exclude_outside": bool(exclude_outside),
        "extrapolation_value": float(extrapolation_value),
        "keep_aspect_ratio_policy": keep_aspect_ratio_policy,
    }
    return Node(RESIZE, inputs, attrs, name)


def _scales_and_dims(
    attrs: dict[str, Any], in_dims: Sequence[int], values: np.ndarray
) -> tuple[list[float], list[int]]:
    """The scale and the output length of each resized axis (in ``axes`` order).

    With scales the length is ``floor(length * scale)`` whatever the crop of ``tf_crop_and_resize``, as
    ONNX's shape inference, its reference evaluator and ONNX Runtime compute it (the operator text's
    ``* (roi_end - roi_start)`` is followed by none of them).
    """
    lengths = [in_dims[a] for a in attrs["axes"]]
    if attrs["shape_calculation_mode"] == "scales":
        scales = [float(np.float32(v)) for v in values]
        return scales, [math.floor(n * s) for n, s in zip(lengths, scales)]
    sizes = [int(v) for v in values]
    ratios = [s / n if n else 1.0 for s, n in zip(sizes, lengths)]
    policy = attrs["keep_aspect_ratio_policy"]
    if policy == "stretch":
        return ratios, sizes
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    return [scale] * len(lengths), [math.floor(scale * n + 0.5) for n in lengths]  # halves round up


def _source_positions(attrs: dict[str, Any], scale: float, length: int, out_len: int, crop: Sequence[float]) -> Any:
    """Where each output position falls in the input, against the real resized length ``scale * length``."""
    x = np.arange(out_len, dtype=np.float64)
    width = scale * length
    mode = attrs["coordinate_transformation_mode"]
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        offset = length / 2 * (1 - out_len / width)
        return offset + (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out_len > 1 else np.zeros(out_len)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    if mode == "align_corners":
        return x * (length - 1) / (width - 1) if width != 1 else np.zeros(out_len)
    start, end = crop
    if out_len > 1:  # tf_crop_and_resize
        return start * (length - 1) + x * (end - start) * (length - 1) / (out_len - 1)
    return np.full(out_len, 0.5 * (start + end) * (length - 1))


def _filter(mode: str, t: np.ndarray, a: float) -> np.ndarray:
    """The linear (triangle) or cubic (Keys, coefficient ``a``) filter at offsets ``t``."""
    t = np.abs(t)
    if mode == "linear":
        return np.maximum(0.0, 1 - t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t < 1, near, np.where(t < 2, far, 0.0))


@dataclass(frozen=True)
class AxisTable:
    """How one axis is resampled.

    :ivar axis: the axis.
    :ivar indices: ``nearest``: the source index of each output position (else None).
    :ivar weights: ``linear``/``cubic``: the ``[output, input]`` weight matrix (else None).
    :ivar inside: False at output positions that take the extrapolation value (``tf_crop_and_resize``).
    """

    axis: int
    indices: np.ndarray | None
    weights: np.ndarray | None
    inside: np.ndarray


def _table(
    attrs: dict[str, Any], axis: int, length: int, out_len: int, scale: float, crop: Sequence[float]
) -> AxisTable:
    source = _source_positions(attrs, scale, length, out_len, crop)
    inside = np.ones(out_len, bool)
    if attrs["coordinate_transformation_mode"] == "tf_crop_and_resize":
        inside = (source >= 0) & (source <= length - 1)
    # each position lies in (base, base + 1]: an integer position counts as the right end of its interval
    base = np.floor(source)
    ratio = source - base
    base = np.where(ratio == 0, base - 1, base)
    ratio = np.where(ratio == 0, 1.0, ratio)
    mode = attrs["mode"]
    if mode == "nearest":
        rounding = attrs["nearest_mode"]
        up = {
            "round_prefer_floor": ratio > 0.5,
            "round_prefer_ceil": ratio >= 0.5,
            "floor": ratio == 1,
            "ceil": np.ones(out_len, bool),
        }[rounding]
        return AxisTable(axis, np.clip(base + up, 0, length - 1).astype(np.int64), None, inside)
    support = 1 if mode == "linear" else 2
    stretch = min(scale, 1.0) if attrs["antialias"] else 1.0
    first = math.floor(-support / stretch) + 1
    taps = np.arange(first, 2 - first)[None, :]
    coeffs = _filter(mode, stretch * (taps - ratio[:, None]), attrs["cubic_coeff_a"])
    if attrs["antialias"]:
        coeffs = coeffs / coeffs.sum(axis=1, keepdims=True)
    index = base[:, None].astype(np.int64) + taps
    if attrs["exclude_outside"]:
        coeffs = np.where((index >= 0) & (index < length), coeffs, 0.0)
        total = coeffs.sum(axis=1, keepdims=True)
        coeffs = np.divide(coeffs, total, out=np.zeros_like(coeffs), where=total != 0)
    weights = np.zeros((out_len, length))
    rows = np.broadcast_to(np.arange(out_len)[:, None], index.shape)
    np.add.at(weights, (rows, np.clip(index, 0, length - 1)), coeffs)
    return AxisTable(axis, None, weights, inside)


def resize_tables(
    attrs: dict[str, Any], in_dims: Sequence[int], values: Any, roi: Any = None
) -> tuple[list[int], list[AxisTable]]:
    """The output dims of a Resize and one table per resized axis (see :class:`AxisTable`).

    :param in_dims: the image's (static) dimensions.
    :param values: the scales or sizes, one per axis in ``attrs["axes"]``.
    :param roi: ``[starts..., ends...]`` (``tf_crop_and_resize`` only), or None.
    """
    axes = attrs["axes"]
    values = np.asarray(values).reshape(-1)
    roi_values = None if roi is None else np.asarray(roi, np.float64).reshape(-1)
    scales, out_lengths = _scales_and_dims(attrs, in_dims, values)
    dims = list(in_dims)
    tables = []
    for i, axis in enumerate(axes):
        dims[axis] = out_lengths[i]
        crop = (0.0, 1.0) if roi_values is None else (roi_values[i], roi_values[len(axes) + i])
        tables.append(_table(attrs, axis, in_dims[axis], out_lengths[i], scales[i], crop))
    return dims, tables


def _resize(node: Node) -> list[OutputSpec]:
    image = node.input_value(0).partial_shape
    axes = node.attrs["axes"]
    if any(not 0 <= a < image.rank for a in axes) or len(set(axes)) != len(axes):
        raise node.error(
            f"axes {axes} must be distinct integers in [0, {image.rank - 1}] for an image of rank {image.rank}"
        )
    calculation = node.attrs["shape_calculation_mode"]
    if calculation not in ("scales", "sizes"):
        raise node.error(f"shape_calculation_mode must be scales or sizes, not '{calculation}'")
    expect_rank(node, 1, 1, what="scales_or_sizes")
    if node.attrs["coordinate_transformation_mode"] == "tf_crop_and_resize":
        if node.get_input_size() < 3:
            raise node.error("coordinate_transformation_mode 'tf_crop_and_resize' needs the roi input")
        expect_type(node, 2, REAL_TYPES, "roi")
    values = constant_value(node.input_value(1))
    roi = constant_value(node.input_value(2)) if node.get_input_size() > 2 else None
    if values is None or image.is_dynamic or (node.get_input_size() > 2 and roi is None):
        dims = list(image.dims)
        for a in axes:
            dims[a] = DYNAMIC
        return [(node.input_value(0).element_type, PartialShape(dims))]
    if values.size != len(axes):
        raise node.error(f"scales_or_sizes has {values.size} values but {len(axes)} axes {axes} are resized")
    if np.any(values <= 0):
        raise node.error(f"scales_or_sizes {values.reshape(-1).tolist()} must be positive")
    dims, _ = resize_tables(node.attrs, image.dims, values, roi)
    return [(node.input_value(0).element_type, PartialShape(dims))]


def apply_resize(node: Node, image: Any, values: Any, roi: Any = None, contract: Any = None) -> Any:
    """Runs a Resize node on ``image`` (numpy or JAX): its tables from the values of ``scales_or_sizes`` and
    ``roi``, applied one axis after the other.

    :param contract: ``contract(x, matrix, axis)``: ``x``'s ``axis`` multiplied by ``matrix``'s
        ``[output, input]`` (``tensordot`` by default; XLA passes one at full f32 precision).
    """
    xp = namespace(image)
    dims, tables = resize_tables(node.attrs, image.shape, values, roi)
    integral = np.dtype(image.dtype).kind in "iu"
    filtered = node.attrs["mode"] != "nearest"
    result = image
    if filtered:
        result = xp.astype(image, xp.float64 if np.dtype(image.dtype) == np.float64 or xp is np else xp.float32)
    inside = None
    for table in tables:
        if table.indices is not None:
            result = xp.take(result, xp.asarray(table.indices.astype(np.int32)), axis=table.axis)
        else:
            matrix = xp.asarray(table.weights, dtype=result.dtype)
            if contract is None:
                result = xp.moveaxis(xp.tensordot(result, matrix, axes=([table.axis], [1])), -1, table.axis)
            else:
                result = contract(result, matrix, table.axis)
        if not table.inside.all():
            shape = [1] * len(dims)
            shape[table.axis] = dims[table.axis]
            mask = table.inside.reshape(shape)
            inside = mask if inside is None else inside & mask
    if inside is not None:
        fill = xp.asarray(node.attrs["extrapolation_value"], dtype=result.dtype)
        result = xp.where(xp.asarray(inside), result, fill)
    if integral and filtered:
        info = np.iinfo(image.dtype)
        result = xp.clip(xp.sign(result) * xp.floor(xp.abs(result) + 0.5), info.min, info.max)
    return xp.astype(result, image.dtype)


RESIZE = define(
    OpDef(
        "Resize",
        "image",
        _resize,
        inputs=(
            Input("image", NUMERIC_TYPES),
            Input("scales_or_sizes", decides_shape=True, doc="1D: real scales, or integer sizes"),
            Input("roi", REAL_TYPES, optional=True, decides_shape=True, doc="tf_crop_and_resize's [starts, ends]"),
        ),
        attrs=(
            Attr("shape_calculation_mode", STRING, choices=("scales", "sizes"), doc="how to read scales_or_sizes"),
            Attr("axes", INTS, doc="the resized axes, in the order of scales_or_sizes"),
            Attr("mode", STRING, "nearest", RESIZE_MODES, doc="the interpolation filter"),
            Attr("coordinate_transformation_mode", STRING, "half_pixel", RESIZE_TRANSFORMS),
            Attr("nearest_mode", STRING, "round_prefer_floor", RESIZE_NEAREST_MODES, doc="rounding for nearest"),
            Attr("cubic_coeff_a", FLOAT, -0.75, doc="the a of the cubic kernel"),
            Attr("antialias", BOOL, False, doc="widen the filter by 1/scale when downsampling"),
            Attr("exclude_outside", BOOL, False, doc="weight 0 for taps outside the input"),
            Attr("extrapolation_value", FLOAT, 0.0, doc="outputs outside the input (tf_crop_and_resize)"),
            Attr("keep_aspect_ratio_policy", STRING, "stretch", ASPECT_POLICIES, doc="with sizes: one scale for all"),
        ),
        version="onnx19",
        evaluate=apply_resize,
        doc="Resizes an image along some axes as ONNX's Resize-19 does (antialiasing, cropping, aspect ratio).",
    )
)
