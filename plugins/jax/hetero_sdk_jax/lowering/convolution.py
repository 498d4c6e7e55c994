"""Lowerings of Convolution, GroupConvolution and ConvolutionBackpropData on ``lax.conv_general_dilated``.

Data is OpenVINO's ``NC...`` (or ``N...C`` when the graph lowers a chain channels-last: :mod:`.layout`).
Filters are read ``[..., I, O]`` (:func:`filter_layout`), the layout XLA:CPU's convolution reads: the
graph interpreter stores a constant filter on the device so once (:mod:`.weight_layout`), instead of XLA
copying it from ``[O, I, ...]`` on every call.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node, Type
from hetero_sdk.errors import CompilationError
from hetero_sdk.plugin import backprop_geometry, resolve_pads
from jax import lax

from hetero_sdk_jax.convolution_fusion import CONVOLUTION
from hetero_sdk_jax.depthwise_fusion import DEPTHWISE_CONVOLUTION, MAX_TAPS
from hetero_sdk_jax.focus_convolution import as_focus, focus_block
from hetero_sdk_jax.lowering.activation import hswish
from hetero_sdk_jax.lowering.kernels import concat_pointwise
from hetero_sdk_jax.lowering.kernels import conv2d as conv2d_kernel
from hetero_sdk_jax.lowering.kernels import depthwise as depthwise_kernel
from hetero_sdk_jax.lowering.kernels import gemm as gemm_kernel
from hetero_sdk_jax.lowering.kernels import stem_conv as stem_kernel
from hetero_sdk_jax.lowering.linear_algebra import accumulation
from hetero_sdk_jax.lowering.registry import lowering, precision_of
from hetero_sdk_jax.lowering.weight_layout import WeightLayout, input_layout

_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}
T = TypeVar("T")


def conv(
    x: jnp.ndarray,
    w: jnp.ndarray,
    strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    dilations: Sequence[int],
    lhs_dilation: Sequence[int] | None = None,
    groups: int = 1,
    channels_last: bool = False,
) -> jnp.ndarray:
    """A cross-correlation of ``x`` ``[N, C, ...]`` (``[N, ..., C]`` with ``channels_last``, the result
    too) with ``w`` ``[..., I, O]``; negative pads crop."""
    spatial = _SPATIAL[x.ndim - 2]
    data = f"N{spatial}C" if channels_last else f"NC{spatial}"
    return lax.conv_general_dilated(
        x,
        w,
        window_strides=tuple(strides),
        padding=[(int(b), int(e)) for b, e in padding],
        lhs_dilation=None if lhs_dilation is None else tuple(lhs_dilation),
        rhs_dilation=tuple(dilations),
        dimension_numbers=(data, f"{spatial}IO", data),
        feature_group_count=groups,
        precision=precision_of(x.dtype),
        preferred_element_type=accumulation(x.dtype),
    )


GROUP_FILTERS = {"GroupConvolution", DEPTHWISE_CONVOLUTION}
"""The ops whose filter (input 1) is GroupConvolution's ``[G, O/G, I/G, kernel...]``."""

_MAX_DEPTHWISE_TAPS = MAX_TAPS
"""Depthwise kernels up to 7x7 run as shifted multiply-adds (see :func:`depthwise_conv`)."""


