"""XLA's lowering of :data:`~hetero_sdk_jax.quantized_convolution.QUANTIZED_CONVOLUTION_OP`: i8 dots
accumulating in i32, the taps of the kernel gathered either on the dot's output side or partly on its
input side.

u8 levels are shifted to i8 by flipping their top bit (``x - 128``), the zero point with them; the
pads are filled with the shifted zero point (a zero level), so ``conv(x - zp, w)`` is
``conv(x', w) - zp' * sum(w)`` with ``zp' = zp - 128`` (0 for i8 data without a zero point), the
filter sums per output channel a constant. XLA:CPU runs i8 convolutions 30-120x slower than f32
ones but i8 dots faster than f32 ones (docs/xla.md has the figures).

Two forms, both exact in i32:

- :func:`shifted_products`: per phase of the strides, ONE dot of the phase's positions by the filters
  of every tap reading that phase, then the taps' products shifted to their output positions and
  summed. Its dot writes ``taps x O`` i32 sums per position.
- :func:`row_products`: the taps along the last spatial axis gathered on the input side first (``k x C``
  levels per position, one byte each), then :func:`shifted_products` over the other axes: a 3x3
  kernel's dot writes ``3 x O`` sums per position instead of ``9 x O``, at the cost of XLA computing the
  ops that produce the levels once per gathered tap (it fuses them into the gathering).

:func:`quantized_convolution` takes the rows where the sums outweigh the levels gathered (``2 O >= C``,
YOLOv8n's 16-256 channel 3x3 layers: the whole model 0.77x the time of the shifted form, in one
process, interleaved), the shifted form elsewhere (PP-OCRv4 det's 3x3 96 -> 24 layers, whose levels
come from the upsampling adds of its FPN: the rows made the model 6 % slower).
"""

from __future__ import annotations

import functools
import math
import operator
import threading
from collections.abc import Callable, Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node, Type
from jax import lax

from hetero_sdk_jax.lowering.registry import lowering
from hetero_sdk_jax.lowering.weight_layout import PreparedByIdentity, WeightLayout, aligned_read_only, input_layout
from hetero_sdk_jax.quantized_convolution import QUANTIZED_CONVOLUTION, window_padding

__all__ = ["Columns", "filter_layout", "quantized_convolution", "row_products", "shifted_products", "takes_rows"]


def _as_int8(x: Any, zero: Any, unsigned: bool) -> tuple[Any, Any]:
    """``x`` and its zero point as i8 with the same differences: u8 levels (``unsigned``) shifted by
    -128. f32 levels (integers in the zero point's type, NaN for level 0) are shifted and converted in
    one step: inside the type's range the conversion needs none of a saturating Convert's work."""
    if unsigned:
        zero8 = lax.bitcast_convert_type(jnp.asarray(zero, jnp.uint8).reshape(()) ^ jnp.uint8(0x80), jnp.int8)
    else:
        zero8 = jnp.asarray(zero, jnp.int8).reshape(())
    if jnp.issubdtype(x.dtype, jnp.floating):
        levels = jnp.where(jnp.isnan(x), jnp.float32(0), x)
        return lax.convert_element_type(levels - 128 if unsigned else levels, jnp.int8), zero8
    if unsigned:
        return lax.bitcast_convert_type(x ^ jnp.uint8(0x80), jnp.int8), zero8
    return x, zero8


Columns = Callable[[list[tuple[int, ...]]], Any]
"""``columns(taps)``: the filters of those taps side by side, ``[C, len(taps) * O]`` (tap-major)."""


def takes_rows(shape: Sequence[int]) -> bool:
    """Whether a ``[O, C, kernel...]`` filter is applied as :func:`row_products` (see the module)."""
    outputs, channels = shape[0], shape[1]
    return shape[-1] > 1 and 2 * outputs >= channels


