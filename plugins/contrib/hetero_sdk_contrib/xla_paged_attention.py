"""XLA's lowering of :mod:`hetero_sdk_contrib.ops_paged_attention` (imported only when XLA runs it: the
package imports without jax): the shared computation, with the cache write as an XLA scatter."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from hetero_sdk import Node

from hetero_sdk_contrib.ops_paged_attention import paged_attention as _paged_attention

__all__ = ["paged_attention"]


def _scatter(rows: Any, slots: Any, values: Any) -> Any:
    """``rows`` with ``values`` written at ``slots``; negative slots (unmapped blocks) are dropped."""
    return rows.at[jnp.where(slots >= 0, slots, rows.shape[0])].set(values, mode="drop")


def paged_attention(node: Node, *inputs: Any) -> list[Any]:
    """PagedAttention traced with ``jax.numpy``: the attention and the two updated caches."""
    return _paged_attention(node, _scatter, *inputs)
