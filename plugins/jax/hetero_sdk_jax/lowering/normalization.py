"""Lowerings of BatchNormInference, MVN, Softmax and LogSoftmax; 16-bit floats computed in f32."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node
from hetero_sdk.ops.normalization import normalized_axes

from hetero_sdk_jax.lowering.registry import lowering, widened


@lowering("BatchNormInference")
def batch_norm_inference(
    node: Node, x: jnp.ndarray, gamma: jnp.ndarray, beta: jnp.ndarray, mean: jnp.ndarray, variance: jnp.ndarray
) -> jnp.ndarray:
    per_channel = (-1,) + (1,) * (x.ndim - 2)
    gamma, beta, mean, variance = (widened(v).reshape(per_channel) for v in (gamma, beta, mean, variance))
    return gamma * (widened(x) - mean) / jnp.sqrt(variance + node.attrs["epsilon"]) + beta


@lowering("MVN")
def mvn(node: Node, x: jnp.ndarray, axes: np.ndarray) -> jnp.ndarray:
    x = widened(x)
    reduce = normalized_axes(axes, x.ndim)
    centered = x - jnp.mean(x, axis=reduce, keepdims=True)
    if not node.attrs["normalize_variance"]:
        return centered
    variance = jnp.mean(centered * centered, axis=reduce, keepdims=True)
    eps = node.attrs["eps"]
    if node.attrs["eps_mode"] == "inside_sqrt":
        return centered / jnp.sqrt(variance + eps)
    return centered / (jnp.sqrt(variance) + eps)


@lowering("Softmax")
def softmax(node: Node, x: jnp.ndarray) -> jnp.ndarray:
    x, axis = widened(x), node.attrs["axis"]
    shifted = jnp.exp(x - jnp.max(x, axis=axis, keepdims=True))
    return shifted / jnp.sum(shifted, axis=axis, keepdims=True)


@lowering("LogSoftmax")
def log_softmax(node: Node, x: jnp.ndarray) -> jnp.ndarray:
    x, axis = widened(x), node.attrs["axis"]
    shifted = x - jnp.max(x, axis=axis, keepdims=True)
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=axis, keepdims=True))