def filter_layout(node: Node) -> WeightLayout | None:
    """The filter as one ``[C', taps * O]`` matrix, the layout a one-phase product reads (stride 1, or
    1 along every axis with more than one tap left to the dot), so that a filter the executable takes
    as an argument is arranged once, when the model is compiled; None for several phases (a constant
    filter is then arranged by :func:`prepare`, a computed one sliced per phase on each call)."""
    outputs, channels, *kernel = node.input_value(2).partial_shape.to_shape()
    rank, strides = len(kernel), node.attrs["strides"]
    if takes_rows((outputs, channels, *kernel)):
        if any(k > 1 and s > 1 for k, s in zip(kernel[:-1], strides[:-1])):
            return None
        # [O, C, k0, ..., k_last] -> [k_last, C, k0, ...,  O]: the gathered windows' rows, the other taps' columns
        layout = (rank + 1, 1, *range(2, rank + 1), 0)
        return WeightLayout(layout, (kernel[-1] * channels, math.prod(kernel[:-1]) * outputs))
    if any(k > 1 and s > 1 for k, s in zip(kernel, strides)):
        return None
    return WeightLayout((1, *range(2, rank + 2), 0), (channels, math.prod(kernel) * outputs))


@input_layout(QUANTIZED_CONVOLUTION)
def _filter_layouts(node: Node) -> dict[int, WeightLayout]:
    layout = filter_layout(node)
    return {} if layout is None else {2: layout}


@lowering(QUANTIZED_CONVOLUTION)
def quantized_convolution(
    node: Node, x: Any, zero: Any, w: Any, scale: Any, sums: Any, channels_last: bool = False
) -> Any:
    """``conv(x - zero, w) * scale`` of ``x`` ``[N, C, ...]``, or ``[N, ..., C]`` with ``channels_last``
    (the result too: :mod:`.layout` lowers it so), the sums in i32; ``sums`` the filter's per output
    channel (the zero point's correction)."""
    if not channels_last:
        y = quantized_convolution(node, jnp.moveaxis(x, 1, -1), zero, w, scale, sums, channels_last=True)
        return jnp.moveaxis(y, -1, 1)
    shape = tuple(node.input_value(2).partial_shape.to_shape())
    unsigned = node.input_value(1).element_type == Type.u8
    padding = window_padding(node, x.shape[1:-1], shape[2:])
    grow = [(max(b, 0), max(e, 0), 0) for b, e in padding]
    x8, zero8 = _as_int8(x, zero, unsigned)
    x8 = lax.pad(x8, zero8, [(0, 0, 0), *grow, (0, 0, 0)])
    rows = takes_rows(shape)
    layout = filter_layout(node)
    if layout is not None:
        matrix = layout.read(w)
        columns: Columns = lambda taps: matrix  # noqa: E731  (one phase: every tap)
    elif getattr(w, "ndim", 0) == 2:  # prepared at compile time: every phase's columns side by side
        columns = _phase_columns(w, _phase_taps(shape, node.attrs["strides"], node.attrs["dilations"]), shape[0])
    else:
        columns = _graph_columns(jnp.moveaxis(w, -1, 1).reshape(_rows_shape(shape)) if rows else w)
    form = _rows if rows else _shifted
    y = form(x8, shape, node.attrs["strides"], padding, node.attrs["dilations"], columns)
    correction = zero8.astype(jnp.int32) * jnp.reshape(sums, (-1,))
    return (y - correction).astype(jnp.float32) * jnp.reshape(scale, (-1,))


def _phase_taps(
    shape: tuple[int, ...], strides: Sequence[int], dilations: Sequence[int]
) -> dict[tuple[int, ...], list[tuple[int, ...]]]:
    """The taps of the filter the dot reads (:func:`_rows_shape`'s for the gathered rows) by the phase of
    the strides they read, in the order the products take them."""
    strides, dilations = list(strides), list(dilations)
    if takes_rows(shape):
        shape, strides, dilations = _rows_shape(shape), [*strides[:-1], 1], [*dilations[:-1], 1]
    phases: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
    for tap in np.ndindex(*shape[2:]):
        phases.setdefault(tuple(t * d % s for t, d, s in zip(tap, dilations, strides)), []).append(tap)
    return phases


