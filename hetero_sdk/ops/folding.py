"""Values known while a model is being built: what lets shape inference give exact dimensions.

Shape-like inputs (target shapes, axes, pads) are often computed in the graph, as in
``Reshape(x, Concat(ShapeOf(x)[0:1], [-1]))``. When such an input depends only on Constants and on
static shapes, :func:`constant_value` computes it with the ops' own array-API kernels
(:attr:`~hetero_sdk.graph.OpDef.evaluate`), so inference gives static dimensions.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from hetero_sdk.graph.limits import FOLDED_ELEMENTS
from hetero_sdk.graph.node import Node, Output

__all__ = ["UNKNOWN", "constant_value", "partial_value"]

UNKNOWN = int(np.iinfo(np.int64).min)
"""An entry of a :func:`partial_value` not known while building (a dynamic dimension)."""

_MOVING_OPS = frozenset({"Concat", "Gather", "Slice", "StridedSlice", "Squeeze", "Unsqueeze", "Reshape"})
"""Ops that only move the entries of an integer tensor: they carry unknown entries along untouched."""

_MAX_DEPTH = 32
"""Producers deeper than this are not followed (a value folded through more ops is rare)."""


def _small_outputs(node: Node) -> bool:
    """Whether every output of ``node`` has a static shape within :data:`FOLDED_ELEMENTS`: checked before
    evaluating it, so that a Range or ConstantOfShape of a huge declared size is never computed."""
    for index in range(node.get_output_size()):
        shape = node.get_output_partial_shape(index)
        if not shape.is_static or not FOLDED_ELEMENTS.allows(math.prod(shape.dims)):
            return False
    return True


_Memo = dict[tuple[str, int, int], tuple[int, "np.ndarray | None"]]
"""What one top-level call found so far, by (function, node id, output index): the depth it was
found at and the value. A value known at some depth is known with more depth left (a smaller depth);
an unknown one stays unknown with less."""


def _memoized(
    kind: str, compute: Callable[[Output, int, _Memo], np.ndarray | None], output: Output, depth: int, memo: _Memo
) -> np.ndarray | None:
    """``compute(output, depth, memo)``, or what an earlier call of this top-level call found when it
    still holds at ``depth``."""
    key = (kind, id(output.node), output.index)
    found = memo.get(key)
    if found is not None:
        at, value = found
        if (value is not None and depth <= at) or (value is None and depth >= at):
            return value
    value = compute(output, depth, memo)
    memo[key] = (depth, value)
    return value


def constant_value(output: Output, _depth: int = 0, _memo: _Memo | None = None) -> np.ndarray | None:
    """The value of ``output`` when it is known at build time, else None.

    Known means: a Constant, a ShapeOf of a static shape, or an op with an array-API kernel whose
    inputs are all known (and small). Each output is computed once a call, however many paths of the
    graph reach it (shape sub-graphs share their ShapeOf and Range nodes widely).
    """
    return _memoized("value", _constant_value, output, _depth, {} if _memo is None else _memo)


def _constant_value(output: Output, _depth: int, memo: _Memo) -> np.ndarray | None:
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
        value = constant_value(source, _depth + 1, memo)
        if value is None or not FOLDED_ELEMENTS.allows(value.size):
            partial = partial_value(output, _depth, memo)
            if partial is None or UNKNOWN in partial:
                return None
            return partial.astype(node.get_output_element_type(output.index).numpy)
        values.append(value)
    if not _small_outputs(node):
        return None
    with np.errstate(all="ignore"):
        raw = op.evaluate(node, *values)
    outputs = raw if isinstance(raw, (tuple, list)) else [raw]
    return np.asarray(outputs[output.index]).astype(node.get_output_element_type(output.index).numpy, copy=False)


def partial_value(output: Output, _depth: int = 0, _memo: _Memo | None = None) -> np.ndarray | None:
    """The value of an integer shape-like tensor with the entries known while building, :data:`UNKNOWN`
    where a dynamic dimension goes (OpenVINO's partial value propagation), or None.

    ``ShapeOf`` of a partly dynamic shape starts such a value; ops that only move entries
    (:data:`_MOVING_OPS`, and ``Convert`` between integer types) carry it along, so
    ``Gather(ShapeOf(x), -1)`` is known when only ``x``'s first dimension is dynamic.
    """
    return _memoized("partial", _partial_value, output, _depth, {} if _memo is None else _memo)


def _partial_value(output: Output, _depth: int, memo: _Memo) -> np.ndarray | None:
    node = output.node
    element_type = node.get_output_element_type(output.index)
    if not element_type.is_integral or _depth > _MAX_DEPTH:
        return None
    if node.type_name == "ShapeOf":
        dims = node.input_value(0).partial_shape.dims
        return np.array([UNKNOWN if d < 0 else d for d in dims], dtype=np.int64)
    if node.type_name == "Convert" and node.input_value(0).element_type.is_integral:
        return partial_value(node.input_value(0), _depth + 1, memo)
    if node.type_name not in _MOVING_OPS or node.op.evaluate is None:
        known = constant_value(output, _depth + 1, memo)
        return None if known is None else known.astype(np.int64)
    values = []
    for index, source in enumerate(node.input_values()):
        moved = index == 0 or node.type_name == "Concat"  # the others are indices, axes, bounds
        value = partial_value(source, _depth + 1, memo) if moved else constant_value(source, _depth + 1, memo)
        if value is None or not FOLDED_ELEMENTS.allows(value.size):
            return None
        values.append(value.astype(np.int64) if moved else value)
    if not _small_outputs(node):
        return None
    raw = node.op.evaluate(node, *values)
    outputs = raw if isinstance(raw, (tuple, list)) else [raw]
    return np.asarray(outputs[output.index]).astype(np.int64)
