"""Reference kernels of the normalization ops."""

from __future__ import annotations

import numpy as np

from hetero_sdk.graph.node import Node
from hetero_sdk.ops.normalization import normalized_axes
from hetero_sdk.reference.convolution import widened
from hetero_sdk.reference.registry import kernel


@kernel("BatchNormInference")
def batch_norm_inference(
    node: Node, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, mean: np.ndarray, variance: np.ndarray
) -> np.ndarray:
    per_channel = (-1,) + (1,) * (x.ndim - 2)
    gamma, beta, mean, variance = (widened(v).reshape(per_channel) for v in (gamma, beta, mean, variance))
    return gamma * (widened(x) - mean) / np.sqrt(variance + node.attrs["epsilon"]) + beta


@kernel("MVN")
def mvn(node: Node, x: np.ndarray, axes: np.ndarray) -> np.ndarray:
    x = widened(x)
    reduce = normalized_axes(axes, x.ndim)
    centered = x - x.mean(axis=reduce, keepdims=True)
    if not node.attrs["normalize_variance"]:
        return centered
    variance = np.mean(centered * centered, axis=reduce, keepdims=True)
    eps = node.attrs["eps"]
    with np.errstate(divide="ignore", invalid="ignore"):
        if node.attrs["eps_mode"] == "inside_sqrt":
            return centered / np.sqrt(variance + eps)
        return centered / (np.sqrt(variance) + eps)


@kernel("Softmax")
def softmax(node: Node, x: np.ndarray) -> np.ndarray:
    x = widened(x)
    shifted = np.exp(x - x.max(axis=node.attrs["axis"], keepdims=True))
    return shifted / shifted.sum(axis=node.attrs["axis"], keepdims=True)


@kernel("LogSoftmax")
def log_softmax(node: Node, x: np.ndarray) -> np.ndarray:
    x = widened(x)
    shifted = x - x.max(axis=node.attrs["axis"], keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=node.attrs["axis"], keepdims=True))
