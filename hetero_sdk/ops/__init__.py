"""Op definitions, grouped by family; importing this package registers all of them."""

from hetero_sdk.ops import (  # noqa: F401  (registration)
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
