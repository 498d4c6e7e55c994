"""``XlaQuantizedConvolution``: a convolution of int8 activation levels by int8 filter levels, summed
exactly in integers, then scaled to f32: what a statically quantized (QDQ) convolution means.

The ONNX frontend writes a QDQ convolution as float ops: the activation
``Multiply(Subtract(Convert(f32, levels), zp), s_x)`` (``levels`` i8 or u8, from QuantizeLinear) and
the filter ``Multiply(Subtract(Convert(f32, q), zp_w), s_w)`` (``q`` an i8 constant, ``s_w`` per tensor
or per output channel) feed a float Convolution. :class:`QuantizedConvolutionFusion` replaces that
Convolution by one ``XlaQuantizedConvolution(levels, zp, filter levels, s_x * s_w)`` with the
integer filter ``q - zp_w`` as a constant, before the constants are folded (the filter's f32 copy
would hide its levels). Every product and sum of levels is an integer: the op's value is the float
convolution's up to f32 rounding (the float path rounds each dequantized weight and each partial
sum; here only the final scaling rounds).

XLA:CPU computes it as i8 ``dot_general`` accumulating in i32
(:mod:`hetero_sdk_jax.lowering.quantization`): its own i8 convolutions are 30-120x slower
than f32 ones, its i8 dots faster than f32 ones. The pass leaves the convolutions where the integer
form measured slower (:data:`MIN_CHANNELS`, :data:`MIN_KERNEL_CHANNELS`, :data:`MIN_POSITIONS`...).
Filters are read from their integer constant whatever their size (constant folding while building
stops at ``FOLDED_ELEMENTS``, which had left YOLOv8n's and PP-OCRv4 rec's largest layers in floats).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from hetero_sdk import Model, Node, Output, PartialShape, Type, opset
from hetero_sdk.plugin import (
    INTS,
    LOWER_STRING,
    Attr,
    ConsumerMap,
    Input,
    MatcherPass,
    OpDef,
    OutputSpec,
    constant_value,
    define,
    replace_node,
    resolve_pads,
    window_output_dims,
)

from hetero_sdk_jax.quantization import holds_integers

__all__ = [
    "QUANTIZED_CONVOLUTION",
    "QUANTIZED_CONVOLUTION_OP",
    "MIN_CHANNELS",
    "MIN_KERNEL_CHANNELS",
    "MIN_KERNEL_OUTPUTS",
    "MIN_OUTPUTS",
    "MIN_POSITIONS",
    "QuantizedConvolutionFusion",
    "integer_patches",
    "quantized_convolution",
]

QUANTIZED_CONVOLUTION = "XlaQuantizedConvolution"
"""The op's type name."""

_LEVELS = frozenset({Type.i8, Type.u8})

MIN_CHANNELS, MIN_OUTPUTS = 12, 32
"""The fewest input and output channels a 1x1 convolution runs in integers with (the i8 dot's depth
and columns), measured per layer at the bench models' shapes (one thread, CPU time, the quantizing
ops around the layer included, channels-last): 12-384 channels into 32-480 1.05-1.5x the float
layer's speed; 8 channels into 32 0.88x, 48-96 into 12-18 0.82-0.99x."""
MIN_KERNEL_CHANNELS, MIN_KERNEL_OUTPUTS = 16, 16
"""The same for kernels larger than 1x1 (:mod:`hetero_sdk_jax.lowering.quantization`: the taps
gathered along one axis on the dot's input side, or all on its output side): 3x3 layers of 16-256
channels 1.25-2.0x (16 at 80x80 1.83x, 32 at 40x40 1.26x, stride 2 1.25-2.0x), 96 into 24 1.15-1.8x;
8 channels 1.09x, within noise."""
MIN_POSITIONS = 2
"""The fewest positions of the data (when known): a 1x1 convolution of one position (squeeze-excitation's)
measured 0.96-1.05x, nothing to gain from its quantizing ops."""


