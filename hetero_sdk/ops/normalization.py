"""Normalization ops: BatchNormInference (opset5), MVN (opset6), Softmax (opset8), LogSoftmax (opset5)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hetero_sdk.graph.node import Node
from hetero_sdk.ops.checks import (
    INDEX_TYPES,
    REAL_TYPES,
    expect_attr,
    expect_inputs,
    expect_rank,
    expect_same_types,
    expect_type,
    merge_dims,
    normalize_axis,
)
from hetero_sdk.ops.registry import OutputSpec, as_output, constant_value, register_op
from hetero_sdk.shape import PartialShape

__all__ = ["EPS_MODES", "batch_norm_inference", "log_softmax", "mvn", "normalized_axes", "softmax"]

EPS_MODES = ("inside_sqrt", "outside_sqrt")
"""Where MVN adds ``eps``: ``sqrt(variance + eps)`` or ``sqrt(variance) + eps``."""


def batch_norm_inference(
    data: Any, gamma: Any, beta: Any, mean: Any, variance: Any, epsilon: float, name: str | None = None
) -> Node:
    """``gamma * (data - mean) / sqrt(variance + epsilon) + beta`` per channel (``BatchNormInference``, opset5).

    :param data: ``[N, C, ...]``, rank >= 2.
    :param gamma: ``[C]`` scale.
    :param beta: ``[C]`` shift.
    :param mean: ``[C]`` running mean.
    :param variance: ``[C]`` running variance.
    :param epsilon: added to the variance (non-negative).
    :param name: the node's friendly name.
    """
    x = as_output(data)
    inputs = [x, *(as_output(v, like=x) for v in (gamma, beta, mean, variance))]
    return Node("BatchNormInference", inputs, {"epsilon": float(epsilon)}, name)


def mvn(
    data: Any,
    axes: Any,
    normalize_variance: bool,
    eps: float,
    eps_mode: str,
    name: str | None = None,
) -> Node:
    """Mean-variance normalization over ``axes`` (``MVN``, opset6).

    Subtracts the mean over ``axes``; with ``normalize_variance`` also divides by the standard
    deviation over ``axes``, ``eps`` added as ``eps_mode`` says.

    :param data: the tensor to normalize.
    :param axes: 1-D integer tensor (or list) of axes to reduce over, each in ``[-rank, rank)``.
    :param normalize_variance: divide by the standard deviation too.
    :param eps: the stabilizing constant.
    :param eps_mode: one of :data:`EPS_MODES`.
    :param name: the node's friendly name.
    """
    axes_out = as_output(np.asarray(axes, np.int64) if isinstance(axes, (list, tuple, int)) else axes)
    attrs = {"normalize_variance": normalize_variance, "eps": float(eps), "eps_mode": str(eps_mode).lower()}
    return Node("MVN", [as_output(data), axes_out], attrs, name)


def softmax(data: Any, axis: int = 1, name: str | None = None) -> Node:
    """``exp(x) / sum(exp(x))`` along ``axis`` (``Softmax``, opset8).

    :param data: a real tensor of rank >= 1.
    :param axis: the axis to normalize, in ``[-rank, rank)``.
    :param name: the node's friendly name.
    """
    return Node("Softmax", [as_output(data)], {"axis": axis}, name)


def log_softmax(data: Any, axis: int = 1, name: str | None = None) -> Node:
    """``x - log(sum(exp(x)))`` along ``axis`` (``LogSoftmax``, opset5).

    :param data: a real tensor of rank >= 1.
    :param axis: the axis to normalize, in ``[-rank, rank)``.
    :param name: the node's friendly name.
    """
    return Node("LogSoftmax", [as_output(data)], {"axis": axis}, name)


def _number(node: Node, attr: str) -> float:
    value = node.attrs.get(attr)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
        raise node.error(f"attribute {attr}={value!r} must be a number")
    return float(value)


@register_op("BatchNormInference", "normalization", "opset5")
def _batch_norm_inference(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 5)
    element_type = expect_same_types(node, 0, 1, 2, 3, 4)
    expect_type(node, 0, REAL_TYPES, "data")
    data = node.input_value(0).partial_shape
    if data.rank < 2:
        raise node.error(f"data has rank {data.rank} ({data}); expected rank >= 2 ([N, C, ...])")
    epsilon = _number(node, "epsilon")
    if epsilon < 0:
        raise node.error(f"attribute epsilon={epsilon} must be non-negative")
    channels = data[1]
    for index, label in enumerate(("gamma", "beta", "mean", "variance"), start=1):
        shape = expect_rank(node, index, 1, what=label)
        channels = merge_dims(node, channels, shape[0], f"{label} {shape} must have one value per channel of {data}")
    return [(element_type, PartialShape([data[0], channels, *data.dims[2:]]))]


@register_op("MVN", "normalization", "opset6", shape_inputs=(1,))
def _mvn(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 2)
    element_type = expect_type(node, 0, REAL_TYPES, "data")
    expect_type(node, 1, INDEX_TYPES, "axes")
    expect_rank(node, 1, 1, what="axes")
    data = node.input_value(0).partial_shape
    if not isinstance(node.attrs.get("normalize_variance"), (bool, np.bool_)):
        raise node.error(f"attribute normalize_variance={node.attrs.get('normalize_variance')!r} must be a bool")
    node.attrs["normalize_variance"] = bool(node.attrs["normalize_variance"])
    node.attrs["eps"] = _number(node, "eps")
    node.attrs["eps_mode"] = str(node.attrs.get("eps_mode")).lower()
    expect_attr(node, "eps_mode", EPS_MODES)
    axes = constant_value(node.input_value(1))
    if axes is not None:
        for axis in axes.reshape(-1):
            normalize_axis(node, int(axis), data.rank, "axes value")
    return [(element_type, data)]


def _infer_softmax(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 1)
    element_type = expect_type(node, 0, REAL_TYPES, "data")
    data = node.input_value(0).partial_shape
    axis = node.attrs.setdefault("axis", 1)
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise node.error(f"attribute axis={axis!r} must be an integer")
    node.attrs["axis"] = int(axis)
    if data.rank == 0:
        raise node.error("data is a scalar; expected rank >= 1")
    normalize_axis(node, int(axis), data.rank)
    return [(element_type, data)]


register_op("Softmax", "normalization", "opset8")(_infer_softmax)
register_op("LogSoftmax", "normalization", "opset5")(_infer_softmax)


def normalized_axes(axes: np.ndarray | Sequence[int], rank: int) -> tuple[int, ...]:
    """MVN's axes made non-negative, sorted and without repeats (for kernels)."""
    return tuple(sorted({int(a) % rank for a in np.asarray(axes).reshape(-1)}))
