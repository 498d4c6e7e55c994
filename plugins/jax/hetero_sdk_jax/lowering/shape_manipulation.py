"""Lowerings of the ops that change shapes (Reshape, Squeeze, Unsqueeze, Broadcast, Tile, Range).

Shape-like operands (target shapes, axes, pads, slice bounds) are static inputs: numpy arrays while
tracing. Where the output shape says everything (Reshape, Squeeze, Unsqueeze, Broadcast), the
node's inferred static shape is used directly.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node

from hetero_sdk_jax.lowering.registry import lowering


def _ints(value: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(value).reshape(-1)]


@lowering("Reshape")
def reshape(node: Node, x: jnp.ndarray, pattern: np.ndarray) -> jnp.ndarray:
    return x.reshape(node.get_output_shape(0))


@lowering("Squeeze", "Unsqueeze")
def squeeze_unsqueeze(node: Node, x: jnp.ndarray, axes: np.ndarray | None = None) -> jnp.ndarray:
    return x.reshape(node.get_output_shape(0))


@lowering("Broadcast")
def broadcast(node: Node, x: jnp.ndarray, target: np.ndarray, mapping: np.ndarray | None = None) -> jnp.ndarray:
    shape = node.get_output_shape(0)
    if node.attrs["mode"] == "explicit" and mapping is not None:
        aligned = [1] * len(shape)
        for d, a in zip(x.shape, _ints(mapping)):
            aligned[a] = d
        x = x.reshape(aligned)
    return jnp.broadcast_to(x, shape)


@lowering("Tile")
def tile(node: Node, x: jnp.ndarray, repeats: np.ndarray) -> jnp.ndarray:
    return jnp.tile(x, _ints(repeats)) if repeats.size else x


@lowering("Range")
def range_(node: Node, start: np.ndarray, stop: np.ndarray, step: np.ndarray) -> jnp.ndarray:
    # Reached only for outputs too large to fold with numpy: the values are known, XLA generates them.
    count = node.get_output_shape(0)[0]
    integral = node.get_output_element_type(0).is_integral
    first, delta = (float(np.trunc(v) if integral else v) for v in (start, step))
    if integral:
        return int(first) + jnp.arange(count) * int(delta)
    return first + jnp.arange(count, dtype=node.get_output_element_type(0).numpy) * delta
