"""Image processing ops: Interpolate, GridSample (with one array-API kernel every device shares) and
ONNX's Resize."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

import numpy as np

from hetero_sdk.array_api import namespace, widened
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import BOOL, FLOAT, INTS, STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import INTEGRAL_TYPES, NUMERIC_TYPES, REAL_TYPES, expect_rank, expect_type, merge_dims
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = [
    "AxisTable", "ResizePlan", "apply_resize", "grid_sample", "interpolate", "interpolate_output_dims",
    "interpolate_pads", "resize", "resize_plan", "resize_tables",
]  # fmt: skip

MODES = ("nearest", "linear", "linear_onnx", "cubic", "bilinear_pillow", "bicubic_pillow")
SHAPE_CALCULATION_MODES = ("sizes", "scales")
COORDINATE_TRANSFORMATION_MODES = (
    "half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn", "align_corners",
)  # fmt: skip
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple")
_SCALE_EPSILON = np.float32(1e-6)  # OpenVINO adds it before flooring, so that 0.1 * 30 gives 3


def interpolate(
    image: Any,
    scales_or_sizes: Any,
    mode: str,
    shape_calculation_mode: str,
    pads_begin: Sequence[int] | None = None,
    pads_end: Sequence[int] | None = None,
    coordinate_transformation_mode: str = "half_pixel",
    nearest_mode: str = "round_prefer_floor",
    antialias: bool = False,
    cube_coeff: float = -0.75,
    axes: Any = None,
    name: str | None = None,
) -> Node:
    """Resizes ``image`` along ``axes`` (``Interpolate``, opset11).

    The image is first zero-padded by ``pads_begin``/``pads_end``; then each axis in ``axes`` is
    resampled to its new size. Every mode is separable: the result is the same as resampling one
    axis after the other.

    :param image: the tensor to resize (any numeric type; integer results are rounded to nearest).
    :param scales_or_sizes: 1-D, one value per axis: integer output sizes (``sizes``) or floating-point
        scales (``scales``; the output size is ``floor(scale * padded_size)``).
    :param mode: ``nearest``, ``linear``, ``linear_onnx``, ``cubic``, ``bilinear_pillow`` or
        ``bicubic_pillow``.
    :param shape_calculation_mode: ``sizes`` or ``scales``: how to read ``scales_or_sizes``. With
        ``sizes`` the scale of an axis is ``output_size / padded_input_size``.
    :param pads_begin: non-negative zero padding before each dimension (default all 0; shorter lists
        are extended with zeros, longer ones cut to the rank).
    :param pads_end: non-negative zero padding after each dimension.
    :param coordinate_transformation_mode: how an output coordinate maps to the input:
        ``half_pixel``, ``pytorch_half_pixel``, ``asymmetric``, ``tf_half_pixel_for_nn`` or
        ``align_corners`` (ignored by the pillow modes).
    :param nearest_mode: rounding for ``nearest``: ``round_prefer_floor``, ``round_prefer_ceil``,
        ``floor``, ``ceil`` or ``simple``.
    :param antialias: widen the ``linear`` filter when downsampling (other modes ignore it; the pillow
        modes always antialias).
    :param cube_coeff: the ``a`` of the cubic kernel (``cubic``, ``bicubic_pillow``; Pillow uses -0.5).
    :param axes: 1-D integer tensor of the axes to resize, in the order of ``scales_or_sizes``
        (default: every axis).
    """
    inputs = [as_output(image), as_output(scales_or_sizes)]
    if axes is not None:
        inputs.append(as_output(axes))
    attrs = {
        "mode": mode,
        "shape_calculation_mode": shape_calculation_mode,
        "pads_begin": [int(p) for p in (pads_begin if pads_begin is not None else [0])],
        "pads_end": [int(p) for p in (pads_end if pads_end is not None else [0])],
        "coordinate_transformation_mode": coordinate_transformation_mode,
        "nearest_mode": nearest_mode,
        "antialias": bool(antialias),
        "cube_coeff": float(cube_coeff),
    }
    return Node(INTERPOLATE, inputs, attrs, name)


def interpolate_output_dims(
    attrs: dict[str, Any],
    input_dims: Sequence[int],
    scales_or_sizes: Sequence[float] | np.ndarray | None,
    axes: Sequence[int],
) -> list[int]:
    """The output dimensions of an Interpolate (``-1`` where unknown).

    :param attrs: the node's attributes (``shape_calculation_mode``, ``pads_begin``, ``pads_end``).
    :param input_dims: the image's dimensions, ``-1`` where dynamic.
    :param scales_or_sizes: the values of the second input, or None when unknown.
    :param axes: the resized axes, non-negative.
    """
    rank = len(input_dims)
    begin, end = interpolate_pads(attrs, rank)
    dims = [DYNAMIC if d == DYNAMIC else d + b + e for d, b, e in zip(input_dims, begin, end)]
    for i, axis in enumerate(axes):
        if scales_or_sizes is None:
            dims[axis] = DYNAMIC
        elif attrs["shape_calculation_mode"] == "sizes":
            dims[axis] = int(scales_or_sizes[i])
        elif dims[axis] != DYNAMIC:
            dims[axis] = int(np.float32(dims[axis]) * (np.float32(scales_or_sizes[i]) + _SCALE_EPSILON))
    return dims


def interpolate_pads(attrs: dict[str, Any], rank: int) -> tuple[list[int], list[int]]:
    """``pads_begin`` and ``pads_end`` fitted to ``rank`` (zero-extended or cut), as OpenVINO does."""
    fit = [([int(p) for p in attrs[key]] + [0] * rank)[:rank] for key in ("pads_begin", "pads_end")]
    return fit[0], fit[1]


def _interpolate(node: Node) -> list[OutputSpec]:
    element_type = node.input_value(0).element_type
    image = node.input_value(0).partial_shape
    mode, calculation = node.attrs["mode"], node.attrs["shape_calculation_mode"]
    for key in ("pads_begin", "pads_end"):
        if any(p < 0 for p in node.attrs[key]):
            raise node.error(f"attribute {key}={node.attrs[key]!r} must be a list of non-negative integers")
    if calculation == "sizes":
        expect_type(node, 1, INTEGRAL_TYPES, "scales_or_sizes (shape_calculation_mode='sizes')")
    else:
        expect_type(node, 1, REAL_TYPES, "scales_or_sizes (shape_calculation_mode='scales')")
    count = expect_rank(node, 1, 1, what="scales_or_sizes")[0]
    axes = _axes(node, image.rank)
    if axes is None:
        return [(element_type, PartialShape([DYNAMIC] * image.rank))]
    if count not in (len(axes), DYNAMIC):
        raise node.error(f"scales_or_sizes has {count} values but {len(axes)} axes {axes} are resized")
    if mode in ("bilinear_pillow", "bicubic_pillow") and len(axes) > 2:
        raise node.error(f"mode '{mode}' resizes at most 2 (spatial) axes, got axes {axes}")
    values = constant_value(node.input_value(1))
    if values is not None:
        values = values.reshape(-1)
        if values.size != len(axes):
            raise node.error(f"scales_or_sizes has {values.size} values but {len(axes)} axes {axes} are resized")
        if np.any(values < 0):
            raise node.error(f"scales_or_sizes {values.tolist()} must be non-negative")
    return [(element_type, PartialShape(interpolate_output_dims(node.attrs, image.dims, values, axes)))]


def _axes(node: Node, rank: int) -> list[int] | None:
    """The resized axes (validated), or None when the axes input is not known at build time."""
    if node.get_input_size() < 3:
        return list(range(rank))
    expect_rank(node, 2, 1, what="axes")
    value = constant_value(node.input_value(2))
    if value is None:
        return None
    axes = [int(a) for a in value.reshape(-1)]
    if any(not 0 <= a < rank for a in axes) or len(set(axes)) != len(axes):
        raise node.error(f"axes {axes} must be distinct integers in [0, {rank - 1}] for an image of rank {rank}")
    return axes


@dataclass(frozen=True)
class ResizePlan:
    """The geometry of one Interpolate, shared by every device's kernel.

    :ivar pads_begin: padding before each axis.
    :ivar pads_end: padding after each axis.
    :ivar padded_dims: the input's dims after padding.
    :ivar output_dims: the output's dims.
    :ivar scales: the f32 scale of each interpolated axis, in ``axes`` order.
    :ivar resized: ``(axis, scale)`` of the axes whose length changes (the others are copied).
    """

    pads_begin: list[int]
    pads_end: list[int]
    padded_dims: list[int]
    output_dims: list[int]
    scales: list[np.float32]
    resized: list[tuple[int, np.float32]]


def resize_plan(
    attrs: dict[str, Any], input_dims: Sequence[int], scales_or_sizes: np.ndarray, axes: np.ndarray | None
) -> ResizePlan:
    """Pads, output dims and per-axis scales of an Interpolate, computed as OpenVINO does."""
    rank = len(input_dims)
    axis_list = list(range(rank)) if axes is None else [int(a) for a in np.asarray(axes).reshape(-1)]
    begin, end = interpolate_pads(attrs, rank)
    padded = [d + b + e for d, b, e in zip(input_dims, begin, end)]
    values = np.asarray(scales_or_sizes).reshape(-1)
    out_dims = list(interpolate_output_dims(attrs, input_dims, values, axis_list))
    if attrs["shape_calculation_mode"] == "sizes":
        scales = [np.float32(out_dims[a]) / np.float32(padded[a]) for a in axis_list]
    else:
        scales = [np.float32(v) for v in values]
    resized = [(a, s) for a, s in zip(axis_list, scales) if out_dims[a] != padded[a]]
    return ResizePlan(begin, end, padded, out_dims, scales, resized)


INTERPOLATE = define(
    OpDef(
        "Interpolate",
        "image",
        _interpolate,
        inputs=(
            Input("image", NUMERIC_TYPES),
            Input("scales_or_sizes", decides_shape=True, doc="1D: integer sizes, or real scales"),
            Input("axes", INTEGRAL_TYPES, optional=True, decides_shape=True, doc="the axes resized; all by default"),
        ),
        attrs=(
            Attr("mode", STRING, choices=MODES, doc="the interpolation filter"),
            Attr("shape_calculation_mode", STRING, choices=SHAPE_CALCULATION_MODES, doc="sizes or scales"),
            Attr("pads_begin", INTS, [0], doc="padding before each axis"),
            Attr("pads_end", INTS, [0], doc="padding after each axis"),
            Attr("coordinate_transformation_mode", STRING, "half_pixel", COORDINATE_TRANSFORMATION_MODES),
            Attr("nearest_mode", STRING, "round_prefer_floor", NEAREST_MODES, doc="rounding for nearest"),
            Attr("antialias", BOOL, False, doc="widen the linear filter when downsampling"),
            Attr("cube_coeff", FLOAT, -0.75, doc="the a of the cubic kernel"),
        ),
        version="opset11",
        doc="Resizes an image (any tensor) along some axes.",
    )
)


# -- GridSample ------------------------------------------------------------------------------------------

GRID_SAMPLE_MODES = ("bilinear", "bicubic", "nearest")
GRID_PADDING_MODES = ("zeros", "border", "reflection")
_CUBIC_A = -0.75  # the a of the cubic kernel GridSample uses (as PyTorch and ONNX do)


def grid_sample(
    data: Any,
    grid: Any,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool = False,
    name: str | None = None,
) -> Node:
    """Samples ``data`` at the normalized positions in ``grid`` (``GridSample``, opset9, extended to
    volumetric data).

    :param data: ``[N, C, H, W]`` or ``[N, C, D, H, W]``.
    :param grid: ``[N, H_out, W_out, 2]`` or ``[N, D_out, H_out, W_out, 3]``: per output position its
        coordinates in ``[-1, 1]``, the innermost axis (x, width) first.
    :param mode: ``bilinear`` (trilinear for volumes), ``bicubic`` (2-D only) or ``nearest`` (ties to even).
    :param padding_mode: the value of positions outside the input: ``zeros``, ``border`` (the nearest
        edge value) or ``reflection`` (mirrored at the borders).
    :param align_corners: -1 and 1 are the centers of the corner pixels (True) or their outer edges.
    """
    attrs = {"mode": mode, "padding_mode": padding_mode, "align_corners": bool(align_corners)}
    return Node(GRID_SAMPLE, [as_output(data), as_output(grid)], attrs, name)


def _grid_sample(node: Node) -> list[OutputSpec]:
    data = expect_rank(node, 0, 4, 5, what="data")
    grid = expect_rank(node, 1, data.rank, what="grid")
    spatial = data.rank - 2
    if grid[-1] not in (spatial, DYNAMIC):
        raise node.error(f"grid's last dimension is {grid[-1]}; a {data.rank}-D data needs {spatial} coordinates")
    if node.attrs["mode"] == "bicubic" and spatial != 2:
        raise node.error("mode 'bicubic' samples 4-D data only; use 'bilinear' or 'nearest' for volumes")
    batch = merge_dims(node, data[0], grid[0], "data and grid batch sizes")
    dims = [batch, data[1], *grid.dims[1:-1]]
    return [(node.input_value(0).element_type, PartialShape(dims))]


def _reflect(xp: Any, c: Any, low: float, high: float) -> Any:
    """``c`` mirrored at ``low`` and ``high`` until it lies between them."""
    span = high - low
    if span <= 0:
        return xp.zeros_like(c) + low
    below = c < low
    distance = xp.where(below, low - c, c - high)
    turns = xp.floor(distance / span)
    rest = distance - turns * span
    even = turns % 2 == 0
    from_below = xp.where(even, low + rest, high - rest)
    from_above = xp.where(even, high - rest, low + rest)
    return xp.where(below, from_below, xp.where(c > high, from_above, c))


def _cubic_taps(xp: Any, c: Any) -> list[tuple[Any, Any]]:
    """The 4 ``(position, weight)`` taps of Keys' cubic convolution around ``c``."""
    a = _CUBIC_A
    base = xp.floor(c)
    s = c - base
    weights = (
        ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a,
        ((a + 2) * s - (a + 3)) * s * s + 1,
        ((a + 2) * (1 - s) - (a + 3)) * (1 - s) * (1 - s) + 1,
        ((a * (2 - s) - 5 * a) * (2 - s) + 8 * a) * (2 - s) - 4 * a,
    )
    return [(base + (k - 1), w) for k, w in enumerate(weights)]


