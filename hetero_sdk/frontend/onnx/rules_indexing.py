"""Rules for ONNX ops that read or write data at positions held in another tensor: GatherND, the
scatters (Scatter, ScatterElements, ScatterND, TensorScatter), ReverseSequence, Compress, and ONNX-ML's
ArrayFeatureExtractor."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.graph.node import Output

__all__: list[str] = []

_I64 = np.int64
_REDUCTIONS = {"none": "none", "add": "sum", "mul": "prod", "max": "max", "min": "min"}
"""ONNX's scatter reductions and the SDK's names for them."""


def _reduction(ctx: NodeContext) -> str:
    name = ctx.attr("reduction", "none")
    if name not in _REDUCTIONS:
        raise ctx.unsupported(f"reduction '{name}' (known: {', '.join(_REDUCTIONS)})")
    return _REDUCTIONS[name]


@rule("GatherND", since=11)
def gather_nd(ctx: NodeContext) -> Outputs:
    return [opset.gather_nd(ctx.input(0), ctx.input(1), batch_dims=ctx.attr("batch_dims", 0)).output(0)]


@rule("Scatter", since=9)
@rule("ScatterElements", since=11)
def scatter_elements(ctx: NodeContext) -> Outputs:
    """ScatterElements, and Scatter (deprecated in opset 11), which is the same op without reductions."""
    node = opset.scatter_elements_update(
        ctx.input(0), ctx.input(1), ctx.input(2), axis=ctx.attr("axis", 0), reduction=_reduction(ctx)
    )
    return [node.output(0)]


@rule("ScatterND", since=11)
def scatter_nd(ctx: NodeContext) -> Outputs:
    return [opset.scatter_nd_update(ctx.input(0), ctx.input(1), ctx.input(2), reduction=_reduction(ctx)).output(0)]


@rule("ReverseSequence", since=10)
def reverse_sequence(ctx: NodeContext) -> Outputs:
    node = opset.reverse_sequence(
        ctx.input(0), ctx.input(1), batch_axis=ctx.attr("batch_axis", 1), seq_axis=ctx.attr("time_axis", 0)
    )
    return [node.output(0)]


@rule("Compress", since=9)
def compress(ctx: NodeContext) -> Outputs:
    """The slices of ``data`` along ``axis`` (of the flattened data without one) where ``condition`` is
    true, as OpenVINO's frontend decomposes it: Gather at the positions NonZero finds. A condition
    longer than the axis has its extra entries dropped, as ONNX Runtime does. The output's length
    depends on the condition's values, so devices with static shapes decline it."""
    data: Output = ctx.input(0)
    if ctx.has_attr("axis"):
        axis = ctx.axis("axis", 0, data.partial_shape.rank)
    else:
        data, axis = opset.reshape(data, ctx.const([-1], _I64), special_zero=False).output(0), 0
    condition = ctx.input(1)
    if condition.partial_shape.rank != 1:
        raise ctx.error(f"condition has shape {condition.partial_shape}; it must be 1-D")
    entries, size = condition.partial_shape[0], data.partial_shape[axis]
    if entries < 0 or size < 0 or entries > size:  # the condition may be longer than the axis
        length = opset.gather(opset.shape_of(data, Type.i64), ctx.const([axis], _I64), ctx.const(0, _I64))
        condition = opset.slice(condition, ctx.const([0], _I64), length, ctx.const([1], _I64)).output(0)
    positions = opset.non_zero(condition)
    positions = opset.reshape(positions, ctx.const([-1], _I64), special_zero=False)
    return [opset.gather(data, positions, ctx.const(axis, _I64)).output(0)]


@rule("TensorScatter", since=24)
def tensor_scatter(ctx: NodeContext) -> Outputs:
    """A KV-cache update: ``update`` written into ``past_cache`` along ``axis`` from each batch entry's
    write index (modulo the cache length in ``circular`` mode), as one ScatterElementsUpdate."""
    past, update = ctx.input(0), ctx.input(1)
    rank = past.partial_shape.rank
    axis = ctx.axis("axis", -2, rank)
    zero, one = ctx.const(0, _I64), ctx.const(1, _I64)
    length = opset.gather(opset.shape_of(update), ctx.const(axis, _I64), zero)
    steps = opset.range(zero, length, one, output_type=Type.i64)
    positions: Output = opset.reshape(steps, ctx.const(_along(rank, axis), _I64), special_zero=False).output(0)
    starts = ctx.optional_input(2)
    if starts is not None:
        per_batch = opset.reshape(opset.convert(starts, Type.i64), ctx.const(_along(rank, 0), _I64), special_zero=False)
        positions = opset.add(positions, per_batch).output(0)
    if ctx.attr("mode", "linear") == "circular":
        size = opset.gather(opset.shape_of(past), ctx.const(axis, _I64), zero)
        positions = opset.floor_mod(positions, size).output(0)
    positions = opset.broadcast(positions, opset.shape_of(update)).output(0)
    return [opset.scatter_elements_update(past, positions, update, axis=axis).output(0)]


def _along(rank: int, axis: int) -> list[int]:
    """A shape of ``rank`` ones but ``-1`` at ``axis``: a vector laid along that axis."""
    return [-1 if d == axis else 1 for d in range(rank)]


@rule("ArrayFeatureExtractor", domain="ai.onnx.ml")
def array_feature_extractor(ctx: NodeContext) -> Outputs:
    """The elements of ``x`` at ``indices`` along its last axis; a 1-D ``x`` gives one row. Indices of any
    rank are read as one list (flattened), as ONNX Runtime and ``onnx.reference`` read them."""
    x = ctx.input(0)
    indices = opset.reshape(ctx.input(1), ctx.const([-1], _I64), special_zero=False)
    taken = opset.gather(x, indices, ctx.const(-1, _I64)).output(0)
    if x.partial_shape.rank == 1:
        taken = opset.unsqueeze(taken, ctx.const([0], _I64)).output(0)
    return [taken]