def _phase_columns(matrix: Any, phases: dict[tuple[int, ...], list[tuple[int, ...]]], outputs: int) -> Columns:
    """:data:`Columns` of the phases' filters from ``matrix`` (:func:`phase_matrix`'s), one column block each."""
    blocks, start = {}, 0
    for taps in phases.values():
        blocks[tuple(taps)] = (start * outputs, (start + len(taps)) * outputs)
        start += len(taps)
    return lambda taps: matrix[:, slice(*blocks[tuple(taps)])]


def phase_matrix(w: np.ndarray, strides: Sequence[int], dilations: Sequence[int]) -> np.ndarray:
    """A filter ``[O, C, kernel...]`` of several phases (:func:`filter_layout` None) as the products read
    it: each phase's taps' filters side by side, ``[C', taps * O]``, the phases one after the other."""
    shape = tuple(w.shape)
    filters = np.moveaxis(w, -1, 1).reshape(_rows_shape(shape)) if takes_rows(shape) else w
    taps = [tap for phase in _phase_taps(shape, strides, dilations).values() for tap in phase]
    stacked = np.stack([filters[(slice(None), slice(None), *tap)] for tap in taps])  # type: ignore[arg-type]  # [taps, O, C']
    return np.transpose(stacked, (2, 0, 1)).reshape(filters.shape[1], -1)


_PHASE_MATRICES: dict[tuple[tuple[int, ...], tuple[int, ...]], PreparedByIdentity] = {}
_PHASE_LOCK = threading.Lock()


def prepare(node: Node, values: Sequence[np.ndarray | None]) -> dict[int, np.ndarray | None]:
    """The lowering's compile-time hook: a constant filter of several phases as :func:`phase_matrix` (so
    that XLA slices nothing from it per call); ``{}`` for others (:func:`filter_layout` arranges them)."""
    w = values[2] if len(values) > 2 else None
    if w is None or w.ndim < 3 or w.flags.writeable or filter_layout(node) is not None:
        return {}
    geometry = (tuple(node.attrs["strides"]), tuple(node.attrs["dilations"]))
    with _PHASE_LOCK:
        cache = _PHASE_MATRICES.get(geometry)
        if cache is None:
            strides, dilations = geometry
            cache = _PHASE_MATRICES[geometry] = PreparedByIdentity(
                lambda value: aligned_read_only(phase_matrix(value, strides, dilations))
            )
    return {2: cache.get(w)}


quantized_convolution.prepare = prepare  # type: ignore[attr-defined]


def _cropped(x: Any, padding: list[tuple[int, int]]) -> Any:
    """``x`` ``[N, ..., C]`` less the negative pads of ``padding`` (a crop)."""
    crop = [(max(-b, 0), max(-e, 0)) for b, e in padding]
    return x[(slice(None), *(slice(b, x.shape[1 + i] - e) for i, (b, e) in enumerate(crop)), slice(None))]


def _graph_columns(w: Any) -> Columns:
    """:data:`Columns` sliced from ``w`` ``[O, C, kernel...]`` (XLA computes them on each call when
    ``w`` is an argument of the executable)."""

    def columns(taps: list[tuple[int, ...]]) -> Any:
        filters = jnp.stack([w[(slice(None), slice(None), *tap)] for tap in taps], axis=0)  # [taps, O, C]
        return jnp.transpose(filters, (2, 0, 1)).reshape(w.shape[1], len(taps) * w.shape[0])

    return columns


def _rows_shape(shape: Sequence[int]) -> tuple[int, ...]:
    """The filter :func:`row_products` applies after gathering: ``[O, k * C, kernel[:-1]..., 1]``."""
    outputs, channels, *kernel = shape
    return (outputs, kernel[-1] * channels, *kernel[:-1], 1)