def _axis_taps(xp: Any, g: Any, length: int, attrs: dict[str, Any]) -> list[tuple[Any, Any]]:
    """One axis's ``(position, weight)`` taps from its normalized coordinates ``g``."""
    mode, padding = attrs["mode"], attrs["padding_mode"]
    if attrs["align_corners"]:
        c, low, high = (g + 1) / 2 * (length - 1), 0.0, float(length - 1)
    else:
        c, low, high = ((g + 1) * length - 1) / 2, -0.5, length - 0.5
    if mode == "nearest":
        c = xp.round(c)
    outside = (c < low) | (c > high)
    # bicubic clamps each tap, not the position (as PyTorch and ONNX Runtime do; onnx.reference clamps both)
    if padding == "border" and mode != "bicubic":
        c = xp.where(outside, xp.clip(c, 0, length - 1), c)
    elif padding == "reflection":
        c = xp.where(outside, _reflect(xp, c, low, high), c)
    if mode == "nearest":
        return [(c, xp.ones_like(c))]
    if mode == "bilinear":
        base = xp.floor(c)
        return [(base, base + 1 - c), (base + 1, c - base)]
    return _cubic_taps(xp, c)


def _tap_index(xp: Any, position: Any, length: int, attrs: dict[str, Any]) -> tuple[Any, Any]:
    """``(index, inside)``: where a tap reads (always in range) and whether it reads inside the input."""
    padding = attrs["padding_mode"]
    if padding == "reflection":
        low, high = (0.0, length - 1.0) if attrs["align_corners"] else (-0.5, length - 0.5)
        position = _reflect(xp, position, low, high)
    index = xp.astype(position, xp.int32)
    inside = (index >= 0) & (index < length)
    return xp.clip(index, 0, length - 1), inside if padding == "zeros" else xp.ones_like(inside)


