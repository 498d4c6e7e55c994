"""XLA's lowering of Softmax: long f32 rows over the last axis run the native kernel (:mod:`.kernels.softmax`);
the rest, and the other normalisations, trace their definitions' array-API kernels. The expectation of
constant weights under a Softmax (:data:`~hetero_sdk_jax.softmax_expectation.SOFTMAX_EXPECTATION_OP`) runs
the kernel's second entry where it can."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from hetero_sdk import Node
from hetero_sdk.plugin import OPS

from hetero_sdk_jax.lowering.kernels import softmax as softmax_kernel
from hetero_sdk_jax.lowering.registry import lowering
from hetero_sdk_jax.softmax_expectation import SOFTMAX_EXPECTATION


@lowering("Softmax")
def softmax(node: Node, x: jnp.ndarray) -> jnp.ndarray:
    if softmax_kernel.runs_natively(x, node.attrs["axis"]):
        return softmax_kernel.native_softmax(x)
    return OPS.get("Softmax").evaluate(node, x)  # type: ignore[misc]


@lowering(SOFTMAX_EXPECTATION)
def softmax_expectation(node: Node, x: jnp.ndarray, weights: Any) -> jnp.ndarray:
    """``sum(softmax(x, axis) * weights, axis, keepdims=True)``: the native kernel where
    :func:`~.kernels.softmax.expectation_runs_natively` says it runs, else the op's definition."""
    axis = node.attrs["axis"]
    if softmax_kernel.expectation_runs_natively(x, axis):
        return softmax_kernel.native_expectation(x, weights, axis)
    return OPS.get(SOFTMAX_EXPECTATION).evaluate(node, x, weights)  # type: ignore[misc]
