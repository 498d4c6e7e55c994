"""Rules for ONNX's cumulative ops: CumSum and CumProd."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.graph.node import Output

__all__: list[str] = []


_I64 = np.int64


def _out(node: object) -> Output:
    return node.output(0)  # type: ignore[attr-defined, no-any-return]


@rule("CumSum", since=11)
def cum_sum(ctx: NodeContext) -> Outputs:
    axis = _out(opset.reshape(ctx.input(1), ctx.const([], _I64), special_zero=False))
    exclusive, reverse = ctx.flag("exclusive", False), ctx.flag("reverse", False)
    return [_out(opset.cum_sum(ctx.input(0), axis, exclusive=exclusive, reverse=reverse))]


@rule("CumProd", since=26)
def cum_prod(ctx: NodeContext) -> Outputs:
    axis = _out(opset.reshape(ctx.input(1), ctx.const([], _I64), special_zero=False))
    exclusive, reverse = ctx.flag("exclusive", False), ctx.flag("reverse", False)
    return [_out(opset.cum_prod(ctx.input(0), axis, exclusive=exclusive, reverse=reverse))]
