"""Rules for ONNX's matrix products: MatMul, Gemm, Einsum and Det."""

from __future__ import annotations

from hetero_sdk import opset
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.graph.node import Output

__all__: list[str] = []


def _out(node: object, index: int = 0) -> Output:
    return node.output(index)  # type: ignore[attr-defined, no-any-return]


@rule("MatMul")
def matmul(ctx: NodeContext) -> Outputs:
    return [_out(opset.matmul(ctx.input(0), ctx.input(1)))]


@rule("Gemm")
def gemm(ctx: NodeContext) -> Outputs:
    a, b = ctx.input(0), ctx.input(1)
    y = _out(opset.matmul(a, b, transpose_a=ctx.flag("transA", False), transpose_b=ctx.flag("transB", False)))
    alpha, beta = ctx.attr("alpha", 1.0), ctx.attr("beta", 1.0)
    if alpha != 1.0:
        y = _out(opset.multiply(y, ctx.const(alpha, y.element_type)))
    c = ctx.optional_input(2)
    if c is not None and beta != 0.0:
        if beta != 1.0:
            c = _out(opset.multiply(c, ctx.const(beta, c.element_type)))
        y = _out(opset.add(y, c))
    return [y]


@rule("Det", since=11)
def det(ctx: NodeContext) -> Outputs:
    return [_out(opset.det(ctx.input(0)))]


@rule("Einsum", since=12)
def einsum(ctx: NodeContext) -> Outputs:
    values = [ctx.input(i) for i in range(len(ctx.inputs))]
    return [_out(opset.einsum(values, ctx.attr("equation")))]