def quantized_convolution(
    data: Output,
    zero_point: Output,
    filters: Output,
    scale: Output,
    filter_sums: Output,
    strides: list[int],
    pads_begin: list[int],
    pads_end: list[int],
    dilations: list[int],
    auto_pad: str = "explicit",
    name: str | None = None,
) -> Node:
    """``conv(data - zero_point, filters) * scale``, the sums exact in integers.

    :param data: ``[N, C, spatial...]`` of i8 or u8 levels, or f32 holding them (integers inside
        ``zero_point``'s type, NaN for level 0, as a Convert to that type reads it: the clamped
        value a QuantizeLinear converts, which the lowering then converts without saturating).
    :param zero_point: one i8 or u8 value, the type of the levels.
    :param filters: ``[O, C, kernel...]`` i8 levels.
    :param scale: f32, one value or ``[O]``: the activation's scale times the filter's.
    :param filter_sums: i32 ``[O]``, ``filters`` summed per output channel (the lowering's zero point
        correction, computed once when the filters are constant; the definition does not read it).
    :param strides: the Convolution's window attributes, through ``auto_pad``.
    """
    attrs = {
        "strides": strides, "pads_begin": pads_begin, "pads_end": pads_end, "dilations": dilations, "auto_pad": auto_pad
    }  # fmt: skip
    return Node(QUANTIZED_CONVOLUTION_OP, [data, zero_point, filters, scale, filter_sums], attrs, name)


def _infer(node: Node) -> list[OutputSpec]:
    data, zero, filters, scale, sums = (node.input_value(i) for i in range(5))
    if zero.element_type not in _LEVELS or data.element_type not in (zero.element_type, Type.f32):
        raise node.error(
            f"data ({data.element_type.value}) must be f32 or zero_point's type ({zero.element_type.value}), "
            "zero_point i8 or u8"
        )
    if filters.element_type != Type.i8 or scale.element_type != Type.f32 or sums.element_type != Type.i32:
        raise node.error("filters must be i8, scale f32 and filter_sums i32")
    shape, kernel = data.partial_shape, filters.partial_shape
    if not (shape.rank_is_static and kernel.rank_is_static and shape.rank == kernel.rank >= 3):
        raise node.error(f"data {shape} and filters {kernel} must be [N, C, spatial...] and [O, C, kernel...]")
    attrs = node.attrs
    spatial = window_output_dims(
        node, shape.dims[2:], kernel.dims[2:], attrs["strides"], attrs["dilations"], attrs["pads_begin"],
        attrs["pads_end"], attrs["auto_pad"],
    )  # fmt: skip
    return [(Type.f32, PartialShape([shape[0], kernel[0], *spatial]))]


