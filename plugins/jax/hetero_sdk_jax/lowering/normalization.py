"""XLA's lowering of Softmax: long f32 rows over the last axis run the native kernel (:mod:`.kernels.softmax`);
the rest, and the other normalisations, trace their definitions' array-API kernels."""

from __future__ import annotations

import jax.numpy as jnp
from hetero_sdk import Node
from hetero_sdk.plugin import OPS

from hetero_sdk_jax.lowering.kernels import softmax as softmax_kernel
from hetero_sdk_jax.lowering.registry import lowering


@lowering("Softmax")
def softmax(node: Node, x: jnp.ndarray) -> jnp.ndarray:
    if softmax_kernel.runs_natively(x, node.attrs["axis"]):
        return softmax_kernel.native_softmax(x)
    return OPS.get("Softmax").evaluate(node, x)  # type: ignore[misc]
