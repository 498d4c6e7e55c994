"""Normalization ops: BatchNormInference (opset5), MVN (opset6), Softmax (opset8), LogSoftmax (opset5),
LRN (opset1).

Each is one array-API kernel, computed in f32 for 16-bit floats, that every device shares.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hetero_sdk.array_api import namespace, widened
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import BOOL, FLOAT, INT, LOWER_STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import INDEX_TYPES, REAL_TYPES, expect_rank, expect_same_types, merge_dims, normalize_axis
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.shape import PartialShape

__all__ = [
    "BATCH_NORM_INFERENCE", "EPS_MODES", "LOG_SOFTMAX", "LRN", "MVN", "SOFTMAX", "batch_norm_inference",
    "batch_normalized", "log_softmax", "lrn", "mvn", "normalized_axes", "softmax",
]  # fmt: skip

EPS_MODES = ("inside_sqrt", "outside_sqrt")
"""Where MVN adds ``eps``: ``sqrt(variance + eps)`` or ``sqrt(variance) + eps``."""


def normalized_axes(axes: np.ndarray | Sequence[int], rank: int) -> tuple[int, ...]:
    """MVN's axes made non-negative, sorted and without repeats (for kernels)."""
    return tuple(sorted({int(a) % rank for a in np.asarray(axes).reshape(-1)}))


def _infer_batch_norm_inference(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1, 2, 3, 4)
    data = node.input_value(0).partial_shape
    if data.rank < 2:
        raise node.error(f"data has rank {data.rank} ({data}); expected rank >= 2 ([N, C, ...])")
    if node.attrs["epsilon"] < 0:
        raise node.error(f"attribute epsilon={node.attrs['epsilon']} must be non-negative")
    channels = data[1]
    for index, label in enumerate(("gamma", "beta", "mean", "variance"), start=1):
        shape = expect_rank(node, index, 1, what=label)
        channels = merge_dims(node, channels, shape[0], f"{label} {shape} must have one value per channel of {data}")
    return [(element_type, PartialShape([data[0], channels, *data.dims[2:]]))]


def _batch_norm_inference(node: Node, x: Any, gamma: Any, beta: Any, mean: Any, variance: Any) -> Any:
    per_channel = (-1,) + (1,) * (x.ndim - 2)
    gamma, beta, mean, variance = (namespace(x).reshape(v, per_channel) for v in (gamma, beta, mean, variance))
    return batch_normalized(x, gamma, beta, mean, variance, node.attrs["epsilon"])


def batch_normalized(x: Any, gamma: Any, beta: Any, mean: Any, variance: Any, epsilon: float) -> Any:
    """BatchNormInference's formula, ``gamma * (x - mean) / sqrt(variance + epsilon) + beta`` (16-bit
    floats widened), its parameters laid out to broadcast along ``x``'s channel axis wherever that is."""
    gamma, beta, mean, variance = (widened(v) for v in (gamma, beta, mean, variance))
    return gamma * (widened(x) - mean) / namespace(x).sqrt(variance + epsilon) + beta


def _infer_mvn(node: Node) -> list[OutputSpec]:
    expect_rank(node, 1, 1, what="axes")
    data = node.input_value(0).partial_shape
    axes = constant_value(node.input_value(1))
    if axes is not None:
        for axis in axes.reshape(-1):
            normalize_axis(node, int(axis), data.rank, "axes value")
    return [(node.input_value(0).element_type, data)]


def _mvn(node: Node, x: Any, axes: Any) -> Any:
    xp = namespace(x)
    x = widened(x)
    reduce = normalized_axes(axes, x.ndim)
    centered = x - xp.mean(x, axis=reduce, keepdims=True)
    if not node.attrs["normalize_variance"]:
        return centered
    variance = xp.mean(centered * centered, axis=reduce, keepdims=True)
    eps = node.attrs["eps"]
    if node.attrs["eps_mode"] == "inside_sqrt":
        return centered / xp.sqrt(variance + eps)
    return centered / (xp.sqrt(variance) + eps)


def _infer_lrn(node: Node) -> list[OutputSpec]:
    data = node.input_value(0).partial_shape
    expect_rank(node, 1, 1, what="axes")
    axes = constant_value(node.input_value(1))
    if axes is not None:
        for axis in axes.reshape(-1):
            normalize_axis(node, int(axis), data.rank, "axes value")
    if node.attrs["size"] < 1:
        raise node.error(f"attribute size={node.attrs['size']} must be positive")
    return [(node.input_value(0).element_type, data)]


def _window_sum(x: Any, axis: int, size: int) -> Any:
    """The sum of each element's window of ``size`` along ``axis``: ``(size - 1) // 2`` before it and the
    rest after, zeros past the ends."""
    xp = namespace(x)
    before = (size - 1) // 2
    edges = [list(x.shape) for _ in range(2)]
    edges[0][axis], edges[1][axis] = before, size - 1 - before
    padded = xp.concat([xp.zeros(edges[0], dtype=x.dtype), x, xp.zeros(edges[1], dtype=x.dtype)], axis=axis)
    length = x.shape[axis]
    total = xp.zeros_like(x)
    for offset in range(size):
        window = tuple(slice(offset, offset + length) if d == axis else slice(None) for d in range(x.ndim))
        total = total + padded[window]
    return total


def _lrn(node: Node, x: Any, axes: Any) -> Any:
    xp = namespace(x)
    x = widened(x)
    size, reduce = node.attrs["size"], normalized_axes(axes, x.ndim)
    squares = x * x
    for axis in reduce:
        squares = _window_sum(squares, axis, size)
    scale = node.attrs["alpha"] / size ** len(reduce)
    return x / xp.pow(node.attrs["bias"] + scale * squares, node.attrs["beta"])


