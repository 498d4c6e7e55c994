"""Chains of constant Adds and Multiplies folded together and into convolutions (OpenVINO's
``LinOpSequenceFusion`` and ``ConvolutionMultiplyFusion``).

Exported convnets often follow each convolution by its bias, then a per-channel or scalar affine
(``conv(x, w) + b) * s + c``: a BatchNorm split into two ops, or a learnable scale and shift). The
passes of this module rewrite such a chain into one convolution with scaled filters and one Add:

- :class:`AddMultiplyFusion`: ``(x + a) * b`` -> ``x * b + a * b``;
- :class:`ConvMultiplyFusion`: ``conv(x, w) * s`` -> ``conv(x, w * s)`` for a per-channel ``s``;
- :class:`AddAddFusion` and :class:`MultiplyMultiplyFusion`: ``(x + a) + b`` -> ``x + (a + b)``,
  ``(x * a) * b`` -> ``x * (a * b)``.

Each needs the constants not to enlarge ``x`` (the result keeps ``x``'s shape), a real element type,
numpy broadcasting, and the inner op to have no other consumer.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hetero_sdk.graph.node import Node, Output
from hetero_sdk.ops.basic import constant
from hetero_sdk.ops.elementwise import add, multiply
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.transformations.fused_names import fused_names, set_fused_names
from hetero_sdk.transformations.graph_rewrite import ConsumerMap, MatcherPass, replace_node

if TYPE_CHECKING:
    from hetero_sdk.graph.model import Model

__all__ = [
    "AddAddFusion", "AddMultiplyFusion", "BiasedActivation", "ConvMultiplyFusion", "MultiplyMultiplyFusion",
    "channel_bias_and_activation", "channel_scale", "constant_operand",
]  # fmt: skip

_CONVOLUTIONS = frozenset({"Convolution", "GroupConvolution", "ConvolutionBackpropData"})


def constant_operand(node: Node) -> tuple[Output, np.ndarray] | None:
    """``(x, value)`` for a real-typed binary ``node`` of ``x`` and a constant ``value`` that keeps
    ``x``'s shape under numpy broadcasting; None for any other node."""
    if node.get_input_size() != 2 or node.attrs.get("auto_broadcast", "numpy") != "numpy":
        return None
    if not node.output(0).element_type.is_real:
        return None
    for index in (0, 1):
        value = constant_value(node.input_value(1 - index))
        x = node.input_value(index)
        if value is None or constant_value(x) is not None:
            continue
        shape = x.partial_shape
        if not shape.rank_is_static or value.ndim > shape.rank or node.output(0).partial_shape != shape:
            continue
        if all(v == 1 or v == d for v, d in zip(value.shape, shape.dims[shape.rank - value.ndim :])):
            return x, value
    return None


def _inner(node: Node, type_name: str, users: ConsumerMap) -> tuple[Node, Output, np.ndarray] | None:
    """The ``type_name`` op with a constant operand feeding ``node`` (with ``node`` its only consumer)."""
    found = constant_operand(node)
    if found is None or found[0].node.type_name != type_name or users.count(found[0]) != 1:
        return None
    inner = found[0].node
    operand = constant_operand(inner)
    return None if operand is None else (inner, operand[0], operand[1])


def _constant(value: np.ndarray, like: Output) -> Output:
    return constant(np.asarray(value).astype(like.element_type.numpy)).output(0)


def _constant_names(*nodes: Node) -> set[str]:
    """The original names the Constant inputs of ``nodes`` stand for (a merged constant stands for them)."""
    return {
        name for n in nodes for v in n.input_values() if v.node.type_name == "Constant" for name in fused_names(v.node)
    }


def _record_merged_constants(node: Node, keep: Node, names: set[str]) -> None:
    """Records ``names`` on the Constant inputs of ``node`` other than ``keep`` (the ones a rewrite made)."""
    for value in node.input_values():
        if value.node.type_name == "Constant" and value.node is not keep:
            set_fused_names(value.node, names)


class _ChainFusion:
    """Folds ``outer(inner(x, a), b)`` for one pair of op types (see the module docstring)."""

    name = ""
    inner = ""
    outer = ""

    def run(self, model: Model) -> bool:
        """Folds every match in ``model``; returns True when one was folded."""
        users = ConsumerMap(model)
        changed = False
        for node in model.get_ops():
            if node.type_name != self.outer:
                continue
            match = _inner(node, self.inner, users)
            outer = constant_operand(node)
            if match is None or outer is None:
                continue
            inner, x, a = match
            constants = _constant_names(inner, node)
            new = self.rewrite(x, a, outer[1], node.output(0))
            replace_node(model, node, new, fused=[inner], consumers=users)
            _record_merged_constants(new, x.node, constants)
            between = new.input_value(0).node
            if between is not x.node:  # AddMultiplyFusion's new Multiply stands for the same original ops
                set_fused_names(between, fused_names(new))
                _record_merged_constants(between, x.node, constants)
            changed = True
        return changed

    def rewrite(self, x: Output, a: np.ndarray, b: np.ndarray, like: Output) -> Node:
        """The node replacing ``outer(inner(x, a), b)``."""
        raise NotImplementedError


