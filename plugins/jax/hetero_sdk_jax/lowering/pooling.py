"""Lowerings of MaxPool (values and indices) and AvgPool, from one strided slice per kernel tap.

Window geometry comes from the op definitions (:func:`~hetero_sdk.ops.convolution.resolve_pads`,
:func:`~hetero_sdk.ops.convolution.window_output_dims`); in ``ceil`` mode the end pads grow until the
last window exists, as in OpenVINO.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Iterator, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from hetero_sdk import Node
from hetero_sdk.plugin import resolve_pads, window_output_dims
from jax import lax

from hetero_sdk_jax.lowering.registry import lowering, widened


def _geometry(node: Node, sizes: Sequence[int], dilations: Sequence[int]) -> tuple[list[int], list[int], list[int]]:
    """``(pads_begin, pads_end, output sizes)``, the end pads grown for ``ceil`` mode's last windows."""
    attrs = node.attrs
    kernel, strides = attrs["kernel_shape"], attrs["strides"]
    begin, end = resolve_pads(
        attrs["auto_pad"], sizes, kernel, strides, dilations, attrs["pads_begin"], attrs["pads_end"]
    )
    out = window_output_dims(
        node, sizes, kernel, strides, dilations, begin, end, "explicit", ceil_mode=attrs["rounding_type"] == "ceil"
    )
    rows = zip(end, out, strides, kernel, dilations, sizes, begin)
    grown = [max(e, (o - 1) * s + (k - 1) * d + 1 - size - b) for e, o, s, k, d, size, b in rows]
    return begin, grown, out


def _lowest(dtype: np.dtype) -> float | int:
    if jnp.issubdtype(dtype, jnp.integer):
        return int(np.iinfo(dtype).min)
    return float(ml_dtypes.finfo(dtype).min)


def _split(x: jnp.ndarray, channels_last: bool) -> tuple[int, int, tuple[int, ...]]:
    """``(batch, channels, spatial sizes)`` of ``x``, ``[N, C, ...]`` or, ``channels_last``, ``[N, ..., C]``."""
    return (x.shape[0], x.shape[-1], x.shape[1:-1]) if channels_last else (x.shape[0], x.shape[1], x.shape[2:])


def _place(channels_last: bool, batch: Any, channel: Any, spatial: Sequence[Any]) -> tuple[Any, ...]:
    """Per-axis values in the layout's order."""
    return (batch, *spatial, channel) if channels_last else (batch, channel, *spatial)


def _taps(
    padded: jnp.ndarray,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    out: Sequence[int],
    channels_last: bool,
) -> Iterator[jnp.ndarray]:
    """For each kernel tap in order, the strided slice of ``padded`` holding what that tap sees in
    every output window (``out`` windows along each spatial axis)."""
    batch, channels, _ = _split(padded, channels_last)
    for tap in np.ndindex(*kernel):
        start = [t * d for t, d in zip(tap, dilations)]
        limit = [a + (o - 1) * s + 1 for a, o, s in zip(start, out, strides)]
        yield lax.slice(
            padded,
            _place(channels_last, 0, 0, start),
            _place(channels_last, batch, channels, limit),
            _place(channels_last, 1, 1, strides),
        )


@lowering("MaxPool")
def max_pool(node: Node, x: jnp.ndarray, channels_last: bool = False) -> tuple[Any, Any]:
    """One strided slice per kernel tap, merged with ``select(tap > best, tap, best)`` from the lowest
    value: NaN never wins a comparison (an all-NaN window gives the lowest value) and the first tap
    holding the maximum wins, in one fused loop. The values are computed so one axis at a time
    (:func:`_separable_max`; XLA drops the loop over every tap when the indices are not used):
    YOLOX's SPP block (5x5, 9x9 and 13x13 pools of 256 channels at 13x13, after a 1x1 convolution)
    972 -> 883 us, YOLOv8n's SPPF 109 -> 102 us (one thread, in isolation). XLA:CPU's
    ``reduce_window`` max is several times slower on large maps, and propagates NaN, which would
    need a NaN-replacing pass first.
    ``x`` and both results are ``[N, ..., C]`` with ``channels_last`` (the indices still count
    positions of the ``[N, C, ...]`` tensor)."""
    attrs = node.attrs
    batch, channels, sizes = _split(x, channels_last)
    n = len(sizes)
    kernel, strides, dilations = attrs["kernel_shape"], attrs["strides"], attrs["dilations"]
    begin, end, out = _geometry(node, sizes, dilations)
    lowest = jnp.asarray(_lowest(x.dtype), x.dtype)
    padded = lax.pad(
        x, lowest, list(_place(channels_last, (0, 0, 0), (0, 0, 0), [(b, e, 0) for b, e in zip(begin, end)]))
    )
    values = jnp.full(_place(channels_last, batch, channels, out), lowest, x.dtype)
    best = jnp.zeros(values.shape, np.int32)  # the winning tap; dropped by XLA when indices are unused
    for number, window in enumerate(_taps(padded, kernel, strides, dilations, out, channels_last)):
        wins = window > values
        values = lax.select(wins, window, values)
        best = lax.select(wins, jnp.full(best.shape, number, np.int32), best)
    # the values one axis at a time (the indices, when used, come from the taps above)
    maxima = _separable_max(padded, kernel, strides, dilations, out, channels_last) if n > 1 else values
    index_type = jax.dtypes.canonicalize_dtype(node.get_output_element_type(1).numpy)  # i32 when unused
    tap_coords = np.unravel_index(np.arange(math.prod(kernel)), kernel)
    position = jnp.zeros(best.shape, index_type)
    for i in range(n):
        trailing = [1] * (n - 1 - i) + ([1] if channels_last else [])
        origin = (np.arange(out[i]) * strides[i] - begin[i]).reshape([-1, *trailing])
        coordinate = jnp.asarray(tap_coords[i] * dilations[i], index_type)[best] + origin.astype(index_type)
        position = position * sizes[i] + coordinate
    plane = math.prod(sizes)
    channel_start = np.arange(batch * channels).reshape(_place(channels_last, batch, channels, [1] * n)) * plane
    # A window holding only padding (or only the lowest value) reports its channel's first element.
    indices = channel_start.astype(index_type) + jnp.where(values == lowest, 0, position)
    axis = attrs["axis"] % x.ndim
    if axis:
        indices = indices % math.prod((batch, channels, *sizes)[axis:])
    return maxima, indices


