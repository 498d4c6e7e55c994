"""XLA's lowering of LabelEncoder on numbers (keys and values that are not strings): a search of the
sorted keys, then the value found or the default. Every node with a string input or output is declined
in ``query_model`` (XLA arrays hold numbers only), so StringNormalizer, StringSplit, StringConcat and
RegexFullMatch have no lowering."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node

from hetero_sdk_jax.lowering.registry import lowering


@lowering("LabelEncoder")
def label_encoder(node: Node, x: jnp.ndarray) -> jnp.ndarray:
    keys, values, default = node.attrs["keys"], node.attrs["values"], node.attrs["default"]
    fill = jnp.asarray(default.reshape(()), dtype=values.dtype)
    if not len(keys):
        return jnp.full(x.shape, fill)
    order = np.argsort(keys, kind="stable")  # NaN keys sort last
    ordered, mapped = jnp.asarray(keys[order]), jnp.asarray(values[order])
    place = jnp.minimum(jnp.searchsorted(ordered, x), len(keys) - 1)
    found = ordered[place] == x
    if keys.dtype.kind == "f" and np.isnan(keys).any():
        place = jnp.where(jnp.isnan(x), len(keys) - 1, place)
        found = found | jnp.isnan(x)
    return jnp.where(found, mapped[place], fill)
