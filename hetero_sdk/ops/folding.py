"""Values known while a model is being built: what lets shape inference give exact dimensions.

Shape-like inputs (target shapes, axes, pads) are often computed in the graph, as in
``Reshape(x, Concat(ShapeOf(x)[0:1], [-1]))``. When such an input depends only on Constants and on
static shapes, :func:`constant_value` computes it with the ops' own array-API kernels
(:attr:`~hetero_sdk.graph.OpDef.evaluate`), so inference gives static dimensions.
"""

from __future__ import annotations

import numpy as np

from hetero_sdk.graph.node import Output

__all__ = ["constant_value"]

_MAX_ELEMENTS = 1 << 16
"""Larger intermediate values are not folded while building: shape values are small."""
_MAX_DEPTH = 32


def constant_value(output: Output, _depth: int = 0) -> np.ndarray | None:
    """The value of ``output`` when it is known at build time, else None.

    Known means: a Constant, a ShapeOf of a static shape, or an op with an array-API kernel whose
    inputs are all known (and small).
    """
    node = output.node
    op = node.op
    if op.type_name == "ShapeOf":
        shape = node.input_value(0).partial_shape
        return np.array(shape.dims, dtype=node.get_output_element_type(0).numpy) if shape.is_static else None
    if op.type_name == "Constant":
        return node.attrs["value"]  # type: ignore[no-any-return]
    if op.evaluate is None or op.data_dependent or _depth > _MAX_DEPTH:
        return None
    values = []
    for source in node.input_values():
        value = constant_value(source, _depth + 1)
        if value is None or value.size > _MAX_ELEMENTS:
            return None
        values.append(value)
    with np.errstate(all="ignore"):
        raw = op.evaluate(node, *values)
    outputs = raw if isinstance(raw, (tuple, list)) else [raw]
    return np.asarray(outputs[output.index]).astype(node.get_output_element_type(output.index).numpy, copy=False)
