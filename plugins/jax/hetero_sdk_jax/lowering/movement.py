"""Lowerings of the ops that move data (Transpose, Concat, Split, Slice, Gather, Pad...).

Shape-like operands (target shapes, axes, pads, slice bounds) are static inputs: numpy arrays while
tracing. Where the output shape says everything (Reshape, Squeeze, Unsqueeze, Broadcast), the
node's inferred static shape is used directly.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node
from jax import lax

from hetero_sdk_jax.lowering.registry import lowering


def _ints(value: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(value).reshape(-1)]


@lowering("Transpose")
def transpose(node: Node, x: jnp.ndarray, order: np.ndarray) -> jnp.ndarray:
    return jnp.transpose(x, _ints(order) or None)


@lowering("Concat")
def concat(node: Node, *xs: jnp.ndarray) -> jnp.ndarray:
    return jnp.concatenate(xs, axis=node.attrs["axis"])


@lowering("Split")
def split(node: Node, x: jnp.ndarray, axis: np.ndarray) -> list[jnp.ndarray]:
    return jnp.split(x, node.attrs["num_splits"], axis=int(axis.reshape(-1)[0]))


@lowering("VariadicSplit")
def variadic_split(node: Node, x: jnp.ndarray, axis: np.ndarray, lengths: np.ndarray) -> list[jnp.ndarray]:
    dim = int(axis.reshape(-1)[0]) % x.ndim
    sizes = [node.get_output_shape(i)[dim] for i in range(node.get_output_size())]
    return jnp.split(x, np.cumsum(sizes)[:-1].tolist(), axis=dim)


@lowering("Slice")
def slice_(node: Node, x: jnp.ndarray, start: Any, stop: Any, step: Any, axes: Any = None) -> jnp.ndarray:
    index = [slice(None)] * x.ndim
    chosen = _ints(axes) if axes is not None else list(range(start.size))
    for a, b, e, s in zip(chosen, _ints(start), _ints(stop), _ints(step)):
        index[a % x.ndim] = slice(b, e, s)
    return x[tuple(index)]


@lowering("StridedSlice")
def strided_slice(node: Node, x: jnp.ndarray, begin: Any, end: Any, strides: Any = None) -> jnp.ndarray:
    b, e = _ints(begin), _ints(end)
    s = _ints(strides) if strides is not None else [1] * len(b)
    masks = {m: node.attrs[m] + [0] * len(b) for m in node.attrs if m.endswith("_mask")}
    index: list[Any] = []
    for i in range(len(b)):
        if masks["ellipsis_mask"][i]:
            index.append(Ellipsis)
        elif masks["new_axis_mask"][i]:
            index.append(None)
        elif masks["shrink_axis_mask"][i]:
            index.append(b[i])
        else:
            first = None if masks["begin_mask"][i] else b[i]
            index.append(slice(first, None if masks["end_mask"][i] else e[i], s[i]))
    return x[tuple(index)]


@lowering("Gather")
def gather(node: Node, x: jnp.ndarray, indices: jnp.ndarray, axis: np.ndarray) -> jnp.ndarray:
    batch = node.attrs["batch_dims"] % (indices.ndim + 1) if indices.ndim else 0
    dim = int(axis.reshape(-1)[0]) % x.ndim
    size = x.shape[dim]
    valid = (indices >= -size) & (indices < size)
    safe = jnp.where(valid, jnp.where(indices < 0, indices + size, indices), 0)

    def take(data: jnp.ndarray, where: jnp.ndarray) -> jnp.ndarray:
        return jnp.take(data, where, axis=dim - batch, mode="clip")

    for _ in range(batch):
        take = jax.vmap(take)
    out = take(x, safe) if size else jnp.zeros(node.get_output_shape(0), x.dtype)
    # Out-of-range indices give zeros, as in OpenVINO.
    mask_shape = indices.shape[:batch] + (1,) * (dim - batch) + indices.shape[batch:] + (1,) * (x.ndim - dim - 1)
    return jnp.where(valid.reshape(mask_shape), out, jnp.zeros((), x.dtype))


@lowering("Pad")
def pad(node: Node, x: jnp.ndarray, begin: np.ndarray, end: np.ndarray, value: Any = None) -> jnp.ndarray:
    b, e = _ints(begin), _ints(end)
    mode = node.attrs["pad_mode"]
    if mode == "constant":
        fill = jnp.zeros((), x.dtype) if value is None else value.reshape(()).astype(x.dtype)
        return lax.pad(x, fill, [(p, q, 0) for p, q in zip(b, e)])  # negative pads crop
    widths = [(max(p, 0), max(q, 0)) for p, q in zip(b, e)]
    padded = jnp.pad(x, widths, mode=mode)
    # Negative pads crop after padding, so reflect/symmetric mirror the original borders.
    crop = tuple(slice(max(-p, 0), n - max(-q, 0)) for p, q, n in zip(b, e, padded.shape))
    return padded[crop]
