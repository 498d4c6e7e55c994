"""com.microsoft GroupNorm, as ONNX Runtime's transformer optimizer writes it for diffusion UNets: group
normalization of a channels-last input (``channels_last=1``, the default) or a channels-first one,
times ``gamma`` plus ``beta`` per channel, then SiLU when ``activation=1``; translated into the SDK's
own ops (Transpose, Reshape, MVN, Multiply, Add, Swish)."""

from __future__ import annotations

import numpy as np
from hetero_sdk import Output, opset
from hetero_sdk.extensions import OnnxRule
from hetero_sdk.plugin import OnnxNodeContext as NodeContext

from hetero_sdk_contrib.checks import Outputs
from hetero_sdk_contrib.constants import DOMAIN

__all__ = ["ONNX_RULES"]

_I64 = np.int64


def group_norm_rule(ctx: NodeContext) -> Outputs:
    """GroupNorm: X, gamma, beta; epsilon, groups, activation (1: SiLU), channels_last."""
    x = ctx.input(0)
    rank = x.partial_shape.rank
    if rank < 3:
        raise ctx.error(f"X has shape {x.partial_shape}; expected (N, ..., C) or (N, C, ...)")
    groups = ctx.attr("groups")
    channels_last = bool(ctx.attr("channels_last", 1))
    channels = x.partial_shape[rank - 1] if channels_last else x.partial_shape[1]
    if groups < 1 or (channels >= 0 and channels % groups):
        raise ctx.error(f"groups={groups} must divide the {channels} channels")
    activation = ctx.attr("activation", 0)
    if activation not in (0, 1):
        raise ctx.unsupported(f"activation={activation} (0: none, 1: SiLU)")
    first: Output = x
    if channels_last:  # (N, ..., C) -> (N, C, ...)
        first = opset.transpose(x, ctx.const([0, rank - 1, *range(1, rank - 1)], _I64)).output(0)
    grouped = opset.reshape(first, ctx.const([0, groups, -1], _I64), special_zero=True)
    normalized = opset.mvn(grouped, ctx.const([2], _I64), normalize_variance=True, eps=ctx.attr("epsilon", 1e-5),
                           eps_mode="inside_sqrt")  # fmt: skip
    y = opset.reshape(normalized, opset.shape_of(first), special_zero=False).output(0)
    per_channel = ctx.const([1, -1] + [1] * (rank - 2), _I64)
    for parameter, combine in ((ctx.input(1), opset.multiply), (ctx.input(2), opset.add)):
        y = combine(y, opset.reshape(parameter, per_channel, special_zero=False)).output(0)
    if activation:
        y = opset.swish(y).output(0)
    if channels_last:  # back to (N, ..., C)
        y = opset.transpose(y, ctx.const([0, *range(2, rank), 1], _I64)).output(0)
    return [y]


ONNX_RULES = [
    OnnxRule(
        DOMAIN,
        "GroupNorm",
        group_norm_rule,
        makes=("Transpose", "Reshape", "MVN", "ShapeOf", "Multiply", "Add", "Swish"),
    ),
]
"""The ONNX ops this module translates."""
