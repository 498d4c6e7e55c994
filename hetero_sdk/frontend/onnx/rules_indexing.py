"""Rules for ONNX ops that read or write data at positions held in another tensor: GatherND, the
scatters (Scatter, ScatterElements, ScatterND), ReverseSequence and Compress."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
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
    true, as OpenVINO's frontend decomposes it: Gather at the positions NonZero finds. The output's
    length depends on the condition's values, so devices with static shapes decline it."""
    data: Output = ctx.input(0)
    if ctx.has_attr("axis"):
        axis = ctx.attr("axis")
    else:
        data, axis = opset.reshape(data, ctx.const([-1], _I64), special_zero=False).output(0), 0
    positions = opset.non_zero(ctx.input(1))
    positions = opset.reshape(positions, ctx.const([-1], _I64), special_zero=False)
    return [opset.gather(data, positions, ctx.const(axis, _I64)).output(0)]
