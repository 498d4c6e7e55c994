"""Lowering models to JAX: a registry of op lowerings grouped by the SDK's op families, and the graph
interpreter that turns a whole (sub)model into one function for ``jax.jit``.

A lowering is ``fn(node, *inputs)`` registered with :func:`lowering`; it mirrors the op's reference
kernel in :mod:`hetero_sdk.reference`, with ``jax.numpy`` and ``jax.lax`` instead of numpy.
"""

from hetero_sdk_jax.lowering.graph import Analysis, analyze, lower, specialize
from hetero_sdk_jax.lowering.registry import Lowering, get_lowering, lowering, lowering_types

__all__ = ["Analysis", "Lowering", "analyze", "get_lowering", "lower", "lowering", "lowering_types", "specialize"]