def _separable_max(
    padded: jnp.ndarray,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    out: Sequence[int],
    channels_last: bool,
) -> jnp.ndarray:
    """The window maxima of ``padded`` as :func:`max_pool` selects them, over one spatial axis at a
    time, the last first: ``k + k`` comparisons per output of a ``k x k`` window instead of ``k * k``
    (YOLOX's SPP pools, 5x5 to 13x13 at stride 1). The same values: the maximum of the non-NaN values
    (the lowest value when there are none), and among equal values (``-0.0`` and ``0.0``) the first
    in the taps' row-major order, as the last axis is reduced first."""
    first = 1 if channels_last else 2
    lowest = jnp.asarray(_lowest(padded.dtype), padded.dtype)
    reduced = padded
    for axis in reversed(range(len(kernel))):
        dim = first + axis
        best = jnp.full((*reduced.shape[:dim], out[axis], *reduced.shape[dim + 1 :]), lowest, padded.dtype)
        for tap in range(kernel[axis]):
            start = tap * dilations[axis]
            window = lax.slice_in_dim(reduced, start, start + (out[axis] - 1) * strides[axis] + 1, strides[axis], dim)
            best = lax.select(window > best, window, best)
        reduced = best
    return reduced


_MAX_SLICED_TAPS = 49
"""Average pools of up to 49 taps (7x7) sum one strided slice per tap; larger ones use ``reduce_window``."""


@lowering("AvgPool")
def avg_pool(node: Node, x: jnp.ndarray, channels_last: bool = False) -> jnp.ndarray:
    """The sums over the windows, divided as OpenVINO does; ``x`` and the result are ``[N, ..., C]``
    with ``channels_last``.

    Up to :data:`_MAX_SLICED_TAPS` taps the sums add one strided slice of the zero-padded input per
    tap, which XLA fuses into one loop with what comes before and after: XLA:CPU's ``reduce_window``
    sum ran PP-OCRv4 rec's 3x2 pool of ``[1, 480, 3, 80]`` 2.3x slower (38 vs 17 us, one thread)."""
    attrs = node.attrs
    _, _, sizes = _split(x, channels_last)
    n = len(sizes)
    kernel, strides, ones = attrs["kernel_shape"], attrs["strides"], [1] * n
    begin, end, out = _geometry(node, sizes, ones)
    integral = jnp.issubdtype(x.dtype, jnp.integer)
    work = x.astype(jax.dtypes.canonicalize_dtype(jnp.float64)) if integral else widened(x)
    zero = jnp.zeros((), work.dtype)
    if math.prod(kernel) <= _MAX_SLICED_TAPS:
        padded = lax.pad(
            work, zero, list(_place(channels_last, (0, 0, 0), (0, 0, 0), [(b, e, 0) for b, e in zip(begin, end)]))
        )
        sums = functools.reduce(operator.add, _taps(padded, kernel, strides, ones, out, channels_last))
    else:
        padding = list(_place(channels_last, (0, 0), (0, 0), list(zip(begin, end))))
        window, steps = _place(channels_last, 1, 1, kernel), _place(channels_last, 1, 1, strides)
        sums = lax.reduce_window(work, zero, lax.add, window, steps, padding)
    pads = resolve_pads(attrs["auto_pad"], sizes, kernel, strides, ones, attrs["pads_begin"], attrs["pads_end"])
    # OpenVINO divides by the kernel size whenever the op pads, even where ceil mode's windows overhang.
    if (any(pads[0]) or any(pads[1])) and not attrs["exclude_pad"]:
        divisor = np.full(out, math.prod(kernel), np.float64)
    else:
        divisor = np.ones((), np.float64)
        for i in range(n):
            starts = np.arange(out[i]) * strides[i] - begin[i]
            inside = np.minimum(starts + kernel[i], sizes[i]) - np.maximum(starts, 0)
            divisor = np.multiply.outer(divisor, np.maximum(inside, 0).astype(np.float64))
    if channels_last and divisor.ndim:
        divisor = divisor[..., None]  # (broadcast along the channels, last)
    safe = np.where(divisor > 0, divisor, 1).astype(work.dtype)
    result = jnp.where(divisor > 0, sums / safe, 0)
    return jnp.rint(result) if integral else result
