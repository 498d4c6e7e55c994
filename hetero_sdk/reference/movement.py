"""Reference kernels of the movement ops."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hetero_sdk.graph.node import Node
from hetero_sdk.reference.registry import kernel


def _ints(value: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(value).reshape(-1)]


@kernel("Transpose")
def transpose(node: Node, x: np.ndarray, order: np.ndarray) -> np.ndarray:
    return np.transpose(x, _ints(order) or None)


@kernel("Concat")
def concat(node: Node, *xs: np.ndarray) -> np.ndarray:
    return np.concatenate(xs, axis=node.attrs["axis"])


@kernel("Split")
def split(node: Node, x: np.ndarray, axis: np.ndarray) -> tuple[np.ndarray, ...]:
    return tuple(np.split(x, node.attrs["num_splits"], axis=int(axis.reshape(-1)[0])))


@kernel("VariadicSplit")
def variadic_split(node: Node, x: np.ndarray, axis: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, ...]:
    dim = int(axis.reshape(-1)[0]) % x.ndim
    sizes = _ints(lengths)
    if -1 in sizes:
        sizes[sizes.index(-1)] = x.shape[dim] - sum(s for s in sizes if s != -1)
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=dim))


@kernel("Slice")
def slice_(node: Node, x: np.ndarray, start: np.ndarray, stop: np.ndarray, step: np.ndarray, *axes: np.ndarray):
    index = [slice(None)] * x.ndim
    chosen = _ints(axes[0]) if axes else list(range(start.size))
    for a, b, e, s in zip(chosen, _ints(start), _ints(stop), _ints(step)):
        index[a % x.ndim] = slice(b, e, s)
    return x[tuple(index)]


@kernel("StridedSlice")
def strided_slice(node: Node, x: np.ndarray, begin: np.ndarray, end: np.ndarray, *strides: np.ndarray):
    b, e = _ints(begin), _ints(end)
    s = _ints(strides[0]) if strides else [1] * len(b)
    masks = {m: node.attrs[m] + [0] * len(b) for m in node.attrs if m.endswith("_mask")}
    index: list[Any] = []
    for i in range(len(b)):
        if masks["ellipsis_mask"][i]:
            index.append(Ellipsis)
        elif masks["new_axis_mask"][i]:
            index.append(np.newaxis)
        elif masks["shrink_axis_mask"][i]:
            index.append(b[i])
        else:
            first = None if masks["begin_mask"][i] else b[i]
            index.append(slice(first, None if masks["end_mask"][i] else e[i], s[i]))
    return x[tuple(index)]


@kernel("Gather")
def gather(node: Node, x: np.ndarray, indices: np.ndarray, axis: np.ndarray) -> np.ndarray:
    batch = node.attrs["batch_dims"]
    batch = batch + indices.ndim if batch < 0 else batch
    dim = int(axis.reshape(-1)[0]) % x.ndim
    size = x.shape[dim]
    valid = (indices >= -size) & (indices < size)
    safe = np.where(valid, indices, 0).astype(np.int64) % max(size, 1)
    lead = x.shape[:batch]
    flat_x = x.reshape((math.prod(lead), *x.shape[batch:]))
    flat_i, flat_v = safe.reshape((math.prod(lead), *indices.shape[batch:])), valid.reshape(-1)
    parts = [np.take(flat_x[k], flat_i[k], axis=dim - batch) for k in range(flat_x.shape[0])]
    out = np.stack(parts) if parts else np.zeros((0, *x.shape[batch:dim], *indices.shape[batch:], *x.shape[dim + 1 :]))
    mask_shape = (flat_x.shape[0],) + (1,) * (dim - batch) + indices.shape[batch:] + (1,) * (x.ndim - dim - 1)
    out = np.where(flat_v.reshape(mask_shape), out, np.zeros((), x.dtype))
    return out.reshape(lead + out.shape[1:])


@kernel("Pad")
def pad(node: Node, x: np.ndarray, begin: np.ndarray, end: np.ndarray, *value: np.ndarray) -> np.ndarray:
    b, e = _ints(begin), _ints(end)
    widths = [(max(p, 0), max(q, 0)) for p, q in zip(b, e)]
    mode = node.attrs["pad_mode"]
    if mode == "constant":
        fill = value[0].reshape(()) if value else np.zeros((), x.dtype)
        padded = np.pad(x, widths, mode="constant", constant_values=fill)
    else:
        padded = np.pad(x, widths, mode=mode)
    # Negative pads crop after padding, so reflect/symmetric mirror the original borders (as OpenVINO does).
    crop = tuple(slice(max(-p, 0), max(n - max(-q, 0), 0)) for p, q, n in zip(b, e, padded.shape))
    return padded[crop]
