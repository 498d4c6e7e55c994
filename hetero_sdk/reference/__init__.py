"""Numpy reference kernels: the oracle every device is compared with.

An op's kernel is its definition's array-API kernel (:attr:`hetero_sdk.ops.OpDef.evaluate`) unless a
numpy kernel is registered here for it; those are grouped by the same families as the definitions in
:mod:`hetero_sdk.ops`. Each is written to be obviously correct (the style of ONNX's reference
evaluator): no plans, workspaces or block sizes. A device's fast kernels live in the device (TEMPLATE's
in :mod:`template_plugin`) and are checked against these by the conformance kit.
"""

import hetero_sdk.ops  # noqa: F401  (every op is defined before its kernels are looked up)
from hetero_sdk.reference import (  # noqa: F401  (registration)
    activation,
    basic,
    control_flow,
    convolution,
    detection,
    elementwise,
    image,
    indexing,
    linear_algebra,
    pooling,
    text,
)
from hetero_sdk.reference.activation import erf_values, erfc_values
from hetero_sdk.reference.image import nearest_indices
from hetero_sdk.reference.registry import KERNELS, Kernel, evaluate, get_kernel, kernel, kernel_types, run_node

__all__ = [
    "KERNELS", "Kernel", "erf_values", "erfc_values", "evaluate", "get_kernel", "kernel", "kernel_types",
    "nearest_indices", "run_node",
]  # fmt: skip
