"""Numpy reference kernels: the oracle for every device, and the engine of constant folding.

Kernels are grouped by the same families as the op definitions in :mod:`hetero_sdk.ops`.
"""

from hetero_sdk.reference import (  # noqa: F401  (registration)
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
from hetero_sdk.reference.registry import Kernel, evaluate, get_kernel, kernel, kernel_types, run_node

__all__ = ["Kernel", "evaluate", "get_kernel", "kernel", "kernel_types", "run_node"]
