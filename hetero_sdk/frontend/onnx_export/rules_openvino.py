"""Exporter rules for ops OpenVINO IR brings in: IsNaN and HardSigmoid (ONNX's ops of those names; a
HardSigmoid with alpha or beta computed is written out),
FakeQuantize and ScaledDotProductAttention (written out in ONNX's elementwise ops, MatMul and Softmax)."""

from __future__ import annotations

import math

import numpy as np

from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter
from hetero_sdk.shape import DYNAMIC

__all__: list[str] = []


@exporter("IsNaN")
def is_nan(ctx: ExportContext) -> None:
    ctx.emit1("IsNaN", [ctx.input(0)], ctx.out())


@exporter("HardSigmoid")
def hard_sigmoid(ctx: ExportContext) -> None:
    alpha, beta = ctx.constant(1), ctx.constant(2)
    if alpha is not None and beta is not None:
        ctx.emit1(
            "HardSigmoid", [ctx.input(0)], ctx.out(), alpha=float(alpha.reshape(())), beta=float(beta.reshape(()))
        )
        return
    scalar = ctx.const(np.zeros(0, np.int64), name="scalar")  # alpha and beta as scalars: x's shape is kept
    alpha_in, beta_in = (ctx.emit1("Reshape", [ctx.input(i), scalar]) for i in (1, 2))
    line = ctx.emit1("Add", [ctx.emit1("Mul", [ctx.input(0), alpha_in]), beta_in])
    element_type = ctx.element_type(0)
    zero, one = ctx.const(0, element_type, "zero"), ctx.const(1, element_type, "one")
    ctx.emit1("Max", [ctx.emit1("Min", [line, one]), zero], ctx.out())


@exporter("FakeQuantize")
def fake_quantize(ctx: ExportContext) -> None:
    x, low, high, out_low, out_high = (ctx.input(i) for i in range(5))
    steps = ctx.const(ctx.attrs["levels"] - 1, ctx.element_type(0), "steps")
    ratio = ctx.emit1("Div", [ctx.emit1("Sub", [x, low]), ctx.emit1("Sub", [high, low])])
    level = ctx.emit1("Div", [ctx.emit1("Round", [ctx.emit1("Mul", [ratio, steps])]), steps])
    inside = ctx.emit1("Add", [ctx.emit1("Mul", [level, ctx.emit1("Sub", [out_high, out_low])]), out_low])
    above = ctx.emit1("Where", [ctx.emit1("Greater", [x, ctx.emit1("Max", [low, high])]), out_high, inside])
    below = ctx.emit1("LessOrEqual", [x, ctx.emit1("Min", [low, high])])
    ctx.emit1("Where", [below, out_low, above], ctx.out())


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
