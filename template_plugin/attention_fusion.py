"""TEMPLATE's fusion of a decoder layer's attention, as torch's exporter writes it, into ``TemplateAttention``
(:mod:`template_plugin.attention_ops`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hetero_sdk.plugin import ConsumerMap, MatcherPass, replace_node
from template_plugin.attention_ops import ATTENTION, attention, cached_attention

if TYPE_CHECKING:
    from hetero_sdk import Model, Node, Output

__all__ = ["AttentionFusion", "CachedAttentionFusion"]

_FUSED_TYPES = frozenset({"f32", "f64"})


class AttentionFusion(MatcherPass):
    """Fuses ``MatMul(P, V)`` with ``P = Softmax(Add(MatMul(Multiply(q, a), Multiply(Transpose(K, [0, 1, 3, 2]),
    c)), bias), -1)``, optionally ``Select(NotEqual(P, P), n, P)``, into ``TemplateAttention``.

    ``q``, K and V are f32 or f64 of rank 4; ``a``, ``c`` and ``n`` are Constants holding one value; either
    operand order of the Add and the Multiplies; the MatMuls transpose nothing. K and V are the key and
    value themselves, or both repeated per query head as grouped-query attention exports write it,
    ``Reshape(Broadcast(Unsqueeze(key, 2), target), pattern)`` (one Broadcast mode and one
    ``special_zero`` for both). Every node of the block but q, K's or V's source and the bias has one use.
    The fused op takes the last MatMul's friendly name and tensor names and records the block in
    ``fused_names``.
    """

    name = "TemplateAttentionFusion"
    anchors = ("MatMul",)

    def apply(self, model: Model, final: Node, users: ConsumerMap) -> bool:
        if _transposes(final) or final.output(0).element_type.value not in _FUSED_TYPES:
            return False
        block: list[Node] = []
        probabilities, nan_value = final.input_value(0), None
        select = probabilities.node
        if select.type_name == "Select":
            found = _nan_replaced(select, users)
            if found is None:
                return False
            probabilities, nan_value = found
            block = [select, select.input_value(0).node]
        softmax = probabilities.node
        expected_uses = 3 if nan_value is not None else 1
        if softmax.type_name != "Softmax" or softmax.attrs["axis"] not in (-1, 3):
            return False
        if len(users.of(softmax.output(0))) != expected_uses:
            return False
        add = softmax.input_value(0).node
        if add.type_name != "Add" or add.attrs.get("auto_broadcast", "numpy") != "numpy" or _shared(add, users):
            return False
        for index in (0, 1):
            scores, bias = add.input_value(index).node, add.input_value(1 - index)
            if scores.type_name != "MatMul" or _transposes(scores) or _shared(scores, users):
                continue
            query = _scaled(scores.input_value(0).node, users)
            key = _scaled(scores.input_value(1).node, users)
            if query is None or key is None:
                continue
            transpose = key[0].node
            if transpose.type_name != "Transpose" or _shared(transpose, users) or not _swaps_last(transpose):
                continue
            keys, values = _repeated(transpose.input_value(0), users), _repeated(final.input_value(1), users)
            if (keys[1] is None) != (values[1] is None) or (keys[1] is not None and keys[2] != values[2]):
                continue
            q = query[0]
            if q.element_type.value not in _FUSED_TYPES or any(
                x.partial_shape.rank != 4 for x in (q, keys[0], values[0])
            ):
                return False
            repeats = None if keys[1] is None or values[1] is None else (*keys[1], *values[1])
            mode, special_zero = keys[2] if keys[2] is not None else ("bidirectional", False)
            fused = attention(
                q, query[1], keys[0], key[1], bias, values[0], nan_value, repeats,
                broadcast_mode=mode, special_zero=special_zero,
            )  # fmt: skip
            nodes = [*block, softmax, add, scores, query[2], key[2], transpose, *keys[3], *values[3]]
            replace_node(model, final, fused, fused=nodes, consumers=users)
            return True
        return False


def _transposes(matmul: Node) -> bool:
    return bool(matmul.attrs.get("transpose_a", False) or matmul.attrs.get("transpose_b", False))


def _shared(node: Node, users: ConsumerMap) -> bool:
    """True when ``node``'s output has more than one use."""
    return len(users.of(node.output(0))) != 1


def _one_value(output: Output) -> bool:
    return output.node.type_name == "Constant" and np.asarray(output.node.attrs["value"]).size == 1


