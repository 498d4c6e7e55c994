"""Lowering of Convert (Parameter, Constant, Result and ShapeOf are handled by the graph itself)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node

from hetero_sdk_jax.lowering.registry import lowering


@lowering("Convert")
def convert(node: Node, x: jnp.ndarray) -> jnp.ndarray:
    target = node.attrs["destination_type"]
    if not target.is_integral:
        return x.astype(target.numpy)
    info = np.iinfo(target.numpy)
    if jnp.issubdtype(x.dtype, jnp.floating):
        x = jnp.clip(jnp.trunc(x), float(info.min), float(info.max))  # truncate, then saturate
    elif jnp.issubdtype(x.dtype, jnp.integer):
        source = jnp.iinfo(x.dtype)
        low, high = max(int(info.min), int(source.min)), min(int(info.max), int(source.max))
        if low > source.min or high < source.max:
            x = jnp.clip(x, low, high)
    return x.astype(target.numpy)