def _grid_sample_kernel(node: Node, data: Any, grid: Any) -> Any:
    xp = namespace(data, grid)
    spatial = data.ndim - 2
    values = widened(data)
    if np.dtype(values.dtype).kind != "f":
        values = xp.astype(values, xp.float64)
    channels_last = xp.permute_dims(values, (0, *range(2, data.ndim), 1))  # [N, *S, C]
    coords = xp.astype(widened(grid), values.dtype)
    taps = [
        _axis_taps(xp, coords[..., spatial - 1 - axis], data.shape[2 + axis], node.attrs) for axis in range(spatial)
    ]
    batch = xp.reshape(xp.arange(data.shape[0]), (data.shape[0],) + (1,) * spatial)
    result: Any = None
    for combination in product(*taps):
        where: list[Any] = [batch]
        weight: Any = None
        for axis, (position, tap_weight) in enumerate(combination):
            index, inside = _tap_index(xp, position, data.shape[2 + axis], node.attrs)
            where.append(index)
            tap_weight = xp.where(inside, tap_weight, xp.zeros_like(tap_weight))
            weight = tap_weight if weight is None else weight * tap_weight
        term = channels_last[tuple(where)] * weight[..., None]
        result = term if result is None else result + term
    out = xp.permute_dims(result, (0, spatial + 1, *range(1, spatial + 1)))
    if np.dtype(data.dtype).kind in "iu":
        out = xp.round(out)
    return xp.astype(out, data.dtype)


