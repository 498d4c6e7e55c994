"""The array-API kernels of the movement ops, shared by every device (numpy for TEMPLATE and folding,
``jax.numpy`` for XLA). Index-like operands (orders, axes, bounds, pads) are numpy arrays here, even
while XLA traces: their values decide the output shapes."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hetero_sdk.array_api import namespace
from hetero_sdk.graph.node import Node

__all__ = [
    "concat", "gather", "gather_elements", "pad", "split", "split_bounds", "transpose", "variadic_split",
]  # fmt: skip


def _ints(value: Any) -> list[int]:
    return [int(v) for v in np.asarray(value).reshape(-1)]


def _along(x: Any, axis: int, part: slice) -> Any:
    return x[(slice(None),) * axis + (part,)]


def split_bounds(size: int, lengths: list[int]) -> list[tuple[int, int]]:
    """The ``[begin, end)`` of each part when a dimension of ``size`` is split into ``lengths`` (one may
    be ``-1``: what the others leave)."""
    if -1 in lengths:
        lengths = list(lengths)
        lengths[lengths.index(-1)] = size - sum(v for v in lengths if v != -1)
    ends = np.cumsum(lengths).tolist()
    return list(zip([0, *ends[:-1]], ends))


def transpose(node: Node, x: Any, order: Any) -> Any:
    return namespace(x).permute_dims(x, tuple(_ints(order)) or tuple(range(x.ndim - 1, -1, -1)))


def concat(node: Node, *xs: Any) -> Any:
    return namespace(*xs).concat(xs, axis=node.attrs["axis"])


def split(node: Node, x: Any, axis: Any) -> tuple[Any, ...]:
    dim = _ints(axis)[0] % x.ndim
    parts = node.attrs["num_splits"]
    step = x.shape[dim] // parts
    return tuple(_along(x, dim, slice(k * step, (k + 1) * step)) for k in range(parts))


def variadic_split(node: Node, x: Any, axis: Any, lengths: Any) -> tuple[Any, ...]:
    dim = _ints(axis)[0] % x.ndim
    return tuple(_along(x, dim, slice(b, e)) for b, e in split_bounds(x.shape[dim], _ints(lengths)))


def gather(node: Node, x: Any, indices: Any, axis: Any) -> Any:
    """Gather with batches, one ``take`` per batch entry; out-of-range indices give zeros."""
    xp = namespace(x, indices)
    batch = node.attrs["batch_dims"]
    batch = batch + indices.ndim if batch < 0 else batch
    dim = _ints(axis)[0] % x.ndim
    size = x.shape[dim]
    valid = (indices >= -size) & (indices < size)
    safe = xp.where(valid, indices, 0)
    safe = xp.where(safe < 0, safe + size, safe)
    lead = x.shape[:batch]
    count = math.prod(lead)
    flat_x = xp.reshape(x, (count, *x.shape[batch:]))
    flat_i = xp.reshape(safe, (count, *indices.shape[batch:]))
    tail = (*x.shape[batch:dim], *indices.shape[batch:], *x.shape[dim + 1 :])
    if count and size:
        out = xp.stack([_take(xp, flat_x[k], flat_i[k], dim - batch) for k in range(count)])
    else:
        out = xp.zeros((count, *tail), dtype=x.dtype)
    mask_shape = (count,) + (1,) * (dim - batch) + tuple(indices.shape[batch:]) + (1,) * (x.ndim - dim - 1)
    out = xp.where(xp.reshape(valid, mask_shape), out, xp.zeros((), dtype=x.dtype))
    return xp.reshape(out, (*lead, *tail))


def gather_elements(node: Node, x: Any, indices: Any) -> Any:
    """Element ``[i, j, ...]`` of the output is ``x`` at ``indices[i, j, ...]`` along ``axis`` and at
    ``i, j, ...`` elsewhere; negative indices count from the end."""
    xp = namespace(x, indices)
    axis = node.attrs["axis"] % x.ndim
    size = x.shape[axis]
    safe = xp.where(indices < 0, indices + size, indices)
    window = tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(indices.shape))
    return xp.take_along_axis(x[window], safe, axis=axis)


def _take(xp: Any, data: Any, where: Any, axis: int) -> Any:
    flat = xp.reshape(where, (-1,))
    taken = xp.take(data, flat, axis=axis)
    return xp.reshape(taken, (*data.shape[:axis], *where.shape, *data.shape[axis + 1 :]))


def pad(node: Node, x: Any, begin: Any, end: Any, *value: Any) -> Any:
    """Pads with ``pad`` of numpy or ``jax.numpy`` (the array API has none); negative pads crop after
    padding, so reflect and symmetric mirror the original borders, as OpenVINO does."""
    xp = namespace(x)
    b, e = _ints(begin), _ints(end)
    widths = [(max(p, 0), max(q, 0)) for p, q in zip(b, e)]
    mode = node.attrs["pad_mode"]
    if mode == "constant":
        fill = xp.reshape(value[0], ()) if value else xp.zeros((), dtype=x.dtype)
        padded = xp.pad(x, widths, mode="constant", constant_values=fill)
    else:
        padded = xp.pad(x, widths, mode=mode)
    crop = tuple(slice(max(-p, 0), max(n - max(-q, 0), 0)) for p, q, n in zip(b, e, padded.shape))
    return padded[crop]
