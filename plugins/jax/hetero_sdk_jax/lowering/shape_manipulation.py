"""XLA's lowering of Range: a range too large to fold while tracing is generated on the device rather
than embedded as a constant. The other shape ops trace their definitions' array-API kernels."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node

from hetero_sdk_jax.lowering.registry import lowering


@lowering("Range")
def range_(node: Node, start: np.ndarray, stop: np.ndarray, step: np.ndarray) -> jnp.ndarray:
    # Reached only for outputs too large to fold with numpy: the values are known, XLA generates them.
    count = node.get_output_shape(0)[0]
    integral = node.get_output_element_type(0).is_integral
    first, delta = (float(np.trunc(v) if integral else v) for v in (start, step))
    if integral:
        return int(first) + jnp.arange(count) * int(delta)
    return first + jnp.arange(count, dtype=node.get_output_element_type(0).numpy) * delta