GRID_SAMPLE = define(
    OpDef(
        "GridSample",
        "image",
        _grid_sample,
        inputs=(
            Input("data", NUMERIC_TYPES, doc="[N, C, H, W] or [N, C, D, H, W]"),
            Input("grid", REAL_TYPES, doc="[N, *output spatial dims, 2 or 3]: x first, in [-1, 1]"),
        ),
        attrs=(
            Attr("mode", STRING, "bilinear", GRID_SAMPLE_MODES, doc="bilinear (trilinear), bicubic or nearest"),
            Attr("padding_mode", STRING, "zeros", GRID_PADDING_MODES, doc="values outside the input"),
            Attr("align_corners", BOOL, False, doc="-1 and 1 are corner pixel centers (else their edges)"),
        ),
        version="opset9",
        evaluate=_grid_sample_kernel,
        doc="Samples data at the normalized positions of a grid (4-D, or 5-D without bicubic).",
    )
)


# -- ONNX's Resize (opset 19) with the semantics OpenVINO's Interpolate lacks: antialiased linear and cubic
# filters, ``exclude_outside``, ``keep_aspect_ratio_policy``, the ``half_pixel_symmetric`` and
# ``tf_crop_and_resize`` coordinate transformations, and source coordinates measured against the real
# (unfloored) resized length ``scale * input_length``, as ONNX defines them.
#
# Every mode is separable. :func:`resize_tables` turns the node's attributes and the values of its
# ``scales_or_sizes`` and ``roi`` inputs into one table per resized axis (source indices, or an
# ``[output, input]`` weight matrix, and which outputs extrapolate); the one array-API kernel applies them,
# so TEMPLATE (values at run time) and XLA (values known while tracing) share every rounding decision.


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