def row_products(x: Any, w: Any, strides: list[int], padding: list[tuple[int, int]], dilations: list[int]) -> Any:
    """``conv(x, w)`` in i32, as :func:`shifted_products`, with the kernel's taps along the last
    spatial axis gathered first: the ``k`` strided windows of ``x`` along that axis side by side,
    ``[N, ..., out, k * C]``, convolved by ``w`` read as ``[O, k * C, ..., 1]`` (tap-major, as gathered)."""
    shape = tuple(w.shape)
    gathered_filters = jnp.moveaxis(w, -1, 1).reshape(_rows_shape(shape))
    return _rows(x, shape, strides, padding, dilations, _graph_columns(gathered_filters))


def _rows(
    x: Any, shape: tuple[int, ...], strides: list[int], padding: list[tuple[int, int]], dilations: list[int],
    columns: Columns,
) -> Any:  # fmt: skip
    x = _cropped(x, padding)
    taps, step, spread = shape[-1], strides[-1], dilations[-1]
    out = (x.shape[-2] - (taps - 1) * spread - 1) // step + 1
    windows = [
        lax.slice_in_dim(x, t * spread, t * spread + (out - 1) * step + 1, step, axis=x.ndim - 2) for t in range(taps)
    ]
    gathered = jnp.concatenate(windows, axis=-1)
    rank = x.ndim - 2
    return _shifted(gathered, _rows_shape(shape), [*strides[:-1], 1], [(0, 0)] * rank, [*dilations[:-1], 1], columns)


def shifted_products(x: Any, w: Any, strides: list[int], padding: list[tuple[int, int]], dilations: list[int]) -> Any:
    """``conv(x, w)`` in i32 of ``x`` ``[N, ..., C]`` i8 (padded; negative pads crop here), ``w``
    ``[O, C, kernel...]`` i8: per phase of the strides (one at stride 1; four at stride 2 in 2-D: the
    positions ``x[r::s]``), ONE i8 dot of the phase's positions by the filters of the taps that read
    that phase, ``[N, ..., taps, O]``, then the sum over the taps of their products shifted to their
    output positions.

    Not patches (im2col): XLA fuses the ops producing ``x`` (the quantizing Divide, Round, Clamp,
    Convert, and whatever float ops precede them) into each tap's slice of the patches, computing
    them once per tap (PP-OCRv4 det: 2x slower than the float model); a dot's operand is computed
    once, and the phases split ``x`` without computing any position twice."""
    return _shifted(x, tuple(w.shape), strides, padding, dilations, _graph_columns(w))


def _shifted(
    x: Any, shape: tuple[int, ...], strides: list[int], padding: list[tuple[int, int]], dilations: list[int],
    columns: Columns,
) -> Any:  # fmt: skip
    rank = x.ndim - 2
    x = _cropped(x, padding)
    kernel, outputs = tuple(shape[2:]), shape[0]
    sizes = x.shape[1:-1]
    out = [(n - (k - 1) * d - 1) // s + 1 for n, k, d, s in zip(sizes, kernel, dilations, strides)]
    if all(k == 1 for k in kernel):
        x = x[(slice(None), *(slice(0, (o - 1) * s + 1, s) for o, s in zip(out, strides)), slice(None))]
        matrix = columns([(0,) * rank])
        return lax.dot_general(x, matrix, (((rank + 1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    phases: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
    for tap in np.ndindex(*kernel):
        phases.setdefault(tuple(t * d % s for t, d, s in zip(tap, dilations, strides)), []).append(tap)
    terms = []
    for phase, taps in phases.items():
        # the positions r, r + s, ... that these taps read; tap t reads them from (t * d) // s on
        part = x[(slice(None), *(slice(r, None, s) for r, s in zip(phase, strides)), slice(None))]
        products = lax.dot_general(
            part, columns(taps), (((rank + 1,), (0,)), ((), ())), preferred_element_type=jnp.int32
        )
        products = products.reshape(*products.shape[:-1], len(taps), outputs)
        for index, tap in enumerate(taps):
            starts = [t * d // s for t, d, s in zip(tap, dilations, strides)]
            terms.append(products[(slice(None), *(slice(b, b + o) for b, o in zip(starts, out)), index)])
    return functools.reduce(operator.add, terms)