class AddMultiplyFusion(_ChainFusion):
    """``(x + a) * b`` -> ``x * b + a * b`` (the Multiply can then reach a convolution before it)."""

    name = "AddMultiplyFusion"
    inner = "Add"
    outer = "Multiply"

    def rewrite(self, x: Output, a: np.ndarray, b: np.ndarray, like: Output) -> Node:
        """``add(multiply(x, b), a * b)``."""
        return add(multiply(x, _constant(b, like)), _constant(a * b, like))


class AddAddFusion(_ChainFusion):
    """``(x + a) + b`` -> ``x + (a + b)``."""

    name = "AddAddFusion"
    inner = "Add"
    outer = "Add"

    def rewrite(self, x: Output, a: np.ndarray, b: np.ndarray, like: Output) -> Node:
        """``add(x, a + b)``."""
        return add(x, _constant(a + b, like))


class MultiplyMultiplyFusion(_ChainFusion):
    """``(x * a) * b`` -> ``x * (a * b)``."""

    name = "MultiplyMultiplyFusion"
    inner = "Multiply"
    outer = "Multiply"

    def rewrite(self, x: Output, a: np.ndarray, b: np.ndarray, like: Output) -> Node:
        """``multiply(x, a * b)``."""
        return multiply(x, _constant(a * b, like))


def channel_scale(value: np.ndarray, channels: int, rank: int) -> np.ndarray | None:
    """``value`` as one factor per channel of a ``rank``-dim ``[N, C, ...]`` tensor, when it varies
    along the channel axis only (a scalar, ``[C, 1, 1]``, ``[1, C, 1, 1]``...); else None."""
    shape = (1,) * (rank - value.ndim) + value.shape
    if any(d != 1 for i, d in enumerate(shape) if i != 1) or shape[1] not in (1, channels):
        return None
    return np.broadcast_to(value.reshape(-1), (channels,))


@dataclass(frozen=True)
class BiasedActivation:
    """What :func:`channel_bias_and_activation` found after a node: the fused pattern's nodes in order
    (the node, the Add, then the activation if any), the bias operand and the activation's op type."""

    nodes: tuple[Node, ...]
    bias: Output
    activation: str | None


def channel_bias_and_activation(
    node: Node, users: ConsumerMap, activations: Collection[str]
) -> BiasedActivation | None:
    """The ``Add`` of a constant holding one value per channel (:func:`channel_scale`) that is the only
    use of ``node``'s ``[N, C, ...]`` output, and the activation (an op type of ``activations``) that is
    the Add output's only use, if there is one: a convolution's bias and activation, as fusions take
    them. None when ``node`` has another use, the Add's constant varies along another axis, or the
    channel count is unknown."""
    uses = users.of(node.output(0))
    if len(uses) != 1 or uses[0][0].type_name != "Add":
        return None
    add, index = uses[0]
    found = constant_operand(add)
    shape = node.output(0).partial_shape
    if found is None or found[0] != node.output(0) or not shape.rank_is_static or shape.rank < 3 or shape[1] < 0:
        return None
    if channel_scale(np.asarray(found[1]), shape[1], shape.rank) is None:
        return None
    after = users.of(add.output(0))
    if len(after) == 1 and after[0][0].type_name in activations:
        return BiasedActivation((node, add, after[0][0]), add.input_value(1 - index), after[0][0].type_name)
    return BiasedActivation((node, add), add.input_value(1 - index), None)


class ConvMultiplyFusion(MatcherPass):
    """``conv(x, w) * s`` -> ``conv(x, w * s)``: a per-channel (or scalar) constant scale folded into
    the constant filters of a Convolution, GroupConvolution or ConvolutionBackpropData whose only
    consumer is the Multiply."""

    name = "ConvMultiplyFusion"
    anchors = ("Multiply",)

    def apply(self, model: Model, node: Node, users: ConsumerMap) -> bool:
        found = constant_operand(node)
        if found is None or found[0].node.type_name not in _CONVOLUTIONS or users.count(found[0]) != 1:
            return False
        source, value = found
        conv = source.node
        filters = constant_value(conv.input_value(1))
        shape = source.partial_shape
        if filters is None or shape.rank < 3:
            return False
        scale = channel_scale(value, shape[1], shape.rank)
        if scale is None:
            return False
        if conv.type_name == "Convolution":
            scaled = filters * scale.reshape(-1, *([1] * (filters.ndim - 1)))
        elif conv.type_name == "ConvolutionBackpropData":  # [in, out, kernel...]
            scaled = filters * scale.reshape(1, -1, *([1] * (filters.ndim - 2)))
        else:  # [groups, out per group, in per group, kernel...]
            scaled = filters * scale.reshape(filters.shape[0], filters.shape[1], *([1] * (filters.ndim - 2)))
        inputs = [conv.input_value(0), _constant(scaled, conv.input_value(1)), *conv.input_values()[2:]]
        set_fused_names(inputs[1].node, fused_names(conv.input_value(1).node) | _constant_names(node))
        folded = Node(conv.op, inputs, dict(conv.attrs))
        set_fused_names(folded, fused_names(conv))
        replace_node(model, node, folded, fused=[conv], consumers=users)
        return True
