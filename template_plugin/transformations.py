"""TEMPLATE's transformation pipeline and its fusion pass (``transform_model`` in the plugin guide).

``compile_model`` and ``query_model`` both run :func:`transform_model`, so a device answers
``query_model`` about exactly the ops it will compile.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from hetero_sdk.plugin import (
    COMMON_OPTIMIZATIONS,
    ConsumerMap,
    MatcherPass,
    PassManager,
    channel_bias_and_activation,
    channel_scale,
    common_optimizations,
    constant_operand,
    reduced_axes,
    replace_node,
)
from template_plugin.attention_fusion import AttentionFusion, CachedAttentionFusion
from template_plugin.bound_conv import is_pointwise
from template_plugin.causal_mask import CausalMaskFusion
from template_plugin.decoder_fusions import (
    GeluTanhFusion,
    LastAxesTransposeFusion,
    LayerNormFusion,
    RMSNormFusion,
    RotateHalfFusion,
)
from template_plugin.fused_conv import CONVOLUTION, fused_convolution
from template_plugin.fused_ops import bias_fits, fully_connected
from template_plugin.reshaped_matmul import ReshapedMatMulFusion
from template_plugin.squeeze_excitation import squeeze_excitation
from template_plugin.swiglu import SwiGLUFusion
from template_plugin.view_chain import SplitViewsFusion, ViewChainFusion

if TYPE_CHECKING:
    from hetero_sdk import Model, Node, Output

__all__ = [
    "COMMON_OPTIMIZATIONS",
    "AttentionFusion",
    "CachedAttentionFusion",
    "CausalMaskFusion",
    "ConvolutionFusion",
    "FullyConnectedFusion",
    "GeluTanhFusion",
    "LastAxesTransposeFusion",
    "LayerNormFusion",
    "RMSNormFusion",
    "ReshapedMatMulFusion",
    "RotateHalfFusion",
    "SplitViewsFusion",
    "SqueezeExcitationFusion",
    "SwiGLUFusion",
    "ViewChainFusion",
    "build_pass_manager",
    "transform_model",
]

_ACTIVATIONS = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh"}
_CONV_ACTIVATIONS = {"Relu": "relu", "HSwish": "hswish"}
_FUSED_TYPES = frozenset({"f32", "f64"})  # computed as the unfused ops are (f16 and bf16 widen per op)


class FullyConnectedFusion(MatcherPass):
    """Fuses ``MatMul -> Add(bias Constant) [-> Relu | Sigmoid | Tanh | Gelu]`` into ``TemplateFullyConnected``.

    The pattern fires when the MatMul's output has exactly one use, the Add, whose other input is a
    Constant that :func:`~template_plugin.fused_ops.bias_fits` the product (it broadcasts along the
    last axis only, so the Add does not change the product's shape). The activation joins when it is
    the Add output's only use. The fused op keeps the MatMul's inputs and ``transpose_a`` /
    ``transpose_b``, consumes the bias Constant as it is, takes the friendly name and tensor names of
    the pattern's last node and records the whole pattern in ``fused_names``.
    """

    name = "TemplateFullyConnectedFusion"
    anchors = ("MatMul",)

    def apply(self, model: Model, matmul: Node, users: ConsumerMap) -> bool:
        product = matmul.output(0)
        uses = users.of(product)
        if len(uses) != 1 or uses[0][0].type_name != "Add":
            return False
        add, index = uses[0]
        bias = add.input_value(1 - index)
        if bias.node.type_name != "Constant" or add.output(0).partial_shape != product.partial_shape:
            return False
        if not bias_fits(bias.partial_shape, product.partial_shape):
            return False
        pattern = [matmul, add]
        activation = "none"
        after = users.of(add.output(0))
        if len(after) == 1:
            follower = after[0][0]
            if follower.type_name in _ACTIVATIONS:
                activation = _ACTIVATIONS[follower.type_name]
            elif follower.type_name == "Gelu":
                activation = "gelu_" + str(follower.attrs.get("approximation_mode", "ERF")).lower()
            if activation != "none":
                pattern.append(follower)
        fused = fully_connected(
            matmul.input_value(0),
            matmul.input_value(1),
            bias,
            transpose_a=bool(matmul.attrs.get("transpose_a", False)),
            transpose_b=bool(matmul.attrs.get("transpose_b", False)),
            activation=activation,
        )
        replace_node(model, pattern[-1], fused, fused=pattern[:-1], consumers=users)
        return True


class ConvolutionFusion(MatcherPass):
    """Fuses ``Convolution | GroupConvolution -> Add(per-channel Constant) [-> Relu | HSwish]
    [-> Multiply(per-channel Constant) [-> Add(per-channel Constant)]]`` of a real element type into
    ``TemplateConvolution``.

    The convolution's output must have exactly one use, the Add, whose constant operand holds one
    value per output channel (:func:`~hetero_sdk.transformations.linear_fusion.channel_scale`); the
    activation joins when it is the Add output's only use, and so does an affine map after it (a
    Multiply, then maybe an Add, by per-channel constants: PP-LCNetV3's learnable affine blocks). The
    fused op takes the friendly name and tensor names of the pattern's last node and records the
    whole pattern in ``fused_names``.
    """

    name = "TemplateConvolutionFusion"
    anchors = ("Convolution", "GroupConvolution")

    def apply(self, model: Model, conv: Node, users: ConsumerMap) -> bool:
        if conv.output(0).element_type.value not in _FUSED_TYPES:
            return False
        found = channel_bias_and_activation(conv, users, _CONV_ACTIVATIONS)
        if found is None:
            return False
        pattern, bias = list(found.nodes), found.bias
        activation = "none" if found.activation is None else _CONV_ACTIVATIONS[found.activation]
        affine: dict[str, Output] = {}
        for op, role in (("Multiply", "scale"), ("Add", "shift")):
            found_constant = _channel_constant(pattern[-1], op, users)
            if found_constant is None:
                break
            pattern.append(found_constant[0])
            affine[role] = found_constant[1]
        fused = fused_convolution(conv, bias, activation, scale=affine.get("scale"), shift=affine.get("shift"))
        replace_node(model, pattern[-1], fused, fused=pattern[:-1], consumers=users)
        return True


def _channel_constant(node: Node, op: str, users: ConsumerMap) -> tuple[Node, Output] | None:
    """``(follower, constant)`` when ``node``'s output has one use, an ``op`` of it and a constant holding
    one value per channel (the follower's output keeps ``node``'s shape), else None."""
    after = users.of(node.output(0))
    if len(after) != 1 or after[0][0].type_name != op:
        return None
    follower, index = after[0]
    found = constant_operand(follower)
    shape = node.output(0).partial_shape
    if found is None or found[0] != node.output(0) or channel_scale(found[1], shape[1], shape.rank) is None:
        return None
    return follower, follower.input_value(1 - index)


class SqueezeExcitationFusion(MatcherPass):
    """Fuses a squeeze-and-excitation block, ``Multiply(x, Clamp(TemplateConvolution(TemplateConvolution(
    ReduceMean(x))))`` of f32 or f64, into ``TemplateSqueezeExcitation``.

    The ReduceMean averages ``x`` over all its spatial axes and keeps them; both convolutions are
    pointwise (:func:`~template_plugin.bound_conv.is_pointwise`) with Constant filters, a bias and no
    affine map, the second one without an activation; every node of the block but ``x`` has one use.
    The fused op takes the Multiply's friendly name and tensor names and records the block in
    ``fused_names``.
    """

    name = "TemplateSqueezeExcitationFusion"
    anchors = ("Multiply",)

    def apply(self, model: Model, multiply: Node, users: ConsumerMap) -> bool:
        for index in (0, 1):
            x, clamp = multiply.input_value(1 - index), multiply.input_value(index).node
            if clamp.type_name != "Clamp" or len(users.of(clamp.output(0))) != 1:
                continue
            expand = _pointwise_source(clamp, users, ("none",))
            if expand is None:
                continue
            reduce = _pointwise_source(expand, users, ("relu", "hswish", "none"))
            if reduce is None:
                continue
            pool = reduce.input_value(0).node
            if pool.type_name != "ReduceMean" or pool.input_value(0) != x:
                continue
            shape, axes = x.partial_shape, pool.input_value(1).node
            if (
                len(users.of(pool.output(0))) != 1
                or not pool.attrs["keep_dims"]
                or axes.type_name != "Constant"
                or shape.rank < 3
                or x.element_type.value not in _FUSED_TYPES
                or multiply.output(0).partial_shape != shape
                or sorted(reduced_axes(shape.rank, axes.attrs["value"])) != list(range(2, shape.rank))
            ):
                continue
            fused = squeeze_excitation(
                x,
                reduce.input_value(1),
                reduce.input_value(2),
                expand.input_value(1),
                expand.input_value(2),
                reduce.attrs["activation"],
                (clamp.attrs["min"], clamp.attrs["max"]),
            )
            replace_node(model, multiply, fused, fused=[pool, reduce, expand, clamp], consumers=users)
            return True
        return False


def _pointwise_source(node: Node, users: ConsumerMap, activations: tuple[str, ...]) -> Node | None:
    """The node feeding ``node``'s first input when it is a pointwise ``TemplateConvolution`` of Constant
    filters, a bias and no affine map, with one of ``activations`` and ``node`` as its only use."""
    source = node.input_value(0).node
    if source.type_name != CONVOLUTION or source.get_input_size() != 3 or source.attrs["activation"] not in activations:
        return None
    filters = source.input_value(1).node
    if filters.type_name != "Constant" or not is_pointwise(source, filters.attrs["value"]):
        return None
    return source if len(users.of(source.output(0))) == 1 else None


def build_pass_manager(*, disabled: Iterable[str] = ()) -> PassManager:
    """TEMPLATE's pipeline, with the named passes (or groups) disabled.

    1. ``CommonOptimizations`` (:func:`~hetero_sdk.transformations.common_optimizations`), repeated
       to a fixed point;
    2. ``TemplateFullyConnectedFusion``;
    3. ``TemplateConvolutionFusion``;
    4. ``TemplateSqueezeExcitationFusion``;
    5. ``TemplateRMSNormFusion``;
    6. ``TemplateRotateHalfFusion``;
    7. ``TemplateGeluTanhFusion``;
    8. ``TemplateLayerNormFusion``;
    9. ``TemplateLastAxesTransposeFusion``;
    10. ``TemplateAttentionFusion``;
    11. ``TemplateCausalMaskFusion``;
    12. ``TemplateReshapedMatMulFusion``;
    13. ``TemplateViewChainFusion``;
    14. ``TemplateSplitViewsFusion``;
    15. ``TemplateCachedAttentionFusion``;
    16. ``TemplateSwiGLUFusion``.

    :param disabled: pass or group names to skip (``PassConfig.disable``).
    """
    manager = PassManager()
    manager.register_group(common_optimizations(), COMMON_OPTIMIZATIONS)
    manager.register_pass(FullyConnectedFusion())
    manager.register_pass(ConvolutionFusion())
    manager.register_pass(SqueezeExcitationFusion())
    manager.register_pass(RMSNormFusion())
    manager.register_pass(RotateHalfFusion())
    manager.register_pass(GeluTanhFusion())
    manager.register_pass(LayerNormFusion())
    manager.register_pass(LastAxesTransposeFusion())
    manager.register_pass(AttentionFusion())
    manager.register_pass(CausalMaskFusion())
    manager.register_pass(ReshapedMatMulFusion())
    manager.register_pass(ViewChainFusion())
    manager.register_pass(SplitViewsFusion())
    manager.register_pass(CachedAttentionFusion())
    manager.register_pass(SwiGLUFusion())
    manager.get_pass_config().disable(*disabled)
    return manager


def transform_model(model: Model, *, disabled: Iterable[str] = ()) -> PassManager:
    """Applies TEMPLATE's transformations to ``model`` in place (``transform_model`` in the plugin guide).

    :param model: the model to transform (``compile_model`` and ``query_model`` pass a clone).
    :param disabled: pass or group names to skip.
    :returns: the pass manager that ran, whose ``records`` and ``summary()`` say what each pass did.
    :raises ModelValidationError: when a pass leaves an invalid model (names the pass).
    """
    manager = build_pass_manager(disabled=disabled)
    manager.run_passes(model)
    return manager
