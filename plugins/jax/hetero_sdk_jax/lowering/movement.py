"""XLA's lowering of Gather: one batched ``take`` through ``jax.vmap`` rather than a loop over batch
entries. The other movement ops trace their definitions' array-API kernels.

Also the channels-last variants of the ops that move values along axes (:func:`movement_channels_last`):
Split, VariadicSplit and Slice along any axes (Reshapes of the spatial axes are :mod:`.layout`'s
regroupings). The graph interpreter holds convolution chains ``[N, ..., C]``
(:mod:`.layout`); without these variants each split takes its input back to ``[N, C, ...]`` first. A
YOLOv8 C2f block splits every convolution's result in two along the channels and concatenates the
halves with later results: XLA then transposed each half out of and back into channels-last (nine
splits in YOLOv8n). A Transpose itself needs no variant: XLA merges it with the move back to
``[N, C, ...]``. magika's 1-D convolution reaches its GELU and max pool through a Slice: carried, the
model ran 7.6 % faster (one thread, in one process, interleaved; it was not carried while that
convolution was a product of stacked windows, which XLA:CPU then fused with the GELU and the pool into
one slower kernel), and no other model of the performance issue slower. Each variant takes the held
array and the op's other inputs (known values: axis, lengths), computes on the array as it lies, and
returns its results held channels-last too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node

from hetero_sdk_jax.lowering.kernels import concat_pointwise
from hetero_sdk_jax.lowering.registry import LoweringFn, get_lowering, lowering


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


def held_axis(axis: int, rank: int) -> int:
    """Where axis ``axis`` (negative counts from the end) of a rank-``rank`` ``[N, C, ...]`` tensor lies
    when the tensor is held ``[N, ..., C]``."""
    return [0, *range(2, rank), 1].index(axis % rank)


def movement_channels_last(node: Node, rest: Sequence[Any]) -> tuple[LoweringFn, list[Any]] | None:
    """How to compute ``node`` on its data input held channels-last: ``(fn, rest)`` such that
    ``fn(node, held, *rest)`` gives its outputs held channels-last; None when it cannot (an input that
    decides the result is not known, or an op without a variant).

    :param rest: the node's inputs after the data, as the graph interpreter has them.
    """
    if not all(isinstance(v, np.ndarray) for v in rest):
        return None
    kind = node.type_name
    if kind in ("Split", "VariadicSplit"):
        return _split, list(rest)
    if kind == "Slice":
        return _slice, list(rest)
    return None


def _slice(node: Node, x: Any, start: np.ndarray, stop: np.ndarray, step: np.ndarray, *axes: np.ndarray) -> Any:
    """Slice along the axes where the graph's axes lie (without an ``axes`` input: the first ones)."""
    rank = node.input_value(0).partial_shape.rank
    chosen = axes[0].reshape(-1) if axes else np.arange(start.size)
    moved = np.array([held_axis(int(a), rank) for a in chosen], np.int64)
    return _evaluate(node)(node, x, start, stop, step, moved)


def _evaluate(node: Node) -> LoweringFn:
    lowered = get_lowering(node.type_name)
    assert lowered is not None, f"{node.type_name} has a lowering"
    return lowered.fn


def _split(node: Node, x: Any, axis: np.ndarray, *lengths: np.ndarray) -> Any:
    """Split or VariadicSplit along the axis where the graph's axis lies."""
    rank = node.input_value(0).partial_shape.rank
    moved = np.array(held_axis(int(axis.reshape(-1)[0]), rank), axis.dtype)
    outputs = _evaluate(node)(node, x, moved, *lengths)
    concat_pointwise.record_split(x, outputs, int(moved))  # a Concat of the pieces may read x in place
    return outputs
