"""Case recipes of the activations whose operands constrain each other beyond their declared types: Swish's
optional beta is a scalar, Clamp's bounds are ordered, HardSigmoid's alpha and beta are scalars. The other
activation and elementwise ops derive their cases (``derived_cases``)."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import F16, F32, FLOATS, I32, Builder, OpCase, recipe


@recipe("Swish")
def _swish(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    x = b.values(b.shape(0, 4), dtype, -5, 5)
    beta = None
    if b.flag():
        beta = b.operand(np.array(b.pick((1.0, 0.5, 2.0, 1.5)), dtype), "beta")
    return b.case(op_type, opset.swish(b.input(x, "x"), beta, name="op"), "transcendental")


@recipe("Clamp")
def _clamp(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick((F32, F16, I32))
    low = float(b.integer(-3, 1)) if dtype == I32 else b.pick((-1.5, -0.25, 0.0, -3.0))
    high = low + (float(b.integer(0, 4)) if dtype == I32 else b.pick((0.5, 2.0, 3.5)))
    x = b.values(b.shape(0, 4), dtype, -5, 5)
    node = opset.clamp(b.input(x, "x"), low, high, name="op")
    return b.case(op_type, node, "simple", min=low, max=high)


@recipe("HardSigmoid")
def _hard_sigmoid(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    x = b.values(b.shape(0, 4), dtype, -5, 5)
    shape = b.pick(([], [1]))
    alpha, beta = b.pick((0.2, 0.5, 1.0)), b.pick((0.5, 0.0, 0.25))
    alpha_node, beta_node = (b.operand(np.full(shape, v, dtype), n) for v, n in ((alpha, "alpha"), (beta, "beta")))
    node = opset.hard_sigmoid(b.input(x, "x"), alpha_node, beta_node, name="op")
    return b.case(op_type, node, "simple", 2, alpha=alpha, beta=beta)