def integer_patches(
    x: Any, kernel: tuple[int, ...], strides: list[int], padding: list[tuple[int, int]], dilations: list[int], xp: Any
) -> Any:
    """The windows of ``x`` ``[N, C, spatial...]`` (already padded by ``padding``'s pads; negative ones
    crop here) as ``[N, C * taps, positions]``, channel-major then the taps in order, the layout of a
    ``[O, C, kernel...]`` filter reshaped to ``[O, C * taps]``. ``xp`` is numpy or jax.numpy."""
    crop = [(max(-b, 0), max(-e, 0)) for b, e in padding]
    x = x[(slice(None), slice(None), *(slice(b, x.shape[2 + i] - e) for i, (b, e) in enumerate(crop)))]
    sizes = x.shape[2:]
    out = [(n - (k - 1) * d - 1) // s + 1 for n, k, d, s in zip(sizes, kernel, dilations, strides)]
    taps = []
    for tap in np.ndindex(*kernel):
        window = tuple(slice(t * d, t * d + (o - 1) * s + 1, s) for t, d, o, s in zip(tap, dilations, out, strides))
        taps.append(x[(slice(None), slice(None), *window)])
    stacked = xp.stack(taps, axis=2)
    return stacked.reshape(x.shape[0], x.shape[1] * len(taps), int(np.prod(out))), out


def window_padding(node: Node, sizes: tuple[int, ...], kernel: tuple[int, ...]) -> list[tuple[int, int]]:
    """The op's pads per spatial axis, ``auto_pad`` resolved for ``sizes``."""
    attrs = node.attrs
    begin, end = resolve_pads(
        attrs["auto_pad"], sizes, kernel, attrs["strides"], attrs["dilations"], attrs["pads_begin"], attrs["pads_end"]
    )
    return [(int(b), int(e)) for b, e in zip(begin, end)]


def _definition(node: Node, x: Any, zero: Any, w: Any, scale: Any, filter_sums: Any) -> Any:
    """The op's value in numpy: the levels less the zero point in i32 (exact), padded with zeros,
    patches times filters in i64 (exact), times the scale in f32."""
    x, w = np.asarray(x), np.asarray(w)
    if x.dtype.kind == "f":  # levels held in f32: NaN is level 0, as a Convert reads it
        x = np.where(np.isnan(x), 0.0, x)
    levels = x.astype(np.int32) - np.asarray(zero).astype(np.int32)
    padding = window_padding(node, x.shape[2:], w.shape[2:])
    levels = np.pad(levels, [(0, 0), (0, 0), *((max(b, 0), max(e, 0)) for b, e in padding)])
    patches, out = integer_patches(levels, w.shape[2:], node.attrs["strides"], padding, node.attrs["dilations"], np)
    sums = np.einsum("ok,nkp->nop", w.reshape(w.shape[0], -1).astype(np.int64), patches.astype(np.int64))
    y = sums.astype(np.float32) * np.asarray(scale, np.float32).reshape(-1, 1)
    return y.reshape(x.shape[0], w.shape[0], *out)


QUANTIZED_CONVOLUTION_OP = define(
    OpDef(
        QUANTIZED_CONVOLUTION,
        "quantization",
        _infer,
        inputs=(
            Input("data", _LEVELS | {Type.f32}, doc="[N, C, spatial...] levels (f32: integers, NaN for 0)"),
            Input("zero_point", _LEVELS, doc="one value, the levels' type"),
            Input("filters", frozenset({Type.i8}), doc="[O, C, kernel...] levels"),
            Input("scale", frozenset({Type.f32}), doc="one value or [O]: the data's scale times the filters'"),
            Input("filter_sums", frozenset({Type.i32}), doc="[O]: filters summed per output channel"),
        ),
        attrs=(
            Attr("strides", INTS, doc="step per spatial axis"),
            Attr("pads_begin", INTS, doc="zero levels added before each spatial axis (negative crops)"),
            Attr("pads_end", INTS, doc="zero levels added after each spatial axis"),
            Attr("dilations", INTS, doc="distance between kernel taps"),
            Attr("auto_pad", LOWER_STRING, "explicit", ("explicit", "same_upper", "same_lower", "valid")),
        ),
        version="xla",
        evaluate=_definition,
        doc="conv(data - zero_point, filters) summed exactly in integers, times scale (f32).",
    )
)


def _one_value(value: Output) -> np.ndarray | None:
    """The constant ``value`` when it holds one number, else None."""
    known = constant_value(value)
    return None if known is None or known.size != 1 else np.asarray(known)


def _product_operands(node: Node) -> tuple[Output, np.ndarray] | None:
    """``(operand, constant)`` of a Multiply by a constant, else None."""
    if node.type_name != "Multiply":
        return None
    for index in (0, 1):
        known = constant_value(node.input_value(1 - index))
        if known is not None:
            return node.input_value(index), np.asarray(known)
    return None


def _activation_levels(value: Output) -> tuple[Output, Output, np.ndarray] | None:
    """``(levels, zero point, scale)`` when ``value`` is DequantizeLinear's ``Multiply(Subtract(Convert(
    f32, levels), zp), s)`` (or without the Subtract) with one scale and one zero point."""
    found = _product_operands(value.node)
    if found is None or found[1].size != 1:
        return None
    shifted, scale = found
    zero: np.ndarray | None = np.zeros((), np.float32)
    if shifted.node.type_name == "Subtract":
        zero = _one_value(shifted.node.input_value(1))
        shifted = shifted.node.input_value(0)
    convert = shifted.node
    if zero is None or convert.type_name != "Convert" or shifted.element_type != Type.f32:
        return None
    levels = convert.input_value(0)
    if levels.element_type not in _LEVELS:
        return None
    info = np.iinfo(levels.element_type.numpy)
    if not (float(zero) == int(zero) and info.min <= int(zero) <= info.max):
        return None
    zero_point = _constant(np.asarray(int(zero), levels.element_type.numpy))
    return _clamped_levels(levels), zero_point, scale.astype(np.float32)


def _clamped_levels(levels: Output) -> Output:
    """The f32 value ``levels`` is converted from when that is ``Clamp(integers, lo, hi)`` with bounds
    inside the levels' type (a QuantizeLinear's end), else ``levels``: the lowering converts it to i8
    itself, without the saturating Convert's work (which XLA computes again per gathered tap)."""
    convert = levels.node
    if convert.type_name != "Convert" or convert.input_value(0).element_type != Type.f32:
        return levels
    clamped = convert.input_value(0)
    clamp = clamped.node
    if clamp.type_name != "Clamp" or not holds_integers(clamp.input_value(0)):
        return levels
    low, high = clamp.attrs["min"], clamp.attrs["max"]
    info = np.iinfo(levels.element_type.numpy)
    if not (info.min <= low <= high <= info.max and low == int(low) and high == int(high)):
        return levels
    return clamped


def _filter_levels(value: Output, outputs: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``(levels as i8, scale per output channel)`` when ``value`` is a dequantized integer constant whose
    levels less their zero point fit i8, with one scale or one per output channel (axis 0)."""
    found = _product_operands(value.node)
    if found is None:
        return None
    levels_f32, scale = found
    if scale.size not in (1, outputs) or (scale.size > 1 and scale.shape[0] != outputs):
        return None
    levels = _integer_constant(levels_f32)
    if levels is None:
        return None
    if not (np.all(levels == np.round(levels)) and levels.min(initial=0) >= -128 and levels.max(initial=0) <= 127):
        return None
    return levels.astype(np.int8), np.broadcast_to(scale.astype(np.float32).reshape(-1), (outputs,))


def _integer_constant(value: Output) -> np.ndarray | None:
    """The value (f64) of ``Convert(f32, integer constant)``, less a constant zero point or not, else
    None. Read from the Constant here: ``constant_value`` computes nothing over ``FOLDED_ELEMENTS``
    (65536), and the largest filters (128x128x3x3, 480x480) are the ones that pay most."""
    node, zero = value.node, np.zeros((), np.float64)
    if node.type_name == "Subtract":
        known = constant_value(node.input_value(1))
        if known is None:
            return None
        node, zero = node.input_value(0).node, np.asarray(known, np.float64)
    if node.type_name != "Convert" or not node.input_value(0).element_type.is_integral:
        return None
    source = node.input_value(0)
    levels = source.node.attrs["value"] if source.node.type_name == "Constant" else constant_value(source)
    if levels is None:
        return None
    levels = np.asarray(levels, np.float64)
    if max(np.abs(levels).max(initial=0), np.abs(zero).max(initial=0)) >= 1 << 23:
        return None  # beyond the integers f32 holds exactly, the Convert and Subtract would round
    shifted = levels - zero
    return shifted if shifted.shape == tuple(value.partial_shape.dims) else None


def _pays(kernel: Sequence[int], spatial: Sequence[int]) -> bool:
    """Whether the integer form measured faster for a ``[O, C, kernel...]`` filter on data of spatial
    size ``spatial`` (dynamic sizes: -1)."""
    outputs, channels, *taps = kernel
    if all(d >= 0 for d in spatial) and int(np.prod(spatial)) < MIN_POSITIONS:
        return False
    if any(t > 1 for t in taps):
        return channels >= MIN_KERNEL_CHANNELS and outputs >= MIN_KERNEL_OUTPUTS
    return channels >= MIN_CHANNELS and outputs >= MIN_OUTPUTS


def _constant(value: np.ndarray) -> Output:
    return opset.constant(value).output(0)


class QuantizedConvolutionFusion(MatcherPass):
    """Replaces a Convolution (one group, a constant filter) of a dequantized i8/u8 activation by a
    dequantized integer constant filter with :data:`QUANTIZED_CONVOLUTION_OP` (see the module's
    docstring); runs before the constants are folded."""

    name = "QuantizedConvolutionFusion"
    anchors = ("Convolution",)

    def apply(self, model: Model, node: Node, users: ConsumerMap) -> bool:
        data, filters = node.input_value(0), node.input_value(1)
        if not filters.partial_shape.is_static or not data.partial_shape.rank_is_static:
            return False
        if not _pays(filters.partial_shape.dims, data.partial_shape.dims[2:]):
            return False
        activation = _activation_levels(data)
        weights = _filter_levels(filters, filters.partial_shape[0])
        if activation is None or weights is None:
            return False
        levels, zero, data_scale = activation
        filter_levels, filter_scale = weights
        attrs = node.attrs
        scale = (data_scale.reshape(()) * filter_scale).astype(np.float32)
        sums = filter_levels.reshape(filter_levels.shape[0], -1).sum(axis=1, dtype=np.int32)
        fused = quantized_convolution(
            levels, zero, _constant(filter_levels), _constant(scale), _constant(sums), list(attrs["strides"]),
            list(attrs["pads_begin"]), list(attrs["pads_end"]), list(attrs["dilations"]), attrs["auto_pad"],
            node.friendly_name,
        )  # fmt: skip
        replace_node(model, node, [fused.output(0)], consumers=users)
        return True
