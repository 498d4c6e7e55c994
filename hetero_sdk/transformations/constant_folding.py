"""Constant folding: ops whose inputs are all known become Constants (``ov::pass::ConstantFolding``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.ops.basic import constant
from hetero_sdk.reference import get_kernel, run_node
from hetero_sdk.transformations.fused_names import FUSED_NAMES, fused_names, set_fused_names
from hetero_sdk.transformations.graph_rewrite import ConsumerMap, copy_runtime_info, replace_output

if TYPE_CHECKING:
    from hetero_sdk.graph.model import Model
    from hetero_sdk.graph.node import Node

__all__ = ["DISABLE_CONSTANT_FOLDING", "ConstantFolding"]

DISABLE_CONSTANT_FOLDING = "disable_constant_folding"
"""rt_info key: a node whose value for it is true is never folded (``ov::disable_constant_folding``)."""


class ConstantFolding:
    """Replaces every op whose inputs are all Constants by Constants holding its outputs.

    Values are computed with the SDK's reference kernels (:func:`hetero_sdk.reference.run_node`), in
    topological order, so whole constant subgraphs fold in one run. ``ShapeOf`` of a statically
    shaped tensor folds too, whatever produces the tensor. An op is left alone when it has no
    reference kernel, when its kernel raises on these inputs (the error then surfaces at inference,
    where it belongs), when an output would exceed :attr:`max_elements` elements (folding would trade
    a cheap op for a huge weight), or when its rt_info sets ``disable_constant_folding``.

    Each new Constant takes the friendly name of the op it replaces (``name:i`` for output ``i > 0``
    of a multi-output op), that output's tensor names and rt_info, and records in ``fused_names`` the
    folded op together with the records of folded Constants it consumed.

    :param max_elements: the largest output, in elements, that may be folded.
    """

    name = "ConstantFolding"

    def __init__(self, max_elements: int = 1 << 24) -> None:
        self.max_elements = max_elements

    def run(self, model: Model) -> bool:
        """Folds every foldable op of ``model``; returns True when one was folded."""
        users = ConsumerMap(model)
        changed = False
        for node in model.get_ops():
            if node.op.structural or node.get_rt_info().get(DISABLE_CONSTANT_FOLDING):
                continue
            if not any(users.count(port) for port in node.outputs()):
                continue
            values = self._evaluate(node)
            if values is not None:
                self._replace(model, node, values, users)
                changed = True
        return changed

    def _evaluate(self, node: Node) -> list[np.ndarray] | None:
        for port in node.outputs():
            shape = port.partial_shape
            if shape.is_static and math.prod(shape.dims) > self.max_elements:
                return None
        if node.type_name == "ShapeOf":
            shape = node.input_value(0).partial_shape
            if shape.is_dynamic:
                return None
            return [np.array(shape.dims, dtype=node.get_output_element_type(0).numpy)]
        sources = node.input_values()
        if not all(s.node.type_name == "Constant" for s in sources):
            return None
        try:
            get_kernel(node.type_name)
        except UnsupportedOperationError:
            return None
        try:
            values = run_node(node, [s.node.attrs["value"] for s in sources])
        except Exception:  # a kernel error on constant inputs belongs to inference time, not to folding
            return None
        if any(v.size > self.max_elements for v in values) or len(values) != node.get_output_size():
            return None
        return values

    def _replace(self, model: Model, node: Node, values: list[np.ndarray], users: ConsumerMap) -> None:
        record = fused_names(node)
        for source in node.input_values():
            if source.node.type_name == "Constant" and FUSED_NAMES in source.node.get_rt_info():
                record |= fused_names(source.node)
        for port, value in zip(node.outputs(), values):
            if not users.count(port):
                continue
            name = node.friendly_name if port.index == 0 else f"{node.friendly_name}:{port.index}"
            folded = constant(value, dtype=port.element_type, name=name)
            copy_runtime_info([node], folded)
            set_fused_names(folded, record)
            folded.output(0).set_names(port.names)
            replace_output(model, port, folded.output(0), users)
        users.detach(node)
