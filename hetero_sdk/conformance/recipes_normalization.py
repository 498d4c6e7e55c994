"""Case recipes of the normalization family: Softmax, LogSoftmax, MVN, LRN and BatchNormInference."""

from __future__ import annotations

import math

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import F32, FLOATS, I64, Builder, OpCase, recipe
from hetero_sdk.conformance.recipe_parts import draw_axes


@recipe("Softmax", "LogSoftmax")
def _softmax(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(1, 4)
    axis = b.integer(-len(shape), len(shape) - 1)
    x = b.values(shape, b.pick(FLOATS), -5, 5)
    fn = opset.softmax if op_type == "Softmax" else opset.log_softmax
    return b.case(op_type, fn(b.input(x, "x"), axis=axis, name="op"), "transcendental", shape[axis], axis=axis)


@recipe("MVN")
def _mvn(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(2, 4, 1, 5)
    axes = draw_axes(b, len(shape))
    normalize, eps = b.flag(), b.pick((1e-9, 1e-5, 1e-3))
    eps_mode = b.pick(("inside_sqrt", "outside_sqrt"))
    x = b.values(shape, F32, -3, 3)
    node = opset.mvn(
        b.input(x, "x"), opset.constant(np.array(axes, I64), name="axes"), normalize, eps, eps_mode, name="op"
    )
    terms = math.prod(shape[a] for a in axes)
    return b.case(
        op_type, node, "accumulate", 4 * terms, axes=axes, normalize_variance=normalize, eps=eps, eps_mode=eps_mode
    )


@recipe("LRN")
def _lrn(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    shape = b.shape(2, 4, 1, 5)
    axes = draw_axes(b, len(shape))
    size = b.integer(1, 5)
    alpha, beta, bias = b.pick((1e-4, 0.1, 1.0)), b.pick((0.5, 0.75, 1.0)), b.pick((1.0, 2.0))
    x = b.values(shape, dtype, -3, 3)
    node = opset.lrn(
        b.input(x, "x"), opset.constant(np.array(axes, I64), name="axes"), alpha, beta, bias, size, name="op"
    )
    terms = size ** len(axes)
    return b.case(op_type, node, "transcendental", terms, axes=axes, alpha=alpha, beta=beta, bias=bias, size=size)


@recipe("BatchNormInference")
def _batch_norm(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    shape = [b.integer(1, 3), b.integer(1, 4), *b.shape(0, 2, 1, 4)]
    channels = shape[1]
    epsilon = b.pick((1e-5, 1e-3, 0.01))
    x = b.values(shape, dtype, -3, 3)
    gamma, beta, mean = (b.operand(b.values([channels], dtype, -2, 2), n) for n in ("gamma", "beta", "mean"))
    variance = b.operand(b.values([channels], dtype, 0.1, 2), "variance")
    node = opset.batch_norm_inference(b.input(x, "x"), gamma, beta, mean, variance, epsilon, name="op")
    return b.case(op_type, node, "accumulate", 8, epsilon=epsilon)