def depthwise_conv(
    x: jnp.ndarray,
    w: jnp.ndarray,
    strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    dilations: Sequence[int],
    channels_last: bool = True,
) -> jnp.ndarray:
    """A grouped convolution with one input channel per group, ``w`` ``[..., 1, C * m]``, as a sum of
    strided slices of ``x`` times one weight per tap; ``x`` is ``[N, ..., C]`` with ``channels_last``
    (the result too), else ``[N, C, ...]``.

    XLA:CPU runs grouped convolutions through a generic path about 25x slower than this (measured on
    a MobileNet-sized 3x3 layer); XLA fuses the slices, products and sums into one loop, which runs
    along the channels when they are last. 16-bit floats are summed in f32, as the other
    convolutions accumulate.

    Measured against the alternatives at PP-OCRv4 rec's layers (3x3 and 5x5, 16 to 480 channels,
    strides 1 and 2, with the bias and hardswish after them): XLA's grouped convolution has no native
    kernel (10-30x slower, also with XLA's YNNPACK convolution fusion enabled); the taps summed
    pairwise, row by row or in four chains, the width or the channels split into blocks, and the
    sum computed channels-first between two transposes all ran within 10 % of this form. XLA:CPU
    drops ``lax.optimization_barrier`` before fusing, so one cannot keep XLA from computing the sum
    again in each consumer of a result that fans out (a squeeze-and-excitation block's).

    Where the lowering may call native kernels, f32 ``[N, H, W, C]`` layers with more than 16 channels
    and multiplier 1 run the native kernel instead (:mod:`.kernels.depthwise`: FMAs over 16 channels,
    8 output columns per weight load, borders read in place). At rec's layers with their bias and
    hardswish (``bench/bench_native_depthwise.py --cpu-time``): 5x5 0.31-0.55x this form, 3x3
    0.55-0.86x, all eleven 4.7 -> 2.7 ms; whole models, native on / off in one process: rec 0.84,
    cls 0.78, det 0.98. The bias and activation then run as a loop of their own, which XLA makes
    slow over 16 or fewer channels (those layers keep this form), unless the graph fused them into
    the kernel (:func:`fused_depthwise`).
    """
    if depthwise_kernel.runs_natively(x, w, strides, padding, dilations, channels_last):
        return depthwise_kernel.native_depthwise(x, w, strides, padding, dilations)
    wide = accumulation(x.dtype)
    if wide is not None:
        x, w = x.astype(wide), w.astype(wide)
    multiplier = w.shape[-1] // x.shape[-1 if channels_last else 1]
    if multiplier > 1:
        x = jnp.repeat(x, multiplier, axis=-1 if channels_last else 1)
    rank = len(padding)
    plain = all(s == 1 for s in strides) and min(v for pads in padding for v in pads) >= 0
    if channels_last and rank == 2 and max(w.shape[:-2]) <= 3 and plain:  # stride 1, no crop
        return _wide_depthwise(x, w, padding, dilations)
    first = 1 if channels_last else 2  # the first spatial axis

    def layout(channel: T, spatial: Sequence[T]) -> tuple[T, ...]:
        return (*spatial, channel) if channels_last else (channel, *spatial)

    x = jnp.pad(x, [(0, 0), *layout((0, 0), [(max(b, 0), max(e, 0)) for b, e in padding])])
    crop = [(max(-b, 0), max(-e, 0)) for b, e in padding]
    x = x[(slice(None), *layout(slice(None), [slice(b, x.shape[first + i] - e) for i, (b, e) in enumerate(crop)]))]
    kernel, sizes, channels = w.shape[:-2], x.shape[first : first + rank], w.shape[-1]
    out_dims = [(size - (k - 1) * d - 1) // s + 1 for size, k, d, s in zip(sizes, kernel, dilations, strides)]
    terms = []
    for tap in np.ndindex(*kernel):
        starts = [t * d for t, d in zip(tap, dilations)]
        limits = [b + (n - 1) * s + 1 for b, n, s in zip(starts, out_dims, strides)]
        window = lax.slice(
            x, (0, *layout(0, starts)), (x.shape[0], *layout(channels, limits)), (1, *layout(1, strides))
        )
        weight = w[(*tap, 0)].reshape(layout(channels, [1] * rank))
        terms.append(window * weight.astype(window.dtype))
    return functools.reduce(operator.add, terms)


def _wide_depthwise(
    x: jnp.ndarray, w: jnp.ndarray, padding: Sequence[tuple[int, int]], dilations: Sequence[int]
) -> jnp.ndarray:
    """:func:`depthwise_conv` at stride 1 on ``[N, H, W, C]`` data, every output row computed across the
    padded width: each tap is then ONE contiguous run of the flattened padded image, and the spare
    columns are cropped at the end.

    Read this way, no tap is the unpadded input itself: the ordinary form's centre tap,
    ``slice(pad(x))``, is simplified by XLA to ``x``, whose producer XLA then fuses into this loop, so a
    stem convolution feeding a depthwise layer (MobileNet, PP-LCNet) was computed twice, 27 taps per
    element again (PP-LCNet's first two layers at 224x224: 490 -> 265 us). Measured as fast as the
    ordinary form for 3x3 kernels and slower for 5x5 ones (the caller keeps those ordinary).
    """
    (height_pads, width_pads), (kernel_h, kernel_w) = padding, w.shape[:-2]
    # one spare row past the padded image keeps the last taps' reads of the spare columns inside it
    padded = jnp.pad(x, [(0, 0), (height_pads[0], height_pads[1] + 1), width_pads, (0, 0)])
    batch, rows, pitch, channels = padded.shape
    out_h, out_w = rows - 1 - (kernel_h - 1) * dilations[0], pitch - (kernel_w - 1) * dilations[1]
    flat = padded.reshape(batch, -1)
    span = out_h * pitch * channels
    terms = []
    for i, j in np.ndindex(kernel_h, kernel_w):
        start = (i * dilations[0] * pitch + j * dilations[1]) * channels
        window = lax.slice(flat, (0, start), (batch, start + span)).reshape(batch, out_h * pitch, channels)
        terms.append(window * w[i, j, 0].astype(window.dtype))
    wide = functools.reduce(operator.add, terms).reshape(batch, out_h, pitch, channels)
    return wide[:, :, :out_w, :]


_MAX_FEW_CHANNELS, _MAX_FEW_CHANNEL_TERMS = 4, stem_kernel.LOOP_TERMS
"""Convolutions of ``[N, C, ...]`` data with at most 4 input channels and at most 64 channels x
kernel taps (an RGB image's 3x3 stem: 27) run as shifted multiply-adds (see :func:`few_channel_conv`);
wider data is left to XLA's convolution, a blocked matrix product."""


def few_channel_conv(
    x: jnp.ndarray, w: jnp.ndarray, strides: Sequence[int], padding: Sequence[tuple[int, int]], dilations: Sequence[int]
) -> jnp.ndarray:
    """A convolution of ``x`` ``[N, C, ...]`` with few channels by ``w`` ``[..., C, O]``, as a sum of
    one strided slice of ``x`` per channel and tap times that tap's ``O`` weights, giving
    ``[N, ..., O]``.

    The slices read ``x`` where it lies, so the data is never transposed, and XLA fuses the sum into
    one loop along ``O``; XLA:CPU's convolution of a 3-channel image first moves it channels-last,
    then runs a kernel that has little to vectorise over 3 channels. Each tap pads its own slice
    (:func:`_tap_window`) rather than all taps slicing one padded copy of ``x``: XLA fuses those pads
    into the loop, where it wrote the padded image first (YOLOv8n's stem, 3 -> 16 channels at
    320x320, stride 2: 926 -> 702 us in isolation, one thread).
    """
    wide = accumulation(x.dtype)
    if wide is not None:
        x, w = x.astype(wide), w.astype(wide)
    kernel, sizes = w.shape[:-2], x.shape[2:]
    out = [
        (n + b + e - (k - 1) * d - 1) // s + 1 for n, (b, e), k, d, s in zip(sizes, padding, kernel, dilations, strides)
    ]
    terms = []
    for channel in range(x.shape[1]):
        for tap in np.ndindex(*kernel):
            firsts = [t * d - b for t, d, (b, _) in zip(tap, dilations, padding)]
            window = _tap_window(x[:, channel : channel + 1], firsts, strides, out)
            window = window.reshape(window.shape[0], *window.shape[2:], 1)  # (the size-1 channel axis last)
            terms.append(window * w[(*tap, channel)].astype(window.dtype))
    return functools.reduce(operator.add, terms)


def _tap_window(x: jnp.ndarray, firsts: Sequence[int], strides: Sequence[int], out: Sequence[int]) -> jnp.ndarray:
    """What one kernel tap reads for every output position of ``x`` ``[N, C, ...]``: output ``o`` along
    a spatial axis reads input ``firsts[axis] + o * strides[axis]``, zero outside the input (the
    convolution's padding). The strided slice of the positions inside, padded with zeros to ``out``."""
    starts, limits, pads = [], [], []
    for first, stride, count, size in zip(firsts, strides, out, x.shape[2:]):
        before = min(count, -(first // stride)) if first < 0 else 0  # outputs reading before the input
        last = min(count - 1, (size - 1 - first) // stride)  # the last output reading inside it
        if last < before:  # this tap reads padding only
            return jnp.zeros((*x.shape[:2], *out), x.dtype)
        starts.append(first + before * stride)
        limits.append(first + last * stride + 1)
        pads.append((before, count - 1 - last, 0))
    window = lax.slice(x, (0, 0, *starts), (*x.shape[:2], *limits), (1, 1, *strides))
    return lax.pad(window, jnp.zeros((), x.dtype), [(0, 0, 0), (0, 0, 0), *pads])


def few_channels(node: Node, x: jnp.ndarray) -> bool:
    """Whether ``node``, a Convolution of ``x`` ``[N, C, ...]``, runs as :func:`few_channel_conv` or on the
    native stem kernel (:func:`_stem_kernel_takes`)."""
    if node.type_name not in ("Convolution", CONVOLUTION):
        return False
    taps = math.prod(node.input_value(1).partial_shape.to_shape()[2:])
    channels = x.shape[1]
    few = channels <= _MAX_FEW_CHANNELS and channels * taps <= _MAX_FEW_CHANNEL_TERMS
    return few or _stem_kernel_takes(node, x) or _focus_form(node, x)


def _window(node: Node, x: jnp.ndarray, kernel: Sequence[int]) -> tuple[list[int], list[tuple[int, int]], list[int]]:
    """The strides, explicit pads and dilations of ``node``, a convolution of ``x`` ``[N, C, ...]``."""
    attrs = node.attrs
    strides, dilations = attrs["strides"], attrs["dilations"]
    begin, end = resolve_pads(
        attrs["auto_pad"], x.shape[2:], kernel, strides, dilations, attrs["pads_begin"], attrs["pads_end"]
    )
    return list(strides), list(zip(begin, end)), list(dilations)


def _stem_kernel_takes(node: Node, x: jnp.ndarray) -> bool:
    """Whether the native stem kernel computes ``node``, a Convolution of channels-first ``x`` (the image)."""
    outputs, inputs, *kernel = _filter_shape(node)
    if len(kernel) != 2 or x.ndim != 4 or node.input_value(1).element_type != Type.f32:
        return False
    filters = jax.ShapeDtypeStruct((*kernel, inputs, outputs), jnp.float32)
    return stem_kernel.runs_natively(x, filters, *_window(node, x, kernel))


def _focus_form(node: Node, x: jnp.ndarray) -> bool:
    """Whether ``node``, a convolution of channels-first ``x`` with few channels, is the Focus rewrite's result
    (:func:`~hetero_sdk_jax.focus_convolution.focus_block`), computed as the Focus and XLA's convolution where the
    stem kernel does not take it."""
    _, inputs, *kernel = _filter_shape(node)
    if len(kernel) != 2 or x.ndim != 4 or inputs > _MAX_FEW_CHANNELS:
        return False
    return focus_block(x.shape[2:], kernel, *_window(node, x, kernel)) is not None


def convolution_from_channels_first(node: Node, x: jnp.ndarray, w: jnp.ndarray) -> jnp.ndarray:
    """A Convolution (or :data:`~hetero_sdk_jax.convolution_fusion.CONVOLUTION_OP`'s sum) of ``x``
    ``[N, C, ...]`` with few channels (:func:`few_channels`), ``[N, ..., O]`` out, by the native stem kernel
    (:mod:`.kernels.stem_conv`) where it runs, else as the Focus rewrite's inverse for a layer too large for
    :func:`few_channel_conv` (:func:`~hetero_sdk_jax.focus_convolution.as_focus`), else by that; ``w`` as the
    graph has it, :class:`~.weight_layout.Prepared` or blocked (see :func:`_read_filter`)."""
    w = _read_filter(node, w)
    strides, padding, dilations = _window(node, x, w.shape[:-2])
    if stem_kernel.runs_natively(x, w, strides, padding, dilations):
        return stem_kernel.native_stem_conv(x, w, strides, padding)
    block = focus_block(x.shape[2:], w.shape[:2], strides, padding, dilations) if x.ndim == 4 else None
    if block is not None and x.shape[1] * math.prod(w.shape[:-2]) > _MAX_FEW_CHANNEL_TERMS:
        return as_focus(x, w, block, padding, lambda f, k, p: conv(f, k, [1, 1], p, [1, 1], channels_last=True))
    return few_channel_conv(x, w, strides, padding, dilations)


def pointwise(w: jnp.ndarray, padding: Sequence[tuple[int, int]]) -> bool:
    """Whether a convolution by ``w`` ``[..., I, O]`` is a 1x1 one without pads (dilations then change
    nothing): :func:`pointwise_conv` computes it."""
    return all(k == 1 for k in w.shape[:-2]) and all(tuple(p) == (0, 0) for p in padding)


def pointwise_conv(x: jnp.ndarray, w: jnp.ndarray, strides: Sequence[int]) -> jnp.ndarray:
    """A 1x1 convolution of channels-last ``x`` ``[N, ..., C]`` by ``w`` ``[1, ..., C, O]`` without pads,
    as one matrix product against ``w`` read as ``[C, O]`` (the strided pixels first taken): XLA:CPU
    runs it faster than its convolution (PP-OCRv4 rec's 13 1x1 layers).
    """
    if any(s != 1 for s in strides):
        x = x[(slice(None), *[slice(None, None, s) for s in strides], slice(None))]
    return lax.dot_general(
        x,
        w.reshape(w.shape[-2], w.shape[-1]),
        (((x.ndim - 1,), (0,)), ((), ())),
        precision=precision_of(x.dtype),
        preferred_element_type=accumulation(x.dtype),
    )


def line_axis(x: jnp.ndarray, w: jnp.ndarray, padding: Sequence[tuple[int, int]]) -> int | None:
    """The one spatial axis (counted from 0 over the spatial axes) along which a convolution of
    channels-last ``x`` ``[N, ..., C]`` by ``w`` ``[..., I, O]`` slides, when every other spatial axis
    has size 1 in the data and the kernel and no pads (a 1-D convolution, possibly written as a 2-D one
    with a ``k x 1`` kernel); None otherwise, or when the kernel has a single tap."""
    sizes, kernel = x.shape[1:-1], w.shape[:-2]
    sliding = [i for i, k in enumerate(kernel) if k > 1]
    if len(sliding) != 1:
        return None
    (axis,) = sliding
    flat = all(sizes[i] == 1 and tuple(padding[i]) == (0, 0) for i in range(len(sizes)) if i != axis)
    return axis if flat else None


def line_conv(
    x: jnp.ndarray,
    w: jnp.ndarray,
    axis: int,
    stride: int,
    padding: tuple[int, int],
    dilation: int,
) -> jnp.ndarray:
    """A convolution of channels-last ``x`` ``[N, ..., C]`` by ``w`` ``[..., C, O]`` sliding along the
    spatial axis ``axis`` alone (:func:`line_axis`), as a 1-D convolution of ``x`` read as ``[N, L, C]``
    by ``w`` read as ``[K, C, O]``. ``[N, ..., O]`` out.

    XLA:CPU runs a 1-D convolution through its convolution library directly, where the same layer
    written as a 2-D one with a ``K x 1`` kernel went through a general path about 2x slower. Measured
    on magika's layer (256 -> 512 channels, 5 taps, 512 long; one thread, in one process, interleaved):
    the 1-D convolution 15 % faster over the whole model than one matrix product of the ``K`` shifted
    windows stacked as ``[N, L, K * C]`` (the form before), whose windows XLA built by recomputing
    the producer's GELU and layer norm for each tap.
    """
    rank, channels = x.ndim - 2, x.shape[-1]
    line = x.reshape(x.shape[0], x.shape[1 + axis], channels)
    taps = w.shape[axis]
    product = lax.conv_general_dilated(
        line,
        w.reshape(taps, channels, w.shape[-1]),
        window_strides=(stride,),
        padding=[(int(padding[0]), int(padding[1]))],
        rhs_dilation=(dilation,),
        dimension_numbers=("NWC", "WIO", "NWC"),
        precision=precision_of(x.dtype),
        preferred_element_type=accumulation(x.dtype),
    )
    shape = [1] * rank
    shape[axis] = product.shape[1]
    return product.reshape(x.shape[0], *shape, w.shape[-1])


def _filter_shape(node: Node, index: int = 1) -> list[int]:
    shape = node.input_value(index).partial_shape
    if not shape.is_static:
        raise CompilationError(f"XLA: {node.type_name} '{node.friendly_name}' has a filter of dynamic shape {shape}")
    return [int(d) for d in shape.to_shape()]


def filter_layout(node: Node) -> WeightLayout:
    """How the lowering of ``node``, a Convolution or GroupConvolution (or an op with GroupConvolution's
    filter: :data:`GROUP_FILTERS`), reads its filter: ``[O, I, ...]``
    (``[G, O/G, I/G, ...]``) as ``[..., I, O]`` (``[..., I/G, O]``, the groups' outputs one after the
    other), the layout XLA:CPU's convolution reads (and in which every route here reads a tap's
    weights as one contiguous row).

    :raises CompilationError: for a filter of dynamic shape (shapes are static once lowered).
    """
    dims = _filter_shape(node)
    if node.type_name in GROUP_FILTERS:
        groups, outputs, inputs, *kernel = dims
        rank = len(kernel)
        return WeightLayout((*range(3, 3 + rank), 2, 0, 1), (*kernel, inputs, groups * outputs))
    rank = len(dims) - 2
    return WeightLayout((*range(2, 2 + rank), 1, 0))


def _read_filter(node: Node, w: Any) -> Any:
    """The filter of ``node`` in :func:`filter_layout`, from ``w`` as the graph has it, as
    :class:`~.weight_layout.Prepared`, or blocked for the native kernel (:func:`.kernels.conv2d.prepare`:
    put back by XLA, for a route that does not take the kernel after all)."""
    if conv2d_kernel.is_blocked(node, w):
        return conv2d_kernel.unblocked_filter(w, _filter_shape(node)[0])
    if gemm_kernel.is_packed_filter(node, w):
        outputs, inputs = _filter_shape(node)[:2]
        return gemm_kernel.pointwise_filter(w, inputs, outputs)
    return filter_layout(node).read(w)


@input_layout("Convolution", "GroupConvolution")
def _convolution_layouts(node: Node) -> dict[int, WeightLayout]:
    return {1: filter_layout(node)}


@lowering("Convolution", "GroupConvolution")
def convolution(node: Node, x: jnp.ndarray, w: Any, channels_last: bool = False) -> jnp.ndarray:
    """Convolution and GroupConvolution of ``x`` ``[N, C, ...]``, or ``[N, ..., C]`` with
    ``channels_last`` (the layout the graph lowers convolution chains in: :mod:`.layout`); ``w`` as
    the graph has it, or :class:`~.weight_layout.Prepared` in :func:`filter_layout`, or blocked for the
    native kernel (:func:`.kernels.conv2d.prepare`)."""
    attrs = node.attrs
    blocked = w if conv2d_kernel.is_blocked(node, w) else None
    w = _read_filter(node, w)
    groups = _filter_shape(node)[0] if node.type_name == "GroupConvolution" else 1
    strides, dilations = attrs["strides"], attrs["dilations"]
    sizes, channels = (x.shape[1:-1], x.shape[-1]) if channels_last else (x.shape[2:], x.shape[1])
    begin, end = resolve_pads(
        attrs["auto_pad"], sizes, w.shape[:-2], strides, dilations, attrs["pads_begin"], attrs["pads_end"]
    )
    padding = list(zip(begin, end))
    depthwise = groups > 1 and groups == channels and w.shape[-2] == 1
    if depthwise and math.prod(w.shape[:-2]) <= _MAX_DEPTHWISE_TAPS and jnp.issubdtype(x.dtype, jnp.floating):
        return depthwise_conv(x, w, strides, padding, dilations, channels_last)
    if channels_last and groups == 1 and pointwise(w, padding) and jnp.issubdtype(x.dtype, jnp.floating):
        return pointwise_conv(x, w, strides)
    if channels_last and groups == 1 and conv2d_kernel.runs_natively(x, w, strides, padding, dilations):
        return conv2d_kernel.native_conv2d(x, w if blocked is None else blocked, strides, padding, w.shape[-1])
    axis = line_axis(x, w, padding) if channels_last and groups == 1 else None
    if axis is not None and jnp.issubdtype(x.dtype, jnp.floating):
        return line_conv(x, w, axis, strides[axis], padding[axis], dilations[axis])
    return conv(x, w, strides, padding, dilations, groups=groups, channels_last=channels_last)


convolution.prepare = conv2d_kernel.prepare  # type: ignore[attr-defined]


def _scatter_by_product(
    x: jnp.ndarray, w: jnp.ndarray, begin: Sequence[int], out: Sequence[int], channels_last: bool = False
) -> jnp.ndarray:
    """A transposed convolution whose kernel equals its strides: each input pixel writes its own
    ``kernel``-sized block, so the result is one product over the channels, its kernel axes then
    interleaved with the spatial ones, and the output window cut (or zero-padded) from it. XLA:CPU
    runs the general form as a convolution of the stride-dilated data, mostly over inserted zeros:
    1.4-2x slower on PP-OCRv4 det's 2x2 upsamplers. ``x`` and the result are ``[N, ..., C]`` with
    ``channels_last``."""
    rank, kernel = x.ndim - 2, w.shape[2:]
    sizes = x.shape[1:-1] if channels_last else x.shape[2:]
    product = jnp.tensordot(
        x,
        w,
        axes=([x.ndim - 1 if channels_last else 1], [0]),
        precision=precision_of(x.dtype),
        preferred_element_type=accumulation(x.dtype),
    )  # [N, *sizes, O, *kernel]
    blocks = [n * k for n, k in zip(sizes, kernel)]
    interleaved = [axis for i in range(rank) for axis in (1 + i, rank + 2 + i)]
    if channels_last:
        full = jnp.transpose(product, [0, *interleaved, rank + 1]).reshape(x.shape[0], *blocks, w.shape[1])
    else:
        full = jnp.transpose(product, [0, rank + 1, *interleaved]).reshape(x.shape[0], w.shape[1], *blocks)
    window = [(-b, o - (n * k - b), 0) for b, o, n, k in zip(begin, out, sizes, kernel)]
    none = (0, 0, 0)
    return lax.pad(full, jnp.zeros((), full.dtype), [none, *window, none] if channels_last else [none, none, *window])


def _by_product(node: Node) -> bool:
    """Whether a ConvolutionBackpropData runs as :func:`_scatter_by_product` (its kernel is its strides)."""
    attrs = node.attrs
    kernel = _filter_shape(node)[2:]
    return tuple(kernel) == tuple(attrs["strides"]) and all(d == 1 for d in attrs["dilations"])


def backprop_filter_layout(node: Node) -> WeightLayout | None:
    """How the lowering of ``node``, a ConvolutionBackpropData, reads its filter ``[I, O, ...]``: as the
    convolution it runs reads it, flipped along the kernel axes and ``[..., I, O]``; None when it runs
    as a product reading the filter as it lies (:func:`_scatter_by_product`)."""
    if _by_product(node):
        return None
    rank = len(_filter_shape(node)) - 2
    return WeightLayout((*range(2, 2 + rank), 0, 1), flip=tuple(range(rank)))


@input_layout("ConvolutionBackpropData")
def _backprop_layouts(node: Node) -> dict[int, WeightLayout]:
    layout = backprop_filter_layout(node)
    return {} if layout is None else {1: layout}


@input_layout(DEPTHWISE_CONVOLUTION)
def _depthwise_layouts(node: Node) -> dict[int, WeightLayout]:
    return {1: filter_layout(node)}


@lowering(DEPTHWISE_CONVOLUTION)
def fused_depthwise(node: Node, x: jnp.ndarray, w: Any, bias: Any, channels_last: bool = False) -> jnp.ndarray:
    """:data:`~hetero_sdk_jax.depthwise_fusion.DEPTHWISE_CONVOLUTION_OP`, ``activation(depthwise(x, w) + bias)``,
    of ``x`` ``[N, C, H, W]``, or ``[N, H, W, C]`` with ``channels_last`` (:mod:`.layout`); ``bias`` one value
    per channel in any broadcastable shape. The native kernel adds the bias and applies the activation
    before each store where :func:`~.kernels.depthwise.runs_natively` says it runs (``fused``: from
    :data:`~.kernels.depthwise.MIN_FUSED_CHANNELS` channels); elsewhere the unfused ops' own lowerings run
    one after the other (:func:`depthwise_conv`, the Add, Relu's maximum or :func:`~.activation.hswish`),
    which XLA fuses into one loop."""
    attrs = node.attrs
    w = filter_layout(node).read(w)
    strides, dilations = attrs["strides"], attrs["dilations"]
    sizes, channels = (x.shape[1:-1], x.shape[-1]) if channels_last else (x.shape[2:], x.shape[1])
    begin, end = resolve_pads(
        attrs["auto_pad"], sizes, w.shape[:-2], strides, dilations, attrs["pads_begin"], attrs["pads_end"]
    )
    padding = list(zip(begin, end))
    per_channel = jnp.broadcast_to(jnp.asarray(bias, jnp.float32).reshape(-1), (channels,))
    activation = attrs["activation"]
    if depthwise_kernel.runs_natively(x, w, strides, padding, dilations, channels_last, fused=True):
        return depthwise_kernel.native_depthwise(x, w, strides, padding, dilations, per_channel, activation)
    y = depthwise_conv(x, w, strides, padding, dilations, channels_last)
    y = y + (per_channel if channels_last else per_channel.reshape(channels, 1, 1))
    if activation == "relu":
        return jnp.maximum(y, 0)
    return hswish(node, y) if activation == "hswish" else y


@lowering("ConvolutionBackpropData")
def convolution_backprop_data(
    node: Node, x: jnp.ndarray, w: Any, output_shape: object = None, channels_last: bool = False
) -> jnp.ndarray:
    """ConvolutionBackpropData of ``x`` ``[N, C, ...]``, or ``[N, ..., C]`` with ``channels_last``
    (the result too); ``w`` as the graph has it, or :class:`~.weight_layout.Prepared` in
    :func:`backprop_filter_layout`."""
    attrs = node.attrs
    kernel, sizes = _filter_shape(node)[2:], (x.shape[1:-1] if channels_last else x.shape[2:])
    strides, dilations = attrs["strides"], attrs["dilations"]
    target = None if output_shape is None else [int(v) for v in output_shape.reshape(-1)]  # type: ignore[attr-defined]
    begin, out = backprop_geometry(node, sizes, kernel, target)
    layout = backprop_filter_layout(node)
    if layout is None:
        return _scatter_by_product(x, w, begin, out, channels_last)
    # The transposed convolution is a convolution of the stride-dilated data with the flipped,
    # in/out-swapped filters (read so: ``layout``); its pads select the output window of the full
    # result (negative: crop, past the end: zeros).
    flipped = layout.read(w)
    padding = []
    for b, o, size, k, s, d in zip(begin, out, sizes, kernel, strides, dilations):
        edge = (k - 1) * d
        full = s * (size - 1) + edge + 1
        padding.append((edge - b, edge + b + o - full))
    return conv(x, flipped, [1] * len(kernel), padding, dilations, lhs_dilation=strides, channels_last=channels_last)


@input_layout(CONVOLUTION)
def _fused_layouts(node: Node) -> dict[int, WeightLayout]:
    return {1: filter_layout(node)}


@lowering(CONVOLUTION)
def fused_convolution(node: Node, x: jnp.ndarray, w: Any, bias: Any, channels_last: bool = False) -> jnp.ndarray:
    """:data:`~hetero_sdk_jax.convolution_fusion.CONVOLUTION_OP`, ``activation(convolution(x, w) + bias)``,
    of ``x`` ``[N, C, H, W]``, or ``[N, H, W, C]`` with ``channels_last`` (:mod:`.layout`); ``w`` as
    :func:`convolution` takes it, ``bias`` one value per channel in any broadcastable shape. The native
    kernel adds the bias and applies the activation before each store where
    :func:`~.kernels.conv2d.runs_natively` says it runs (an activation it lacks, HSwish, then applied by XLA
    after it), or, for a 1x1 convolution whose filter
    :func:`~.kernels.gemm.prepare_pointwise` packed, the native GEMM kernel reading the pixels ``[N H W, I]`` in
    place (its in-place path, the bias and activation in its epilogue); elsewhere :func:`convolution`, then the
    bias and the activation as the unfused ops lower them, which XLA fuses into one loop."""
    if channels_last and gemm_kernel.is_packed_filter(node, w) and x.dtype == jnp.float32:
        outputs = _filter_shape(node)[0]
        per_channel = jnp.broadcast_to(jnp.asarray(bias, jnp.float32).reshape(-1), (outputs,))
        if (parts := concat_pointwise.operands_of(x)) is not None:  # a channel concatenate: its parts in place
            return concat_pointwise.native_fused_concat_matmul(parts, w, outputs, per_channel, node.attrs["activation"])
        return gemm_kernel.native_fused_matmul(x, w, outputs, per_channel, node.attrs["activation"])
    if channels_last:
        blocked = w if conv2d_kernel.is_blocked(node, w) else None
        read = _read_filter(node, w)
        strides, dilations = node.attrs["strides"], node.attrs["dilations"]
        begin, end = resolve_pads(
            node.attrs["auto_pad"], x.shape[1:-1], read.shape[:-2], strides, dilations,
            node.attrs["pads_begin"], node.attrs["pads_end"],
        )  # fmt: skip
        padding = list(zip(begin, end))
        if conv2d_kernel.runs_natively(x, read, strides, padding, dilations, fused=True):
            outputs = read.shape[-1]
            per_channel = jnp.broadcast_to(jnp.asarray(bias, jnp.float32).reshape(-1), (outputs,))
            kernel_filter = read if blocked is None else blocked
            activation = node.attrs["activation"]
            inside = activation if activation in conv2d_kernel.ACTIVATIONS else "none"  # hswish: after, in XLA
            y = conv2d_kernel.native_conv2d(x, kernel_filter, strides, padding, outputs, per_channel, inside)
            return y if inside == activation else hswish(node, y)
    return biased_activation(node, convolution(node, x, w, channels_last), bias, channels_last)


def _prepare_fused(node: Node, values: Sequence[np.ndarray | None]) -> dict[int, np.ndarray | None]:
    """The fused convolution's compile-time filter: packed for the GEMM kernel (1x1), else blocked for the
    convolution kernel (3x3), else ``{}``."""
    return gemm_kernel.prepare_pointwise(node, values) or conv2d_kernel.prepare(node, values)


fused_convolution.prepare = _prepare_fused  # type: ignore[attr-defined]


def biased_activation(node: Node, y: jnp.ndarray, bias: Any, channels_last: bool) -> jnp.ndarray:
    """``activation(y + bias)`` for :data:`~hetero_sdk_jax.convolution_fusion.CONVOLUTION_OP` ``node``'s sum
    ``y`` (``[N, ..., C]`` with ``channels_last``), as the unfused Add, Relu, HSwish and SiLU lower (SiLU as
    :func:`~.elementwise.multiply` computes ``x * Sigmoid(x)``: ``x * (0.5 + 0.5 * tanh(x / 2))``)."""
    channels = y.shape[-1] if channels_last else y.shape[1]
    per_channel = jnp.broadcast_to(jnp.asarray(bias, y.dtype).reshape(-1), (channels,))
    y = y + (per_channel if channels_last else per_channel.reshape(channels, *([1] * (y.ndim - 2))))
    activation = node.attrs["activation"]
    if activation == "relu":
        return jnp.maximum(y, 0)
    if activation == "silu":
        return y * (0.5 + 0.5 * jnp.tanh(0.5 * y))
    return hswish(node, y) if activation == "hswish" else y


def fused_convolution_from_channels_first(node: Node, x: jnp.ndarray, w: Any, bias: Any) -> jnp.ndarray:
    """:func:`fused_convolution` of ``x`` ``[N, C, ...]`` with few channels (:func:`few_channels`),
    ``[N, ..., O]`` out: the native stem kernel adds the bias and applies the activation where it runs, else
    :func:`convolution_from_channels_first`'s sum then :func:`biased_activation`."""
    if not _stem_kernel_takes(node, x):
        return biased_activation(node, convolution_from_channels_first(node, x, w), bias, channels_last=True)
    w = _read_filter(node, w)
    strides, padding, _ = _window(node, x, w.shape[:-2])
    per_channel = jnp.broadcast_to(jnp.asarray(bias, jnp.float32).reshape(-1), (w.shape[-1],))
    return stem_kernel.native_stem_conv(x, w, strides, padding, per_channel, node.attrs["activation"])
