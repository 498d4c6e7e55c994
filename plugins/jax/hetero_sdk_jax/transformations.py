"""What the XLA device does to a model before lowering it: the SDK's common optimisations.

XLA fuses element-wise ops and folds constants while it compiles, but it does not fold a constant
per-channel scale into a convolution's filters, nor re-associate chains of constant Adds and
Multiplies: the common passes do, once, on the graph (on PP-OCRv4 det at 320x320, one thread, about
a tenth of the inference time).
"""

from __future__ import annotations

from hetero_sdk import Model
from hetero_sdk.plugin import COMMON_OPTIMIZATIONS, PassManager, common_optimizations

from hetero_sdk_jax.convolution_fusion import ConvolutionBiasActivationFusion
from hetero_sdk_jax.depthwise_fusion import DepthwiseBiasActivationFusion
from hetero_sdk_jax.focus_convolution import FocusConvolution
from hetero_sdk_jax.level_lookup import QuantizedLevelLookup
from hetero_sdk_jax.matmul_bias import MatMulBiasFusion
from hetero_sdk_jax.max_pool_cascade import MaxPoolCascade
from hetero_sdk_jax.mean_of_affine import MeanOfAffineFolding
from hetero_sdk_jax.one_hot import OneHotMatMulToGather
from hetero_sdk_jax.pointwise_input_affine import PointwiseInputAffineFolding
from hetero_sdk_jax.quantization import QuantizedRoundTripFolding
from hetero_sdk_jax.quantized_convolution import QuantizedConvolutionFusion
from hetero_sdk_jax.sibling_convolutions import SiblingPointwiseConvolutions
from hetero_sdk_jax.softmax_expectation import SoftmaxExpectationFusion

__all__ = [
    "CONVOLUTION_FUSION",
    "DEPTHWISE_FUSION",
    "DISABLE_TRANSFORMATIONS",
    "LEVEL_LOOKUP",
    "MATMUL_BIAS_FUSION",
    "QUANTIZED_CONVOLUTIONS",
    "transform_model",
]

QUANTIZED_CONVOLUTIONS = "XlaQuantizedConvolutions"
"""The pass group that turns QDQ convolutions into integer ones (:mod:`hetero_sdk_jax.quantized_convolution`)."""

DEPTHWISE_FUSION = "XlaDepthwiseFusion"
"""The pass group that fuses depthwise convolutions with their bias and activation
(:mod:`hetero_sdk_jax.depthwise_fusion`), after the common optimisations have folded the bias."""

CONVOLUTION_FUSION = "XlaConvolutionFusion"
"""The pass group that fuses dense 2-D convolutions with their bias and activation
(:mod:`hetero_sdk_jax.convolution_fusion`), after the common optimisations have folded the bias."""

MATMUL_BIAS_FUSION = "XlaMatMulBiasFusion"
"""The pass group that fuses a MatMul by a constant with its per-column bias Add for the native GEMM kernel
(:mod:`hetero_sdk_jax.matmul_bias`), after the common optimisations have folded the bias."""

LEVEL_LOOKUP = "XlaLevelLookup"
"""The pass group that reads element-wise chains over 8-bit levels from tables
(:mod:`hetero_sdk_jax.level_lookup`), last: after the round trips are folded and the convolutions fused."""

DISABLE_TRANSFORMATIONS = "XLA_DISABLE_TRANSFORMATIONS"
"""RW bool (default False): lower the model as given, without the common optimisations."""


def transform_model(model: Model) -> PassManager:
    """Runs ``CommonOptimizations`` on ``model`` in place (the plugin passes its own clone), with
    XLA's :class:`~hetero_sdk_jax.quantization.QuantizedRoundTripFolding`,
    :class:`~hetero_sdk_jax.one_hot.OneHotMatMulToGather`,
    :class:`~hetero_sdk_jax.sibling_convolutions.SiblingPointwiseConvolutions`,
    :class:`~hetero_sdk_jax.pointwise_input_affine.PointwiseInputAffineFolding`,
    :class:`~hetero_sdk_jax.softmax_expectation.SoftmaxExpectationFusion`,
    :class:`~hetero_sdk_jax.mean_of_affine.MeanOfAffineFolding`,
    :class:`~hetero_sdk_jax.max_pool_cascade.MaxPoolCascade` and
    :class:`~hetero_sdk_jax.focus_convolution.FocusConvolution` in the same fixed-point group, after
    :class:`~hetero_sdk_jax.quantized_convolution.QuantizedConvolutionFusion`, then
    :class:`~hetero_sdk_jax.depthwise_fusion.DepthwiseBiasActivationFusion`,
    :class:`~hetero_sdk_jax.convolution_fusion.ConvolutionBiasActivationFusion` and
    :class:`~hetero_sdk_jax.matmul_bias.MatMulBiasFusion`, then
    :class:`~hetero_sdk_jax.level_lookup.QuantizedLevelLookup`.

    :returns: the pass manager that ran (its ``records`` say what each pass did).
    :raises ModelValidationError: when a pass leaves an invalid model (names the pass).
    """
    manager = PassManager()
    # before ConstantFolding turns the dequantized filters into f32 constants that hide their levels
    manager.register_group([QuantizedConvolutionFusion()], QUANTIZED_CONVOLUTIONS)
    manager.register_group(
        [
            *common_optimizations(),
            QuantizedRoundTripFolding(),
            OneHotMatMulToGather(),
            SiblingPointwiseConvolutions(),
            PointwiseInputAffineFolding(),
            SoftmaxExpectationFusion(),
            MeanOfAffineFolding(),
            MaxPoolCascade(),
            FocusConvolution(),
        ],
        COMMON_OPTIMIZATIONS,
    )
    manager.register_group([DepthwiseBiasActivationFusion()], DEPTHWISE_FUSION)
    manager.register_group([ConvolutionBiasActivationFusion()], CONVOLUTION_FUSION)
    manager.register_group([MatMulBiasFusion()], MATMUL_BIAS_FUSION)
    manager.register_group([QuantizedLevelLookup()], LEVEL_LOOKUP)
    manager.run_passes(model)
    return manager
