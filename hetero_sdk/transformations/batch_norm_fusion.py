"""BatchNormInference folded into the convolution before it (OpenVINO's ``ConvolutionBatchNormFusion``):
``batch_norm(conv(x, w) [+ b])`` becomes ``conv(x, w * scale) + shift`` with ``scale = gamma /
sqrt(variance + epsilon)`` and ``shift = beta + (b - mean) * scale``, computed once while compiling.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hetero_sdk.graph.node import Node
from hetero_sdk.ops.basic import constant
from hetero_sdk.ops.elementwise import add, multiply
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.transformations.fused_names import fused_names, set_fused_names
from hetero_sdk.transformations.graph_rewrite import ConsumerMap, MatcherPass, replace_node

if TYPE_CHECKING:
    from hetero_sdk.graph.model import Model

__all__ = ["BatchNormDecomposition", "ConvBatchNormFusion"]

_CONVOLUTIONS = frozenset({"Convolution", "GroupConvolution"})


def _channel_values(value: np.ndarray | None, channels: int, rank: int, axis: int) -> np.ndarray | None:
    """``value`` as one number per channel, when it varies along ``axis`` of ``rank`` dims only
    (``[C]`` statistics: axis 0 of 1; a ``[1, C, 1, 1]`` bias: axis 1 of 4; a scalar anywhere)."""
    if value is None or value.ndim > rank:
        return None
    shape = (1,) * (rank - value.ndim) + value.shape
    if any(d != 1 for i, d in enumerate(shape) if i != axis) or shape[axis] not in (1, channels):
        return None
    return np.broadcast_to(value.reshape(-1), (channels,)).astype(np.float64)


class ConvBatchNormFusion(MatcherPass):
    """Folds each BatchNormInference whose statistics are constants into the Convolution or
    GroupConvolution (with constant filters) before it, through an optional per-channel bias Add.

    The convolution and the Add must have no other consumers; the result is one convolution with
    scaled filters and one Add, which keep the fused ops' names for ``query_model``.
    """

    name = "ConvBatchNormFusion"
    anchors = ("BatchNormInference",)

    def apply(self, model: Model, norm: Node, users: ConsumerMap) -> bool:
        if not norm.output(0).element_type.is_real:
            return False
        stats = [constant_value(norm.input_value(i)) for i in range(1, 5)]
        if any(s is None for s in stats):
            return False
        source, bias, pattern = norm.input_value(0), None, []
        rank = source.partial_shape.rank
        if source.node.type_name == "Add" and users.count(source) == 1:
            left, right = source.node.input_values()
            bias_value = constant_value(right)
            if bias_value is None:
                return False
            pattern.append(source.node)
            bias, source = bias_value, left
        conv = source.node
        filters = constant_value(conv.input_value(1)) if conv.type_name in _CONVOLUTIONS else None
        if filters is None or users.count(source) != 1 or rank < 3:
            return False
        channels = source.partial_shape[1]
        if channels < 0:
            return False
        gamma, beta, mean, variance = (_channel_values(s, channels, 1, 0) for s in stats)
        shift_in = _channel_values(bias, channels, rank, 1) if bias is not None else np.zeros(channels)
        if gamma is None or beta is None or mean is None or variance is None or shift_in is None:
            return False
        scale = gamma / np.sqrt(variance + norm.attrs["epsilon"])
        shift = beta + (shift_in - mean) * scale
        dtype = filters.dtype
        if conv.type_name == "Convolution":
            scaled = filters * scale.reshape(-1, *([1] * (filters.ndim - 1)))
        else:  # [groups, out per group, in per group, kernel...]
            scaled = filters * scale.reshape(filters.shape[0], filters.shape[1], *([1] * (filters.ndim - 2)))
        folded = Node(conv.op, [conv.input_value(0), constant(scaled.astype(dtype)).output(0)], dict(conv.attrs))
        folded.friendly_name = conv.friendly_name
        set_fused_names(folded, fused_names(conv))
        users.attach(folded)
        offset = constant(shift.astype(dtype).reshape(1, channels, *([1] * (rank - 2)))).output(0)
        replace_node(model, norm, add(folded.output(0), offset), fused=[conv, *pattern], consumers=users)
        return True


class BatchNormDecomposition(MatcherPass):
    """Rewrites each BatchNormInference with constant statistics that no convolution absorbed into
    ``x * scale + shift`` with per-channel constants (OpenVINO's ``BatchNormDecomposition``), which the
    linear-chain fusions can then merge with the constant Adds and Multiplies around it.

    Run it after :class:`ConvBatchNormFusion` (in the same group, it only sees what that pass left).
    """

    name = "BatchNormDecomposition"
    anchors = ("BatchNormInference",)

    def apply(self, model: Model, norm: Node, users: ConsumerMap) -> bool:
        if not norm.output(0).element_type.is_real:
            return False
        stats = [constant_value(norm.input_value(i)) for i in range(1, 5)]
        data = norm.input_value(0)
        channels, rank = data.partial_shape[1], data.partial_shape.rank
        if any(s is None for s in stats) or rank < 2 or channels < 0:
            return False
        gamma, beta, mean, variance = (_channel_values(s, channels, 1, 0) for s in stats)
        if gamma is None or beta is None or mean is None or variance is None:
            return False
        scale = gamma / np.sqrt(variance + norm.attrs["epsilon"])
        shift = beta - mean * scale
        dtype = data.element_type.numpy
        shape = (1, channels, *([1] * (rank - 2)))
        scaled = multiply(data, constant(scale.astype(dtype).reshape(shape)).output(0))
        replace_node(model, norm, add(scaled, constant(shift.astype(dtype).reshape(shape)).output(0)), consumers=users)
        return True
