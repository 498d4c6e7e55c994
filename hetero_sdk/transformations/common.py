"""The device-independent optimisations every device may run before it compiles (OpenVINO's
``CommonOptimizations``): one list, so TEMPLATE and XLA run the same passes in the same order."""

from __future__ import annotations

from hetero_sdk.transformations.activation_fusion import HSwishFusion
from hetero_sdk.transformations.batch_norm_fusion import BatchNormDecomposition, ConvBatchNormFusion
from hetero_sdk.transformations.constant_folding import ConstantFolding
from hetero_sdk.transformations.dead_code import DeadCodeElimination
from hetero_sdk.transformations.linear_fusion import (
    AddAddFusion,
    AddMultiplyFusion,
    ConvMultiplyFusion,
    MultiplyMultiplyFusion,
)
from hetero_sdk.transformations.nop_elimination import NopElimination
from hetero_sdk.transformations.pass_manager import ModelPass

__all__ = ["COMMON_OPTIMIZATIONS", "common_optimizations"]

COMMON_OPTIMIZATIONS = "CommonOptimizations"
"""The name of the fixed-point group of device-independent passes (disable it to skip them all)."""


def common_optimizations() -> list[ModelPass]:
    """New instances of the common passes, in order, for ``PassManager.register_group``.

    ``ConstantFolding``, ``NopElimination``, ``ConvBatchNormFusion``, ``BatchNormDecomposition`` (the
    BatchNorms no convolution absorbed, as a Multiply and an Add), the linear-chain fusions
    (``AddMultiplyFusion``, ``ConvMultiplyFusion``, ``AddAddFusion``, ``MultiplyMultiplyFusion``),
    ``HSwishFusion`` and ``DeadCodeElimination``: repeated to a fixed point, each can expose work
    for the others.
    """
    return [
        ConstantFolding(),
        NopElimination(),
        ConvBatchNormFusion(),
        BatchNormDecomposition(),
        AddMultiplyFusion(),
        ConvMultiplyFusion(),
        AddAddFusion(),
        MultiplyMultiplyFusion(),
        HSwishFusion(),
        DeadCodeElimination(),
    ]
