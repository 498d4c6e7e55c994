"""``XlaConvolution``: a dense 2-D Convolution, its per-channel bias Add and an activation (none, Relu,
SiLU or HSwish) as one op, so that the native convolution kernel (:mod:`hetero_sdk_jax.lowering.kernels.conv2d`)
or, for a 1x1 convolution, the native GEMM kernel (:mod:`hetero_sdk_jax.lowering.kernels.gemm`, its in-place
path) adds the bias and applies the activation to each tile of registers before storing it. As separate ops
they ran as an XLA loop of their own after the kernel's custom call (XLA fuses nothing into a custom
call): a second pass reading every result again.

:class:`ConvolutionBiasActivationFusion` makes the op from the exact pattern, after the common
optimisations (which fold BatchNorm into the filter and the bias into one constant). SiLU is the
exporters' ``x * Sigmoid(x)`` (every activation of YOLOv5 to v8 and YOLOX) or a ``Swish`` without its
``beta``; HSwish is PP-OCRv4 rec's (after its 1x1 convolutions). The op's value is the unfused graph's up
to f32 rounding: the bias is added to the finished sum, and the activation applied to that. Where the
kernel does not run, the lowering computes the unfused ops one after the other, as XLA did before.
"""

from __future__ import annotations

from typing import Any

from hetero_sdk import Model, Node, Output, Type
from hetero_sdk.plugin import (
    OPS,
    STRING,
    Attr,
    ConsumerMap,
    Input,
    MatcherPass,
    OpDef,
    channel_bias_and_activation,
    define,
    replace_node,
)

from hetero_sdk_jax.depthwise_fusion import biased_infer, window_attrs

__all__ = [
    "ACTIVATIONS",
    "CONVOLUTION",
    "CONVOLUTION_OP",
    "ConvolutionBiasActivationFusion",
    "bias_and_activation",
    "fused_convolution",
]

CONVOLUTION = "XlaConvolution"
"""The op's type name."""

ACTIVATIONS = ("none", "relu", "silu", "hswish")
"""The op's ``activation`` attribute's values (silu: ``v * sigmoid(v)``; hswish: HSwish's)."""

_JOINING = {"Relu": "relu", "Swish": "silu", "HSwish": "hswish"}
"""Single activation ops that join the op (graph op type -> ``activation``); SiLU's Sigmoid and Multiply
are matched apart (:func:`_silu_after`)."""

_WINDOW = ("strides", "pads_begin", "pads_end", "dilations", "auto_pad")


def fused_convolution(conv: Node, bias: Output, activation: str = "none", name: str | None = None) -> Node:
    """``activation(conv + bias)`` as one op, on the Convolution ``conv``'s inputs and window.

    :param bias: one f32 value per output channel, shaped to broadcast along axis 1 of the result
        (``[1, C, 1, 1]``...).
    :param activation: a value of :data:`ACTIVATIONS`.
    """
    attrs: dict[str, Any] = {key: conv.attrs[key] for key in _WINDOW}
    attrs["activation"] = activation
    return Node(CONVOLUTION_OP, [conv.input_value(0), conv.input_value(1), bias], attrs, name)


def _definition(node: Node, x: Any, w: Any, bias: Any) -> Any:
    """Convolution's definition, plus the bias, through Relu's or HSwish's definition or ``v * Sigmoid(v)``."""
    y = OPS.get("Convolution").evaluate(node, x, w)  # type: ignore[misc]
    y = y + bias
    if node.attrs["activation"] == "relu":
        return OPS.get("Relu").evaluate(node, y)  # type: ignore[misc]
    if node.attrs["activation"] == "silu":
        return y * OPS.get("Sigmoid").evaluate(node, y)  # type: ignore[misc]
    if node.attrs["activation"] == "hswish":
        return OPS.get("HSwish").evaluate(node, y)  # type: ignore[misc]
    return y


