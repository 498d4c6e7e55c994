"""Rules for ONNX's batch, instance and layer normalization."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.frontend.onnx.rules_nn import channel_bias
from hetero_sdk.graph.node import Output

__all__: list[str] = []

_I64 = np.int64


def _out(node: object, index: int = 0) -> Output:
    return node.output(index)  # type: ignore[attr-defined, no-any-return]


@rule("BatchNormalization")
def batch_norm(ctx: NodeContext) -> Outputs:
    training = ctx.version >= 14 and ctx.flag("training_mode", False)
    if not training and (ctx.flag("training_mode", False) or any(ctx.wants_output(i) for i in range(1, 5))):
        raise ctx.unsupported("training mode before opset 14 (saved statistics outputs)")
    if ctx.version < 9 and not ctx.attr("spatial", 1):
        raise ctx.unsupported("per-activation statistics (spatial=0)")
    data, gamma, beta, mean, variance = (ctx.input(i) for i in range(5))
    epsilon = ctx.attr("epsilon", 1e-5)
    if not training:
        return [_out(opset.batch_norm_inference(data, gamma, beta, mean, variance, epsilon=epsilon))]
    return _batch_norm_training(ctx, data, gamma, beta, mean, variance, epsilon)


def _batch_norm_training(
    ctx: NodeContext, x: Output, gamma: Output, beta: Output, mean: Output, variance: Output, epsilon: float
) -> Outputs:
    """Training mode: normalized with the batch's mean and (biased) variance per channel; the running
    statistics move toward them by ``1 - momentum``."""
    reduced = [0, *range(2, x.partial_shape.rank)]
    axes = ctx.const(reduced, _I64)
    # sums over the count, not ReduceMean (whose mean of nothing is 0): an empty batch gives NaN, as ONNX's
    # BatchNormalization (a sum divided by the count) does
    dims = opset.gather(opset.shape_of(x), ctx.const(reduced, _I64), 0)
    count = opset.convert(opset.reduce_prod(dims, axes=0), x.element_type)
    batch_mean = opset.divide(opset.reduce_sum(x, axes, keep_dims=True), count)
    centered = opset.subtract(x, batch_mean)
    batch_var = opset.divide(opset.reduce_sum(opset.multiply(centered, centered), axes, keep_dims=False), count)
    flat_mean = opset.reshape(batch_mean, ctx.const([-1], _I64), special_zero=False)
    y = opset.batch_norm_inference(x, gamma, beta, flat_mean, batch_var, epsilon=epsilon)
    momentum = ctx.attr("momentum", 0.9)
    keep, take = (ctx.const(np.array(v, x.element_type.numpy)) for v in (momentum, 1 - momentum))

    def running(old: Output, new: object) -> Output:
        return _out(opset.add(opset.multiply(old, keep), opset.multiply(new, take)))

    return [_out(y), running(mean, flat_mean), running(variance, batch_var)]


@rule("InstanceNormalization", since=6)
def instance_norm(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    axes = ctx.const(list(range(2, x.partial_shape.rank)), _I64)
    normalized = _out(
        opset.mvn(x, axes, normalize_variance=True, eps=ctx.attr("epsilon", 1e-5), eps_mode="inside_sqrt")
    )
    shape = ctx.const([1, -1] + [1] * (x.partial_shape.rank - 2), _I64)
    scale = opset.reshape(ctx.input(1), shape, special_zero=False)
    return [channel_bias(ctx, _out(opset.multiply(normalized, scale)), ctx.input(2))]


@rule("LayerNormalization", since=17)
def layer_norm(ctx: NodeContext) -> Outputs:
    if ctx.wants_output(1) or ctx.wants_output(2):
        raise ctx.unsupported("the Mean and InvStdDev outputs")
    x = ctx.input(0)
    rank = x.partial_shape.rank
    axis = ctx.axis("axis", -1, rank)
    axes = ctx.const(list(range(axis, rank)), _I64)
    normalized = opset.mvn(x, axes, normalize_variance=True, eps=ctx.attr("epsilon", 1e-5), eps_mode="inside_sqrt")
    y = _out(opset.multiply(normalized, ctx.input(1)))
    bias = ctx.optional_input(2)
    return [y if bias is None else _out(opset.add(y, bias))]
