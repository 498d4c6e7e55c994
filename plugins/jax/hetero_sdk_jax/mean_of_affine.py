"""What XLA does to the mean of a constant affine map: the mean first, the map on the reduced values.

PP-LCNetV3 (PP-OCRv4's recogniser backbone) follows each activation by a learnable scale and shift, ``y = x * a
+ b``, and its squeeze-and-excitation blocks average ``y`` over the positions (``GlobalAveragePool``) while
the block's end multiplies ``y`` itself by the excitation. XLA's reduction (a YNNPACK fusion) takes no
element-wise ops into it, so ``y`` was stored by a loop of its own for the two readers. The mean is linear:
``mean(x * a + b) = mean(x) * a + b`` where ``a`` and ``b`` do not vary along the reduced axes, so
:class:`MeanOfAffineFolding` averages ``x`` and maps the few reduced values; the block's end then computes
``y`` inside its multiply's loop. Within f32 rounding: the same terms, associated differently.
"""

from __future__ import annotations

import numpy as np
from hetero_sdk import Model, Node, Output, opset
from hetero_sdk.plugin import ConsumerMap, MatcherPass, constant_operand, constant_value, reduced_axes, replace_node

__all__ = ["MeanOfAffineFolding"]


def _affine_constant(node: Node, type_name: str, axes: tuple[int, ...], rank: int) -> tuple[Output, np.ndarray] | None:
    """``(x, c)`` when ``node`` is a ``type_name`` of ``x`` and a floating-point constant ``c`` that keeps ``x``'s
    shape and holds one value along each of ``axes`` (its shape padded to ``rank`` has 1 there)."""
    if node.type_name != type_name:
        return None
    found = constant_operand(node)
    if found is None or not np.issubdtype(np.asarray(found[1]).dtype, np.floating):
        return None
    value = np.asarray(found[1])
    shape = (1,) * (rank - value.ndim) + value.shape
    if value.ndim > rank or any(shape[axis] != 1 for axis in axes):
        return None
    return found[0], value.reshape(shape)


class MeanOfAffineFolding(MatcherPass):
    """Rewrites ``ReduceMean(x * a + b)``, ``ReduceMean(x + b)`` and ``ReduceMean(x * a)`` over constant axes, for
    floating-point constants ``a``, ``b`` of one value along every reduced axis, into ``ReduceMean(x) * a + b``
    (the constants with the reduced axes dropped where the mean drops them). The affine ops stay for their other
    readers."""

    name = "XlaMeanOfAffineFolding"
    anchors = ("ReduceMean",)

    def apply(self, model: Model, node: Node, users: ConsumerMap) -> bool:
        shape = node.input_value(0).partial_shape
        axes_value = constant_value(node.input_value(1))
        if axes_value is None or not shape.rank_is_static or shape.rank == 0:
            return False
        rank, keep = shape.rank, node.attrs["keep_dims"]
        axes = reduced_axes(rank, axes_value)
        source = node.input_value(0).node
        shift = _affine_constant(source, "Add", axes, rank)
        if shift is not None:
            source = shift[0].node
        scale = _affine_constant(source, "Multiply", axes, rank)
        found = scale or shift
        if found is None:
            return False
        mean = opset.reduce_mean(found[0], node.input_value(1), keep)
        users.attach(mean)
        for constant in (scale, shift):
            if constant is None:
                continue
            value = constant[1] if keep else np.squeeze(constant[1], axis=axes)
            combine = opset.multiply if constant is scale else opset.add
            mean = combine(mean, opset.constant(value, node.output(0).element_type))
            if constant is scale and shift is not None:
                users.attach(mean)
        replace_node(model, node, mean, consumers=users)
        return True
