"""Reference kernels of the shape_manipulation ops."""

from __future__ import annotations

import math

import numpy as np

from hetero_sdk.graph.node import Node
from hetero_sdk.reference.registry import kernel


def _ints(value: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(value).reshape(-1)]


@kernel("Reshape")
def reshape(node: Node, x: np.ndarray, pattern: np.ndarray) -> np.ndarray:
    special_zero = node.attrs["special_zero"]
    dims = [x.shape[i] if v == 0 and special_zero else v for i, v in enumerate(_ints(pattern))]
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        dims[dims.index(-1)] = x.size // known if known else 1
    return x.reshape(dims)


@kernel("Squeeze")
def squeeze(node: Node, x: np.ndarray, *axes: np.ndarray) -> np.ndarray:
    chosen = tuple({a % x.ndim for a in _ints(axes[0])}) if axes else ()
    return np.squeeze(x, axis=chosen) if chosen else np.squeeze(x)


@kernel("Unsqueeze")
def unsqueeze(node: Node, x: np.ndarray, axes: np.ndarray) -> np.ndarray:
    chosen = set(_ints(axes))
    rank = x.ndim + len(chosen)
    return np.expand_dims(x, tuple(sorted({a % rank for a in chosen})))


@kernel("Broadcast")
def broadcast(node: Node, x: np.ndarray, target: np.ndarray, *mapping: np.ndarray) -> np.ndarray:
    shape = tuple(_ints(target))
    mode = node.attrs["mode"]
    if mode == "bidirectional":
        shape = np.broadcast_shapes(x.shape, shape)
    elif mode == "explicit":
        aligned = [1] * len(shape)
        for d, a in zip(x.shape, _ints(mapping[0])):
            aligned[a] = d
        x = x.reshape(aligned)
    return np.array(np.broadcast_to(x, shape))


@kernel("Tile")
def tile(node: Node, x: np.ndarray, repeats: np.ndarray) -> np.ndarray:
    return np.tile(x, _ints(repeats)) if repeats.size else x.copy()


@kernel("ShapeOf")
def shape_of(node: Node, x: np.ndarray) -> np.ndarray:
    return np.array(x.shape, dtype=np.int64)


@kernel("Range")
def range_(node: Node, start: np.ndarray, stop: np.ndarray, step: np.ndarray) -> np.ndarray:
    integral = node.get_output_element_type(0).is_integral
    first, last, delta = (float(np.trunc(v) if integral else v) for v in (start, stop, step))
    count = max(math.ceil((last - first) / delta), 0)
    if integral:
        return int(first) + np.arange(count, dtype=np.int64) * int(delta)
    return first + np.arange(count, dtype=np.float64) * delta