def _infer_softmax(node: Node) -> list[OutputSpec]:
    data = node.input_value(0).partial_shape
    if data.rank == 0:
        raise node.error("data is a scalar; expected rank >= 1")
    normalize_axis(node, node.attrs["axis"], data.rank)
    return [(node.input_value(0).element_type, data)]


def _softmax(node: Node, x: Any) -> Any:
    xp, axis = namespace(x), node.attrs["axis"]
    x = widened(x)
    shifted = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
    return shifted / xp.sum(shifted, axis=axis, keepdims=True)


def _log_softmax(node: Node, x: Any) -> Any:
    xp, axis = namespace(x), node.attrs["axis"]
    x = widened(x)
    shifted = x - xp.max(x, axis=axis, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=axis, keepdims=True))


_DATA = Input("data", REAL_TYPES)
_AXIS = Attr("axis", INT, 1, doc="the axis to normalize, in [-rank, rank)", axis_of=0)

BATCH_NORM_INFERENCE = define(
    OpDef(
        "BatchNormInference",
        "normalization",
        _infer_batch_norm_inference,
        inputs=(_DATA, *(Input(name, REAL_TYPES, doc="[C]") for name in ("gamma", "beta", "mean", "variance"))),
        attrs=(Attr("epsilon", FLOAT, doc="added to the variance (non-negative)"),),
        version="opset5",
        evaluate=_batch_norm_inference,
        doc="gamma * (data - mean) / sqrt(variance + epsilon) + beta, per channel (axis 1).",
    )
)
MVN = define(
    OpDef(
        "MVN",
        "normalization",
        _infer_mvn,
        inputs=(_DATA, Input("axes", INDEX_TYPES, decides_shape=True, doc="1D: the axes to normalize over")),
        attrs=(
            Attr("normalize_variance", BOOL, doc="divide by the standard deviation too"),
            Attr("eps", FLOAT, doc="the stabilizing constant"),
            Attr("eps_mode", LOWER_STRING, choices=EPS_MODES, doc="where eps is added"),
        ),
        version="opset6",
        evaluate=_mvn,
        doc="Subtracts the mean over axes, and with normalize_variance divides by the standard deviation.",
    )
)
LRN = define(
    OpDef(
        "LRN",
        "normalization",
        _infer_lrn,
        inputs=(_DATA, Input("axes", INDEX_TYPES, decides_shape=True, doc="1D: the axes of the window")),
        attrs=(
            Attr("alpha", FLOAT, doc="the scale of the squares' sum"),
            Attr("beta", FLOAT, doc="the exponent"),
            Attr("bias", FLOAT, doc="added to the scaled sum"),
            Attr("size", INT, doc="the window's side along each axis"),
        ),
        evaluate=_lrn,
        doc="Local response normalization: data / (bias + alpha / size ** len(axes) * window sum of squares) ** beta.",
    )
)
SOFTMAX = define(
    OpDef(
        "Softmax",
        "normalization",
        _infer_softmax,
        (_DATA,),
        (_AXIS,),
        "opset8",
        _softmax,
        doc="exp(x) / sum(exp(x)) along axis.",
    )
)
LOG_SOFTMAX = define(
    OpDef(
        "LogSoftmax",
        "normalization",
        _infer_softmax,
        (_DATA,),
        (_AXIS,),
        "opset5",
        _log_softmax,
        doc="x - log(sum(exp(x))) along axis.",
    )
)


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
    return Node(BATCH_NORM_INFERENCE, inputs, {"epsilon": epsilon}, name)


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
    attrs = {"normalize_variance": normalize_variance, "eps": eps, "eps_mode": eps_mode}
    return Node(MVN, [as_output(data), axes_out], attrs, name)


def softmax(data: Any, axis: int = 1, name: str | None = None) -> Node:
    """``exp(x) / sum(exp(x))`` along ``axis`` (``Softmax``, opset8).

    :param data: a real tensor of rank >= 1.
    :param axis: the axis to normalize, in ``[-rank, rank)``.
    :param name: the node's friendly name.
    """
    return Node(SOFTMAX, [as_output(data)], {"axis": axis}, name)


def log_softmax(data: Any, axis: int = 1, name: str | None = None) -> Node:
    """``x - log(sum(exp(x)))`` along ``axis`` (``LogSoftmax``, opset5).

    :param data: a real tensor of rank >= 1.
    :param axis: the axis to normalize, in ``[-rank, rank)``.
    :param name: the node's friendly name.
    """
    return Node(LOG_SOFTMAX, [as_output(data)], {"axis": axis}, name)


def lrn(data: Any, axes: Any, alpha: float, beta: float, bias: float, size: int, name: str | None = None) -> Node:
    """Local response normalization (``LRN``, opset1).

    Each element is divided by ``(bias + alpha / size ** len(axes) * s) ** beta``, where ``s`` sums the
    squares over its window: ``size`` elements along each of ``axes``, ``(size - 1) // 2`` of them before.

    :param data: the tensor to normalize.
    :param axes: 1-D integer tensor (or list) of the window's axes, each in ``[-rank, rank)``.
    :param alpha: the scale of the squares' sum.
    :param beta: the exponent.
    :param bias: added to the scaled sum.
    :param size: the window's side along each axis (positive).
    :param name: the node's friendly name.
    """
    axes_out = as_output(np.asarray(axes, np.int64) if isinstance(axes, (list, tuple, int)) else axes)
    attrs = {"alpha": alpha, "beta": beta, "bias": bias, "size": size}
    return Node(LRN, [as_output(data), axes_out], attrs, name)
