"""Export rules of the linear-algebra family: MatMul, Einsum, Det, and ScaledDotProductAttention (written out
in ONNX's elementwise ops, MatMul and Softmax)."""

from __future__ import annotations

import math

import numpy as np

from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter
from hetero_sdk.shape import DYNAMIC

__all__: list[str] = []


def _transposed_last(ctx: ExportContext, index: int) -> str:
    rank = ctx.rank(index)
    if rank < 2:
        return ctx.input(index)
    return ctx.emit1("Transpose", [ctx.input(index)], perm=[*range(rank - 2), rank - 1, rank - 2])


@exporter("MatMul")
def matmul(ctx: ExportContext) -> None:
    a = _transposed_last(ctx, 0) if ctx.attrs["transpose_a"] else ctx.input(0)
    b = _transposed_last(ctx, 1) if ctx.attrs["transpose_b"] else ctx.input(1)
    ctx.emit1("MatMul", [a, b], ctx.out())


@exporter("Einsum")
def einsum(ctx: ExportContext) -> None:
    inputs = [ctx.input(i) for i in range(ctx.current.get_input_size())]
    ctx.emit1("Einsum", inputs, ctx.out(), equation=ctx.attrs["equation"])


@exporter("Det")
def det(ctx: ExportContext) -> None:
    ctx.emit1("Det", [ctx.input(0)], ctx.out())


@exporter("ScaledDotProductAttention")
def scaled_dot_product_attention(ctx: ExportContext) -> None:
    element_type = ctx.element_type(0)
    rank = ctx.rank(1)
    if ctx.has_input(4):
        scale = ctx.input(4)
    else:
        depth = ctx.port(0).partial_shape.dims[-1]
        if depth == DYNAMIC:
            raise ctx.unsupported("a dynamic head size without a scale input")
        scale = ctx.const(1 / math.sqrt(depth), element_type, "scale")
    perm = [*range(rank - 2), rank - 1, rank - 2]
    keys = ctx.emit1("Transpose", [ctx.input(1)], perm=perm)
    scores = ctx.emit1("Mul", [ctx.emit1("MatMul", [ctx.input(0), keys]), scale])
    masked = ctx.const(-np.inf, element_type, "masked")
    if ctx.attrs["causal"]:
        rows = _positions(ctx, scores, -2, [1])
        cols = _positions(ctx, scores, -1, [0])
        scores = ctx.emit1("Where", [ctx.emit1("LessOrEqual", [cols, rows]), scores, masked])
    elif ctx.has_input(3):
        if ctx.element_type(3).value == "boolean":
            scores = ctx.emit1("Where", [ctx.input(3), scores, masked])
        else:
            scores = ctx.emit1("Add", [scores, ctx.input(3)])
    weights = ctx.emit1("Softmax", [scores], axis=-1)
    ctx.emit1("MatMul", [weights, ctx.input(2)], ctx.out())


def _positions(ctx: ExportContext, scores: str, axis: int, unsqueeze: list[int]) -> str:
    """``0..n-1`` for the length ``n`` of ``scores``'s ``axis``, with an axis of 1 added at ``unsqueeze``."""
    length = ctx.emit1("Shape", [scores], start=axis, end=axis + 1 if axis < -1 else None)
    count = ctx.emit1("Squeeze", [length, ctx.const([0], name="axis")])
    positions = ctx.emit1("Range", [ctx.const(0, name="zero"), count, ctx.const(1, name="one")])
    return ctx.emit1("Unsqueeze", [positions, ctx.const(unsqueeze, name="axes")])
