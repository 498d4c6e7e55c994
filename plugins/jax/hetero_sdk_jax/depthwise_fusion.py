"""``XlaDepthwiseConvolution``: a depthwise GroupConvolution, its per-channel bias Add and an activation
(none, Relu or HSwish) as one op, so that the native depthwise kernel
(:mod:`hetero_sdk_jax.lowering.kernels.depthwise`) adds the bias and applies the activation to each
output vector before storing it. As separate ops they ran as a loop of their own after the kernel's
custom call (XLA fuses nothing into a custom call): a second pass over every depthwise result.

:class:`DepthwiseBiasActivationFusion` makes the op from the exact pattern, after the common
optimisations (which fold BatchNorm and scales into the filter and the bias into one constant). Its
value is the unfused graph's up to f32 rounding: the bias is added to the finished sum, and the
activation is the reference's formula, in its order, on that (the kernel's FMAs round the sum
differently from the reference's products and sums, as the unfused kernel's did). Where the kernel does
not run, the lowering computes the unfused ops' own lowerings one after the other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hetero_sdk import Model, Node, Output, PartialShape, Type
from hetero_sdk.plugin import (
    INTS,
    LOWER_STRING,
    OPS,
    STRING,
    Attr,
    ConsumerMap,
    Input,
    MatcherPass,
    OpDef,
    OutputSpec,
    channel_bias_and_activation,
    define,
    replace_node,
)

__all__ = [
    "ACTIVATIONS",
    "DEPTHWISE_CONVOLUTION",
    "DEPTHWISE_CONVOLUTION_OP",
    "MAX_TAPS",
    "DepthwiseBiasActivationFusion",
    "biased_infer",
    "depthwise_convolution",
    "window_attrs",
]

DEPTHWISE_CONVOLUTION = "XlaDepthwiseConvolution"
"""The op's type name."""

ACTIVATIONS = {"Relu": "relu", "HSwish": "hswish"}
"""The activations that join the op (graph op type -> the ``activation`` attribute)."""

MAX_TAPS = 49
"""The largest filters (taps per channel) fused: the depthwise lowering's shifted-sum limit, 7x7."""

_WINDOW = ("strides", "pads_begin", "pads_end", "dilations", "auto_pad")


def depthwise_convolution(conv: Node, bias: Output, activation: str = "none", name: str | None = None) -> Node:
    """``activation(conv + bias)`` as one op, on the depthwise GroupConvolution ``conv``'s inputs and window.

    :param bias: one f32 value per channel, shaped to broadcast along axis 1 of the result (``[1, C, 1, 1]``...).
    :param activation: ``none`` or a value of :data:`ACTIVATIONS`.
    """
    attrs: dict[str, Any] = {key: conv.attrs[key] for key in _WINDOW}
    attrs["activation"] = activation
    return Node(DEPTHWISE_CONVOLUTION_OP, [conv.input_value(0), conv.input_value(1), bias], attrs, name)


def biased_infer(base: str) -> Callable[[Node], list[OutputSpec]]:
    """Shape inference of an op computing the op type ``base`` on its first two inputs plus a bias
    (input 2) holding one value per channel of the result (shaped ``[1, C, 1, 1]`` or broadcastable so)."""

    def infer(node: Node) -> list[OutputSpec]:
        specs = list(OPS.get(base).infer(node))
        out, bias = PartialShape(specs[0][1]), node.input_value(2).partial_shape
        padded = [1] * (out.rank - bias.rank) + list(bias.dims)
        if bias.rank > out.rank or any(d != 1 for i, d in enumerate(padded) if i != 1) or padded[1] not in (1, out[1]):
            raise node.error(f"bias {bias} must hold one value per channel of {out} (shape [1, C, 1, 1])")
        return specs

    return infer


def window_attrs(base: str) -> tuple[Attr, ...]:
    """The sliding window's attributes of a fused op, as the ``base`` convolution's."""
    same = f"as {base}'s"
    return (
        Attr("strides", INTS, doc=same),
        Attr("pads_begin", INTS, doc=same),
        Attr("pads_end", INTS, doc=same),
        Attr("dilations", INTS, doc=same),
        Attr("auto_pad", LOWER_STRING, "explicit", doc=same),
    )


_infer = biased_infer("GroupConvolution")


def _definition(node: Node, x: Any, w: Any, bias: Any) -> Any:
    """GroupConvolution's definition, plus the bias, through the activation's definition."""
    y = OPS.get("GroupConvolution").evaluate(node, x, w)  # type: ignore[misc]
    y = y + bias
    kind = {value: key for key, value in ACTIVATIONS.items()}.get(node.attrs["activation"])
    return y if kind is None else OPS.get(kind).evaluate(node, y)  # type: ignore[misc]


DEPTHWISE_CONVOLUTION_OP = define(
    OpDef(
        DEPTHWISE_CONVOLUTION,
        "convolution",
        _infer,
        inputs=(
            Input("data", frozenset({Type.f32}), doc="[N, C, H, W]"),
            Input("filters", frozenset({Type.f32}), doc="[C, 1, 1, KH, KW], GroupConvolution's"),
            Input("bias", frozenset({Type.f32}), doc="one value per channel"),
        ),
        attrs=(
            *window_attrs("GroupConvolution"),
            Attr("activation", STRING, "none", ("none", *ACTIVATIONS.values()), doc="applied to the biased sum"),
        ),
        version="xla",
        evaluate=_definition,
        doc="activation(depthwise GroupConvolution(data, filters) + bias) in one kernel.",
    )
)


def _depthwise(conv: Node) -> bool:
    """Whether ``conv`` is an f32 2-D GroupConvolution of one input and one output channel per group,
    every channel its own group, a filter of at most :data:`MAX_TAPS` taps."""
    data, filters = conv.input_value(0), conv.input_value(1)
    if conv.output(0).element_type != Type.f32 or not filters.partial_shape.is_static:
        return False
    dims = [int(d) for d in filters.partial_shape.to_shape()]
    shape = data.partial_shape
    if len(dims) != 5 or not shape.rank_is_static or shape.rank != 4 or shape[1] != dims[0]:
        return False
    return dims[1] == dims[2] == 1 and dims[3] * dims[4] <= MAX_TAPS


class DepthwiseBiasActivationFusion(MatcherPass):
    """Fuses ``GroupConvolution (depthwise, f32, 2-D) -> Add(per-channel constant) [-> Relu | HSwish]``
    into :data:`DEPTHWISE_CONVOLUTION_OP`.

    The convolution's output must have one use, the Add, whose constant operand holds one value per
    channel; the activation joins when it is the Add output's only use (otherwise the op stops at the
    bias and the activation reads its result).
    """

    name = "XlaDepthwiseBiasActivationFusion"
    anchors = ("GroupConvolution",)

    def apply(self, model: Model, node: Node, users: ConsumerMap) -> bool:
        if not _depthwise(node):
            return False
        found = channel_bias_and_activation(node, users, ACTIVATIONS)
        if found is None or found.nodes[1].output(0).element_type != Type.f32:
            return False
        pattern = list(found.nodes)
        activation = "none" if found.activation is None else ACTIVATIONS[found.activation]
        fused = depthwise_convolution(node, found.bias, activation, pattern[-1].friendly_name)
        replace_node(model, pattern[-1], fused, fused=pattern[:-1], consumers=users)
        return True
