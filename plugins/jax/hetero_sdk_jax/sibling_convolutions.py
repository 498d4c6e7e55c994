"""What XLA does to 1x1 convolutions that read the same tensor: one convolution, its result split.

A CSP block (YOLOX, YOLOv5) starts with two 1x1 convolutions of the same input, each with a few output
channels (24 to 192 in the YOLOX detector of ``ddddocr``). XLA:CPU runs each as a matrix product
(:func:`~hetero_sdk_jax.lowering.convolution.pointwise_conv`) reading the whole input; one product by
the filters side by side reads it once and gives the library a wider matrix.
:class:`SiblingPointwiseConvolutions` merges them; the channels-last chain runs on through the split
(:mod:`hetero_sdk_jax.lowering.movement`). Each output channel is the same sum over the input
channels as before (the library may add its terms in another order: within f32 rounding).

When every sibling's result is read by its per-channel constant bias Add alone
(:func:`~hetero_sdk_jax.convolution_fusion.bias_and_activation`), the Adds move before the split as one
Add of the biases side by side, and so does the activation when all siblings have the same one: the
merged convolution then carries them into
:class:`~hetero_sdk_jax.convolution_fusion.ConvolutionBiasActivationFusion`'s op, whose kernel applies
them in registers, instead of XLA running a bias and activation loop per branch after the split. With
different activations only the biases move; when a sibling has no bias or its result another reader,
nothing moves.
"""

from __future__ import annotations

import numpy as np
from hetero_sdk import Model, Node, Output, opset
from hetero_sdk.plugin import ConsumerMap, MatcherPass, channel_scale, constant_value, replace_node

from hetero_sdk_jax.convolution_fusion import bias_and_activation

__all__ = ["SiblingPointwiseConvolutions"]

_GEOMETRY = ("strides", "pads_begin", "pads_end", "dilations", "auto_pad")


def _pointwise_filter(node: Node) -> np.ndarray | None:
    """The constant ``[O, I, 1, ...]`` filter of ``node``, a Convolution with a 1x1 kernel, else None."""
    if node.type_name != "Convolution":
        return None
    filters = constant_value(node.input_value(1))
    if filters is None or filters.ndim < 3 or any(k != 1 for k in filters.shape[2:]):
        return None
    return filters


class SiblingPointwiseConvolutions(MatcherPass):
    """Replaces the 1x1 Convolutions with constant filters, one geometry and one type that read the same
    tensor by one Convolution of their filters concatenated, and a VariadicSplit of its channels into
    their results; their per-channel bias Adds (and their activation, when it is the same) move before
    the split when every sibling has one (see the module's docstring)."""

    name = "SiblingPointwiseConvolutions"
    anchors = ("Convolution",)

    def apply(self, model: Model, node: Node, users: ConsumerMap) -> bool:
        first = _pointwise_filter(node)
        if first is None:
            return False
        data = node.input_value(0)
        if all(other is not node for other in users.nodes(data)):  # merged into a sibling's already
            return False
        geometry = [node.attrs[name] for name in _GEOMETRY]
        siblings, filters = [], []
        for other in users.nodes(data):
            found = _pointwise_filter(other)
            if found is None or other.input_value(0) != data or found.dtype != first.dtype:
                continue
            if found.shape[1:] != first.shape[1:] or [other.attrs[name] for name in _GEOMETRY] != geometry:
                continue
            siblings.append(other)
            filters.append(found)
        if len(siblings) < 2:
            return False
        attrs = dict(zip(_GEOMETRY, geometry))
        merged = opset.convolution(
            data,
            opset.constant(np.concatenate(filters, axis=0), node.input_value(1).element_type),
            attrs["strides"],
            attrs["pads_begin"],
            attrs["pads_end"],
            attrs["dilations"],
            attrs["auto_pad"],
            name=f"{siblings[0].friendly_name}/with_siblings",
        )
        users.attach(merged)
        patterns = [_bias_pattern(sibling, users) for sibling in siblings]
        biased = [pattern for pattern in patterns if pattern is not None]
        top, replaced = merged.output(0), [[sibling] for sibling in siblings]
        if len(biased) == len(siblings):
            replaced, top = _hoisted(top, biased, users)
        lengths = np.array([f.shape[0] for f in filters], np.int64)
        parts = opset.variadic_split(top, np.int64(1), lengths)
        users.attach(parts)
        for index, pattern in enumerate(replaced):
            parts.output(index).set_names(pattern[-1].output(0).names)  # a model output keeps its name
            replace_node(model, pattern[-1], [parts.output(index)], fused=pattern[:-1], consumers=users)
        return True


_Pattern = tuple[list[Node], np.ndarray, str]
"""A sibling's nodes (the Convolution, its bias Add, the activation's nodes), its bias (one value per
channel) and its activation (:data:`~hetero_sdk_jax.convolution_fusion.ACTIVATIONS`)."""


def _bias_pattern(conv: Node, users: ConsumerMap) -> _Pattern | None:
    """``conv``'s bias and activation as the convolution fusion takes them, the bias a constant; else None."""
    found = bias_and_activation(conv, users)
    if found is None:
        return None
    nodes, bias, activation = found
    value = constant_value(bias)
    shape = conv.output(0).partial_shape
    per_channel = None if value is None else channel_scale(np.asarray(value), shape[1], shape.rank)
    return None if per_channel is None else (nodes, per_channel, activation)


def _hoisted(merged: Output, patterns: list[_Pattern], users: ConsumerMap) -> tuple[list[list[Node]], Output]:
    """The siblings' bias Adds as one Add after ``merged``, and their activation after it when they all
    have the same one: the output to split, and each sibling's nodes up to the one a part replaces."""
    rank = merged.partial_shape.rank
    bias = np.concatenate([p[1] for p in patterns]).reshape((1, -1) + (1,) * (rank - 2))
    top = opset.add(merged, opset.constant(bias.astype(np.float32)), name=f"{merged.node.friendly_name}/bias")
    users.attach(top)
    activations = {p[2] for p in patterns}
    activation = activations.pop() if len(activations) == 1 else "none"
    if activation == "none":  # the activations (if any) read each branch's part
        return [p[0][:2] for p in patterns], top.output(0)
    if activation == "silu":
        gate = opset.sigmoid(top)
        users.attach(gate)
        end = opset.multiply(top, gate)
    else:
        end = opset.relu(top) if activation == "relu" else opset.hswish(top)
    users.attach(end)
    return [p[0] for p in patterns], end.output(0)
