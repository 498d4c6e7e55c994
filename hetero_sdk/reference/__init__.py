"""Numpy reference kernels: the oracle for every device, and the engine of constant folding.

Kernels are grouped by the same families as the op definitions in :mod:`hetero_sdk.ops`.
"""

from hetero_sdk.ops.folding import LEGACY_FOLDING
from hetero_sdk.reference import (  # noqa: F401  (registration)
    activation,
    control_flow,
    convolution,
    detection,
    elementwise,
    image,
    linear_algebra,
    pooling,
)
from hetero_sdk.reference.registry import KERNELS, Kernel, evaluate, get_kernel, kernel, kernel_types, run_node

_LEGACY = ("Add", "Broadcast", "Concat", "Convert", "Divide", "Equal", "Gather", "Maximum", "Minimum", "Multiply",
           "Range", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSum", "Reshape", "Select", "Slice", "Squeeze",
           "StridedSlice", "Subtract", "Unsqueeze")  # fmt: skip
LEGACY_FOLDING.update({t: KERNELS.get(t) for t in _LEGACY if t in KERNELS})

__all__ = ["KERNELS", "Kernel", "evaluate", "get_kernel", "kernel", "kernel_types", "run_node"]