def _scaled(node: Node, users: ConsumerMap) -> tuple[Output, Output, Node] | None:
    """``(x, scale, node)`` when ``node`` is ``Multiply(x, scale)`` (either order, numpy broadcasting) by a
    Constant of one value of rank at most 4, with one use; else None."""
    if node.type_name != "Multiply" or node.attrs.get("auto_broadcast", "numpy") != "numpy" or _shared(node, users):
        return None
    for index in (0, 1):
        scale = node.input_value(1 - index)
        if _one_value(scale) and scale.partial_shape.rank <= 4:
            return node.input_value(index), scale, node
    return None


def _swaps_last(transpose: Node) -> bool:
    order = transpose.input_value(1).node
    if order.type_name != "Constant":
        return False
    return [int(v) for v in np.asarray(order.attrs["value"]).reshape(-1)] == [0, 1, 3, 2]


def _nan_replaced(select: Node, users: ConsumerMap) -> tuple[Output, Output] | None:
    """``(P, n)`` when ``select`` is ``Select(NotEqual(P, P), n, P)`` of a one-value Constant ``n``, the
    NotEqual with one use; else None."""
    if select.attrs.get("auto_broadcast", "numpy") != "numpy" or _shared(select, users):
        return None
    test, value, probabilities = select.input_values()
    if test.node.type_name != "NotEqual" or _shared(test.node, users) or not _one_value(value):
        return None
    if test.node.input_value(0) != probabilities or test.node.input_value(1) != probabilities:
        return None
    if value.partial_shape.rank > 4 or value.element_type != probabilities.element_type:
        return None
    return probabilities, value


def _repeated(
    output: Output, users: ConsumerMap
) -> tuple[Output, tuple[Output, Output] | None, tuple[str, bool] | None, list[Node]]:
    """``(source, (target, pattern), (mode, special_zero), nodes)`` when ``output`` is
    ``Reshape(Broadcast(Unsqueeze(source, 2), target), pattern)`` of a rank-4 source, each with one use;
    else ``(output, None, None, [])``."""
    plain: tuple[Output, None, None, list[Node]] = (output, None, None, [])
    reshape = output.node
    if reshape.type_name != "Reshape" or _shared(reshape, users):
        return plain
    broadcast = reshape.input_value(0).node
    if broadcast.type_name != "Broadcast" or _shared(broadcast, users) or broadcast.get_input_size() != 2:
        return plain
    if broadcast.attrs["mode"] not in ("numpy", "bidirectional"):
        return plain
    unsqueeze = broadcast.input_value(0).node
    if unsqueeze.type_name != "Unsqueeze" or _shared(unsqueeze, users):
        return plain
    axes = unsqueeze.input_value(1).node
    source = unsqueeze.input_value(0)
    if axes.type_name != "Constant" or source.partial_shape.rank != 4:
        return plain
    if [int(v) for v in np.asarray(axes.attrs["value"]).reshape(-1)] not in ([2], [-3]):
        return plain
    how = (broadcast.attrs["mode"], bool(reshape.attrs["special_zero"]))
    return source, (broadcast.input_value(1), reshape.input_value(1)), how, [reshape, broadcast, unsqueeze]


class CachedAttentionFusion(MatcherPass):
    """Fuses a ``TemplateAttention`` whose key and value are each ``Concat(past, new)`` along axis 2 of rank
    4 (a decoder appending the step's keys and values to its cache) into ``TemplateCachedAttention``, whose
    second and third outputs replace the Concats (their tensor names, the cache the step returns, move
    there); the attention's output and friendly name move to the first."""

    name = "TemplateCachedAttentionFusion"
    anchors = (ATTENTION,)

    def apply(self, model: Model, node: Node, users: ConsumerMap) -> bool:
        concats = [node.input_value(2).node, node.input_value(5).node]
        for concat in concats:
            if concat.type_name != "Concat" or concat.get_input_size() != 2 or concat.attrs["axis"] not in (2, -2):
                return False
            if concat.output(0).partial_shape.rank != 4:
                return False
        (key, value) = concats
        fused = cached_attention(
            node, key.input_value(0), key.input_value(1), value.input_value(0), value.input_value(1)
        )
        fused.friendly_name = node.friendly_name
        users.attach(fused)
        for old, port in ((node, 0), (key, 1), (value, 2)):
            names = old.output(0).names
            replace_node(model, old, [fused.output(port)], consumers=users)
            fused.output(port).set_names(names)
        return True
