"""Lowering models to JAX: a registry of op lowerings grouped by the SDK's op families, and the graph
interpreter that turns a whole (sub)model into one function for ``jax.jit``.

A lowering is ``fn(node, *inputs)`` registered with :func:`lowering`, for the ops whose definition has
no array-API kernel XLA can trace (or that XLA computes better its own way); importing this package
registers every family's lowerings.
"""

from hetero_sdk_jax.lowering import (  # noqa: F401  (each family registers its lowerings on import)
    activation,
    basic,
    control_flow,
    convolution,
    detection,
    elementwise,
    image,
    indexing,
    linear_algebra,
    movement,
    normalization,
    pooling,
    quantization,
    recurrent,
    reduction,
    shape_manipulation,
    text,
)
from hetero_sdk_jax.lowering.graph import (
    MAX_TENSOR_BYTES,
    WEIGHT_BYTES,
    Analysis,
    Weight,
    analyze,
    check_extents,
    lower,
    specialize,
    weights_of,
)
from hetero_sdk_jax.lowering.registry import LOWERINGS, Lowering, get_lowering, lowering, lowering_types

__all__ = [
    "LOWERINGS",
    "MAX_TENSOR_BYTES",
    "WEIGHT_BYTES",
    "Analysis",
    "Lowering",
    "Weight",
    "analyze",
    "check_extents",
    "get_lowering",
    "lower",
    "lowering",
    "lowering_types",
    "specialize",
    "weights_of",
]