CONVOLUTION_OP = define(
    OpDef(
        CONVOLUTION,
        "convolution",
        biased_infer("Convolution"),
        inputs=(
            Input("data", frozenset({Type.f32}), doc="[N, C, H, W]"),
            Input("filters", frozenset({Type.f32}), doc="[O, C, KH, KW], Convolution's"),
            Input("bias", frozenset({Type.f32}), doc="one value per output channel"),
        ),
        attrs=(
            *window_attrs("Convolution"),
            Attr("activation", STRING, "none", ACTIVATIONS, doc="applied to the biased sum"),
        ),
        version="xla",
        evaluate=_definition,
        doc="activation(Convolution(data, filters) + bias) in one kernel.",
    )
)


def _dense_2d(conv: Node) -> bool:
    """Whether ``conv`` is an f32 Convolution of 2-D ``[N, C, H, W]`` data by a filter of static shape."""
    data, filters = conv.input_value(0), conv.input_value(1)
    if conv.output(0).element_type != Type.f32 or not filters.partial_shape.is_static:
        return False
    shape = data.partial_shape
    return filters.partial_shape.rank == 4 and shape.rank_is_static and shape.rank == 4


def _silu_after(add: Node, users: ConsumerMap) -> list[Node] | None:
    """``[Sigmoid, Multiply]`` when ``add``'s output is read by exactly a Sigmoid and a Multiply of it by
    that Sigmoid (the Sigmoid read by the Multiply alone): ``add * Sigmoid(add)``; None otherwise."""
    source = add.output(0)
    uses = users.of(source)
    gates = [node for node, _ in uses if node.type_name == "Sigmoid"]
    if len(uses) != 2 or len(gates) != 1:
        return None
    gate = gates[0]
    product = next(node for node, _ in uses if node is not gate)
    gate_uses = users.of(gate.output(0))
    if product.type_name != "Multiply" or len(gate_uses) != 1 or gate_uses[0][0] is not product:
        return None
    operands = {(value.node, value.index) for value in product.input_values()}
    if operands != {(add, 0), (gate, 0)} or product.output(0).element_type != Type.f32:
        return None
    return [gate, product]


def bias_and_activation(node: Node, users: ConsumerMap) -> tuple[list[Node], Output, str] | None:
    """The pattern :class:`ConvolutionBiasActivationFusion` takes after ``node``: its nodes (``node``, the
    f32 per-channel bias Add, then the activation's nodes if one joins), the bias operand and the
    :data:`ACTIVATIONS` value; None when ``node``'s output is not read by such an Add alone."""
    found = channel_bias_and_activation(node, users, _JOINING)
    if found is None or found.nodes[1].output(0).element_type != Type.f32:
        return None
    pattern = list(found.nodes)
    if found.activation is None:
        silu = _silu_after(pattern[1], users)
        activation = "none" if silu is None else "silu"
        pattern += silu or []
    elif found.activation == "Swish" and pattern[-1].get_input_size() > 1:
        pattern, activation = pattern[:-1], "none"
    else:
        activation = _JOINING[found.activation]
    return pattern, found.bias, activation


class ConvolutionBiasActivationFusion(MatcherPass):
    """Fuses ``Convolution (f32, 2-D) -> Add(per-channel constant) [-> Relu | HSwish | Swish | x * Sigmoid(x)]``
    into :data:`CONVOLUTION_OP`.

    The convolution's output must have one use, the Add, whose constant operand holds one value per
    channel; the activation joins when the Add's output is read by it alone (otherwise the op stops at
    the bias and the activation reads its result). A Swish joins without its ``beta`` input only.
    """

    name = "XlaConvolutionBiasActivationFusion"
    anchors = ("Convolution",)

    def apply(self, model: Model, node: Node, users: ConsumerMap) -> bool:
        if not _dense_2d(node):
            return False
        found = bias_and_activation(node, users)
        if found is None:
            return False
        pattern, bias, activation = found
        fused = fused_convolution(node, bias, activation, pattern[-1].friendly_name)
        replace_node(model, pattern[-1], fused, fused=pattern[:-1], consumers=users)
        return True
