"""Numpy reference kernels: the oracle every device is compared with, and what TEMPLATE runs.

An op's kernel is its definition's array-API kernel (:attr:`hetero_sdk.ops.OpDef.evaluate`) unless a
numpy kernel is registered here for it; those are grouped by the same families as the definitions in
:mod:`hetero_sdk.ops`.
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
from hetero_sdk.reference.convolution import (
    ROW_BLOCK,
    ROW_GEMM_TAPS,
    ConvolutionPlan,
    Workspace,
    grouped_convolution,
    live_taps,
    plan_convolution,
    run_convolution,
)
from hetero_sdk.reference.pooling import max_pool_values
from hetero_sdk.reference.registry import KERNELS, Kernel, evaluate, get_kernel, kernel, kernel_types, run_node

__all__ = [
    "KERNELS", "ConvolutionPlan", "Kernel", "ROW_BLOCK", "ROW_GEMM_TAPS", "erf_values", "erfc_values", "evaluate",
    "get_kernel", "grouped_convolution", "kernel", "kernel_types", "live_taps", "max_pool_values",
    "plan_convolution", "run_convolution", "run_node", "Workspace",
]  # fmt: skip
