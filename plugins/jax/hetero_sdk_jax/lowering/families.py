"""Imports every lowering family so that each registers its lowerings."""

from hetero_sdk_jax.lowering import (  # noqa: F401  (registration)
    activation,
    basic,
    convolution,
    detection,
    elementwise,
    image,
    linear_algebra,
    movement,
    normalization,
    pooling,
    reduction,
    shape_manipulation,
)
