"""Activations that exporters decompose, recognised and rebuilt as one op (OpenVINO's ``HSwishFusion``).

``x * clamp(x + 3, 0, 6) / 6`` (HardSwish as PaddlePaddle and older PyTorch exports write it) becomes
one ``HSwish``: one kernel instead of four element-wise passes, and one op a device can fuse into
the convolution before it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hetero_sdk.graph.node import Node, Output
from hetero_sdk.ops.activation import hswish
from hetero_sdk.transformations.graph_rewrite import ConsumerMap, MatcherPass, replace_node
from hetero_sdk.transformations.linear_fusion import constant_operand

if TYPE_CHECKING:
    from hetero_sdk.graph.model import Model

__all__ = ["HSwishFusion"]


def _is_scalar(value: np.ndarray, expected: float, tolerance: float = 0.0) -> bool:
    return value.size == 1 and abs(float(value.reshape(-1)[0]) - expected) <= tolerance


class HSwishFusion(MatcherPass):
    """Replaces ``Divide(Multiply(x, Clamp(Add(x, 3), 0, 6)), 6)`` (or ``Multiply(..., 1/6)``) by
    ``HSwish(x)``; the Add, Clamp and inner Multiply must have no consumer outside the pattern."""

    name = "HSwishFusion"
    anchors = ("Divide", "Multiply")

    def apply(self, model: Model, last: Node, users: ConsumerMap) -> bool:
        found = constant_operand(last)
        if found is None:
            return False
        product, divisor = found
        if last.type_name == "Divide":
            if last.input_value(0) != product or not _is_scalar(divisor, 6.0):
                return False
        elif not _is_scalar(divisor * 6.0, 1.0, 1e-6):  # 1/6 rounded to the element type
            return False
        pattern = self._product(product, users)
        if pattern is None:
            return False
        x, nodes = pattern
        replace_node(model, last, hswish(x), fused=nodes, consumers=users)
        return True

    @staticmethod
    def _product(product: Output, users: ConsumerMap) -> tuple[Output, list[Node]] | None:
        """``(x, [add, clamp, multiply])`` when ``product`` is ``x * clamp(x + 3, 0, 6)``."""
        multiply = product.node
        if multiply.type_name != "Multiply" or users.count(product) != 1:
            return None
        for index in (0, 1):
            x, clamped = multiply.input_value(index), multiply.input_value(1 - index)
            clamp = clamped.node
            if clamp.type_name != "Clamp" or users.count(clamped) != 1:
                continue
            if (clamp.attrs["min"], clamp.attrs["max"]) != (0.0, 6.0):
                continue
            shifted = clamp.input_value(0)
            found = constant_operand(shifted.node) if shifted.node.type_name == "Add" else None
            if found is None or found[0] != x or not _is_scalar(found[1], 3.0) or users.count(shifted) != 1:
                continue
            return x, [shifted.node, clamp, multiply]
        return None
