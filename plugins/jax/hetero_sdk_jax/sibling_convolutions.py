"""What XLA does to 1x1 convolutions that read the same tensor: one convolution, its result split.

A CSP block (YOLOX, YOLOv5) starts with two 1x1 convolutions of the same input, each with a few output
channels (24 to 192 in the YOLOX detector of ``ddddocr``). XLA:CPU runs each as a matrix product
(:func:`~hetero_sdk_jax.lowering.convolution.pointwise_conv`) reading the whole input; one product by
the filters side by side reads it once and gives the library a wider matrix.
:class:`SiblingPointwiseConvolutions` merges them; the channels-last chain runs on through the split
(:mod:`hetero_sdk_jax.lowering.movement`). Each output channel is the same sum over the input
channels as before (the library may add its terms in another order: within f32 rounding).
"""

from __future__ import annotations

import numpy as np
from hetero_sdk import Model, Node, opset
from hetero_sdk.plugin import ConsumerMap, MatcherPass, constant_value, replace_node

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
    their results."""

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
        lengths = np.array([f.shape[0] for f in filters], np.int64)
        parts = opset.variadic_split(merged, np.int64(1), lengths)
        users.attach(merged)
        users.attach(parts)
        for index, sibling in enumerate(siblings):
            replace_node(model, sibling, [parts.output(index)], consumers=users)
        return True
