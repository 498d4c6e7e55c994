"""What XLA does to a constant affine map in front of a 1x1 convolution: folded into its filters.

PP-LCNetV3 (PP-OCRv4's recogniser and detector backbones) follows every activation by a learnable
scalar scale and shift, so each pointwise convolution reads ``x * a + b``. XLA:CPU runs the
convolution as a library matrix product (:func:`~hetero_sdk_jax.lowering.convolution.pointwise_conv`)
and fuses nothing into it: the affine map was a loop of its own, a full pass over the product's input.
A 1x1 convolution without padding sums each output channel over the input channels of one position,
so ``conv(x * a + b, w) = conv(x, w * a) + sum_i(w[:, i] * b[i])``: :class:`PointwiseInputAffineFolding`
scales the filters' input channels by ``a`` and adds the constant per-output-channel term (which the
common optimisations then merge into the convolution's bias). Within f32 rounding of the original:
the products and sums are the same terms, associated differently.
"""

from __future__ import annotations

import numpy as np
from hetero_sdk import Model, Node, Output, opset
from hetero_sdk.plugin import ConsumerMap, MatcherPass, channel_scale, constant_operand, constant_value, replace_node

__all__ = ["PointwiseInputAffineFolding"]

_WINDOW = ("strides", "pads_begin", "pads_end", "dilations", "auto_pad")


def _pointwise_filters(conv: Node) -> np.ndarray | None:
    """The constant real ``[O, I, 1, ...]`` filters of ``conv``, a Convolution with a 1x1 kernel and no
    padding (any ``auto_pad`` pads a 1x1 kernel by nothing), else None."""
    if conv.type_name != "Convolution":
        return None
    filters = constant_value(conv.input_value(1))
    if filters is None or filters.ndim < 3 or any(k != 1 for k in filters.shape[2:]):
        return None
    if not np.issubdtype(filters.dtype, np.floating):
        return None
    explicit = conv.attrs["auto_pad"] in ("explicit", "notset")
    if explicit and any(p != 0 for p in (*conv.attrs["pads_begin"], *conv.attrs["pads_end"])):
        return None
    return filters


def _channel_constant(node: Node, type_name: str, users: ConsumerMap) -> tuple[Output, np.ndarray] | None:
    """``(x, per-channel value)`` when ``node`` is a ``type_name`` of ``x`` and a constant that varies
    along the channel axis only (:func:`~hetero_sdk.plugin.channel_scale`), with one consumer."""
    if node.type_name != type_name or users.count(node.output(0)) != 1:
        return None
    found = constant_operand(node)
    shape = node.output(0).partial_shape
    if found is None or not shape.rank_is_static or shape.rank < 3 or shape[1] < 0:
        return None
    value = channel_scale(np.asarray(found[1]), shape[1], shape.rank)
    return None if value is None else (found[0], value)


class PointwiseInputAffineFolding(MatcherPass):
    """Rewrites ``conv(x * a + b, w)``, ``conv(x + b, w)`` and ``conv(x * a, w)`` for a 1x1 Convolution
    without padding with constant filters ``w`` and constants ``a``, ``b`` holding one value per input
    channel (or one scalar), each op the only use of its result, into
    ``conv(x, w * a) + sum_i(w[:, i] * b[i])`` (the Add's constant is ``[1, O, 1, ...]``)."""

    name = "PointwiseInputAffineFolding"
    anchors = ("Convolution",)

    def apply(self, model: Model, node: Node, users: ConsumerMap) -> bool:
        filters = _pointwise_filters(node)
        if filters is None:
            return False
        source, fused = node.input_value(0).node, []
        shift = _channel_constant(source, "Add", users)
        if shift is not None:
            fused.append(source)
            source = shift[0].node
        scale = _channel_constant(source, "Multiply", users)
        if scale is not None:
            fused.append(source)
        found = scale or shift
        if found is None:
            return False
        x = found[0]
        channels = filters.shape[1]
        a = np.ones(channels) if scale is None else np.broadcast_to(scale[1], (channels,))
        b = np.zeros(channels) if shift is None else np.broadcast_to(shift[1], (channels,))
        kernel = (1,) * (filters.ndim - 2)
        dtype = filters.dtype
        scaled = (filters.astype(np.float64) * a.reshape(1, -1, *kernel)).astype(dtype)
        offset = np.einsum("oi,i->o", filters.reshape(filters.shape[0], channels).astype(np.float64), b)
        conv = opset.convolution(
            x, opset.constant(scaled, node.input_value(1).element_type), *(node.attrs[k] for k in _WINDOW)
        )
        users.attach(conv)
        if shift is None:
            replace_node(model, node, conv, fused=fused, consumers=users)
            return True
        conv.friendly_name = f"{node.friendly_name}/scaled_filters"
        bias = opset.constant(offset.astype(dtype).reshape(1, -1, *kernel), node.input_value(1).element_type)
        replace_node(model, node, opset.add(conv, bias), fused=fused, consumers=users)
        return True
