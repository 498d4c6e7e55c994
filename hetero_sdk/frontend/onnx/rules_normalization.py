"""Rules for ONNX's normalizations: batch, instance and layer normalization, LRN, Softmax, LogSoftmax,
Hardmax and LpNormalization; and LpPool, which shares LpNormalization's p-norm."""

from __future__ import annotations

import math

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.frontend.onnx.rules_convolution import channel_bias, window_attrs
from hetero_sdk.graph.limits import CONSTANT_ELEMENTS
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


@rule("LRN")
def lrn(ctx: NodeContext) -> Outputs:
    node = opset.lrn(
        ctx.input(0),
        ctx.const([1], _I64),
        alpha=ctx.attr("alpha", 0.0001),
        beta=ctx.attr("beta", 0.75),
        bias=ctx.attr("bias", 1.0),
        size=ctx.attr("size"),
    )
    return [_out(node)]


@rule("Softmax", "LogSoftmax")
def softmax_1(ctx: NodeContext) -> Outputs:
    """Before opset 13 the input is seen as 2-D: the axes from ``axis`` on are normalized together."""
    x = ctx.input(0)
    rank = x.partial_shape.rank
    axis = ctx.axis("axis", 1, rank)
    factory = opset.softmax if ctx.op_type == "Softmax" else opset.log_softmax
    if axis == rank - 1:
        return [_out(factory(x, axis=axis))]
    flat = opset.reshape(x, ctx.const([0] * axis + [-1], _I64), special_zero=True)
    return [_out(opset.reshape(factory(flat, axis=axis), opset.shape_of(x), special_zero=False))]


@rule("Softmax", "LogSoftmax", since=13)
def softmax_13(ctx: NodeContext) -> Outputs:
    factory = opset.softmax if ctx.op_type == "Softmax" else opset.log_softmax
    return [_out(factory(ctx.input(0), axis=ctx.attr("axis", -1)))]


def _hardmax(ctx: NodeContext, x: Output, axis: int) -> Output:
    """1 at the first largest element along ``axis``, 0 elsewhere: TopK's index, one-hot."""
    rank = x.partial_shape.rank
    size = x.partial_shape.dims[axis]
    if size < 0:
        raise ctx.unsupported(f"a dynamic dimension on the Hardmax axis {axis} (of {x.partial_shape})")
    top = opset.topk(x, ctx.const(1, _I64), axis, "max", "value", index_element_type=Type.i64, stable=True)
    index = _out(top, 1)
    CONSTANT_ELEMENTS.check(size, f"the positions along axis {axis}", ctx.error)
    positions = np.arange(size, dtype=np.int64).reshape([size if d == axis else 1 for d in range(rank)])
    return _out(opset.convert(opset.equal(ctx.const(positions), index), x.element_type))


@rule("Hardmax")
def hardmax_1(ctx: NodeContext) -> Outputs:
    """Before opset 13 the input is seen as 2-D: the axes from ``axis`` on are one row."""
    x = ctx.input(0)
    rank = x.partial_shape.rank
    axis = ctx.axis("axis", 1, rank)
    if axis == rank - 1:
        return [_hardmax(ctx, x, axis)]
    flat = _out(opset.reshape(x, ctx.const([0] * axis + [-1], _I64), special_zero=True))
    return [_out(opset.reshape(_hardmax(ctx, flat, axis), opset.shape_of(x), special_zero=False))]


@rule("Hardmax", since=13)
def hardmax_13(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    return [_hardmax(ctx, x, ctx.axis("axis", -1, x.partial_shape.rank))]


def _like(ctx: NodeContext, value: float, x: Output) -> Output:
    return ctx.const(np.array(value, dtype=x.element_type.numpy))


def _lp_sum(ctx: NodeContext, x: Output, p: float) -> Output:
    """``|x| ** p``, without a Power where p is 1 or 2 (exact, and cheaper)."""
    if p == 1:
        return _out(opset.abs(x))
    if p == 2:
        return _out(opset.multiply(x, x))
    return _out(opset.power(opset.abs(x), _like(ctx, p, x)))


def _lp_root(ctx: NodeContext, total: Output, p: float) -> Output:
    if p == 1:
        return total
    if p == 2:
        return _out(opset.sqrt(total))
    return _out(opset.power(total, _like(ctx, 1 / p, total)))


@rule("LpNormalization")
def lp_normalization(ctx: NodeContext) -> Outputs:
    """``x`` divided by its L1 or L2 norm along ``axis``; 0 where the norm is 0 (ONNX's reference)."""
    x = ctx.input(0)
    p = ctx.attr("p", 2)
    if p not in (1, 2):
        raise ctx.error(f"p must be 1 or 2, not {p}")
    axis = ctx.axis("axis", -1, x.partial_shape.rank)
    norm = _lp_root(ctx, _out(opset.reduce_sum(_lp_sum(ctx, x, p), ctx.const([axis], _I64), keep_dims=True)), p)
    zero = _like(ctx, 0, norm)
    return [_out(opset.select(opset.equal(norm, zero), zero, opset.divide(x, norm)))]


@rule("LpPool")
def lp_pool(ctx: NodeContext) -> Outputs:
    """The p-norm of each window: the window's mean of ``|x| ** p`` (padding counted), times its size,
    to the power ``1 / p``."""
    x = ctx.input(0)
    spatial = x.partial_shape.rank - 2
    window = window_attrs(ctx, spatial)
    dilations = window.pop("dilations")
    if ctx.flag("ceil_mode", False):  # a window past the end would average over fewer elements
        raise ctx.unsupported("LpPool with ceil_mode=1")
    p = float(ctx.attr("p", 2))
    if p <= 0:
        raise ctx.error(f"p must be positive, not {p}")
    kernel = ctx.attr("kernel_shape")
    if any(d != 1 for d in dilations):  # type: ignore[attr-defined]
        # OpenVINO's AvgPool has no dilations: window sums as a depthwise convolution with ones
        channels = x.partial_shape[1]
        if channels < 0 or window["auto_pad"] != "explicit":
            raise ctx.unsupported("a dilated LpPool with a dynamic channel count or auto_pad")
        CONSTANT_ELEMENTS.check(channels * math.prod(kernel), f"a window of ones {kernel}", ctx.error)
        ones = ctx.const(np.ones([channels, 1, 1, *kernel], x.element_type.numpy))
        begin, end, strides = window["pads_begin"], window["pads_end"], window["strides"]
        total = _out(opset.group_convolution(_lp_sum(ctx, x, p), ones, strides, begin, end, dilations))  # type: ignore[arg-type]
        return [_lp_root(ctx, total, p)]
    mean = opset.avg_pool(_lp_sum(ctx, x, p), kernel_shape=kernel, exclude_pad=False, **window)
    total = _out(opset.multiply(mean, _like(ctx, float(np.prod(kernel)), x)))
    return [_lp_root(ctx, total, p)]
