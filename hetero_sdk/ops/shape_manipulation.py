"""Ops that change shapes: Reshape, Squeeze, Unsqueeze, Broadcast, Tile, ShapeOf, Range.

Shape-like operands are inputs, as in OpenVINO; how they are read when known at build time, and what
inference gives when they are not, is described in :mod:`hetero_sdk.ops.inputs`.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.ops.checks import (
    INDEX_TYPES,
    NUMERIC_TYPES,
    dim_mul,
    expect_attr,
    expect_inputs,
    expect_rank,
    expect_type,
    normalize_axis,
)
from hetero_sdk.ops.inputs import bool_attr, index_input, index_vector, known_ints, static_length, values_or_length
from hetero_sdk.ops.registry import OutputSpec, as_output, constant_value, register_op
from hetero_sdk.shape import DYNAMIC, PartialShape, broadcast_shapes

__all__ = ["broadcast", "range", "reshape", "shape_of", "squeeze", "tile", "unsqueeze"]

_range = builtins.range


def _type_attr(node: Node, name: str, allowed: frozenset[Type]) -> Type:
    try:
        value = Type.of(node.attrs.get(name))
    except TypeError:
        value = None
    if value not in allowed:
        names = ", ".join(sorted(t.value for t in allowed))
        raise node.error(f"attribute {name}={node.attrs.get(name)!r} is invalid; expected one of: {names}")
    node.attrs[name] = value
    return value


def _product(dims: Sequence[int]) -> int | None:
    return None if DYNAMIC in dims else math.prod(dims)


# -- factories ----------------------------------------------------------------------------------------


def reshape(data: Any, output_shape: Any, special_zero: bool, name: str | None = None) -> Node:
    """Gives ``data`` a new shape with the same elements (``Reshape``).

    :param output_shape: the target shape, a 1D integer input or list; at most one ``-1``, inferred
        from the element count.
    :param special_zero: when True a ``0`` copies the input dimension at the same index; when False
        it is a dimension of size 0.
    """
    return Node("Reshape", [as_output(data), index_input(output_shape)], {"special_zero": special_zero}, name)


def squeeze(data: Any, axes: Any = None, name: str | None = None) -> Node:
    """Removes dimensions of size 1 (``Squeeze``).

    :param axes: the axes to remove (each of size 1); None or empty removes every static dimension of
        size 1, and then every dimension must be static.
    """
    inputs = [as_output(data)] if axes is None else [as_output(data), index_input(axes)]
    return Node("Squeeze", inputs, {}, name)


def unsqueeze(data: Any, axes: Any, name: str | None = None) -> Node:
    """Inserts dimensions of size 1 at ``axes`` of the output (``Unsqueeze``); repeats count once."""
    return Node("Unsqueeze", [as_output(data), index_input(axes)], {}, name)


def broadcast(
    data: Any, target_shape: Any, axes_mapping: Any = None, mode: str = "numpy", name: str | None = None
) -> Node:
    """Broadcasts ``data`` to ``target_shape`` (``Broadcast``, opset3).

    :param axes_mapping: for ``explicit`` mode, the output axis of each data dimension (increasing).
    :param mode: ``numpy`` (data aligned right, to exactly the target), ``bidirectional`` (numpy rules
        both ways: the output is the broadcast of both shapes) or ``explicit``.
    """
    inputs = [as_output(data), index_input(target_shape)]
    if axes_mapping is not None:
        inputs.append(index_input(axes_mapping))
    return Node("Broadcast", inputs, {"mode": mode.lower()}, name)


def tile(data: Any, repeats: Any, name: str | None = None) -> Node:
    """Repeats ``data`` ``repeats[i]`` times along each axis (``Tile``), like ``np.tile``.

    :param repeats: non-negative counts; the shorter of ``repeats`` and the shape is padded with 1 in front.
    """
    return Node("Tile", [as_output(data), index_input(repeats)], {}, name)


def shape_of(data: Any, output_type: Any = Type.i64, name: str | None = None) -> Node:
    """The shape of ``data`` as a 1D tensor (``ShapeOf``, opset3).

    :param output_type: ``i64`` or ``i32``.
    """
    return Node("ShapeOf", [as_output(data)], {"output_type": output_type}, name)


def range(start: Any, stop: Any, step: Any, output_type: Any, name: str | None = None) -> Node:  # noqa: A001
    """The sequence ``start, start + step, ...`` up to ``stop`` excluded (``Range``, opset4), like ``np.arange``.

    Its length is ``max(ceil((stop - start) / step), 0)``; for an integer ``output_type`` the three
    values are first truncated toward zero.

    :param start: a numeric scalar input or number; likewise ``stop`` and ``step`` (non-zero).
    :param output_type: the element type of the output (any numeric type).
    """
    return Node("Range", [as_output(start), as_output(stop), as_output(step)], {"output_type": output_type}, name)


# -- shape and type inference -------------------------------------------------------------------------


@register_op("Reshape", "shape_manipulation", shape_inputs=(1,))
def _reshape(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 2)
    special_zero = bool_attr(node, "special_zero", False)
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    pattern, length = values_or_length(node, 1, "output_shape")
    if pattern is None:
        return [(element_type, [DYNAMIC] * length)]
    out: list[int] = []
    copied: set[int] = set()
    inferred: int | None = None
    for i, v in enumerate(pattern):
        if v == -1:
            if inferred is not None:
                raise node.error(f"output_shape {pattern} has more than one -1")
            inferred = i
        elif v == 0 and special_zero:
            if i >= data.rank:
                raise node.error(f"output_shape {pattern}: the 0 at index {i} copies a dimension data {data} lacks")
            copied.add(i)
            v = data[i]
        elif v < -1:
            raise node.error(f"output_shape {pattern} has {v}; dimensions must be >= 0, or -1 once")
        out.append(v)
    # Copied dimensions cancel out, so a dynamic one does not make the element count unknown.
    in_rest = _product([d for i, d in enumerate(data) if i not in copied])
    out_rest = math.prod(d for i, d in enumerate(out) if i not in copied and i != inferred)
    if inferred is not None:
        if in_rest is None:
            out[inferred] = DYNAMIC
        elif out_rest == 0 or in_rest % out_rest:
            if in_rest != 0 or out_rest != 0:
                raise node.error(f"cannot reshape {data} to {pattern}: the element counts do not divide")
            out[inferred] = 1
        else:
            out[inferred] = in_rest // out_rest
    elif in_rest is not None and in_rest != out_rest:
        raise node.error(f"cannot reshape {data} to {pattern} (special_zero={special_zero}): element counts differ")
    return [(element_type, out)]


@register_op("Squeeze", "shape_manipulation", shape_inputs=(1,))
def _squeeze(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 1, 2)
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    axes: list[int] | None = []
    if node.get_input_size() == 2:
        shape = index_vector(node, 1, "axes", scalar_ok=True)
        axes = known_ints(node, 1)
        length = len(axes) if axes is not None else static_length(node, shape, "axes")
        if axes is None and length:
            if length > data.rank:
                raise node.error(f"axes has {length} values but data {data} has rank {data.rank}")
            return [(element_type, [DYNAMIC] * (data.rank - length))]
    if not axes:
        if data.is_dynamic:
            raise node.error(f"without axes the dimensions of size 1 in {data} are unknown; pass axes")
        return [(element_type, [d for d in data if d != 1])]
    removed = {normalize_axis(node, a, data.rank, "axes value") for a in axes}
    for i in sorted(removed):
        if data[i] not in (1, DYNAMIC):
            raise node.error(f"cannot squeeze dimension {i} of data {data}: its size is {data[i]}, not 1")
    return [(element_type, [d for i, d in enumerate(data) if i not in removed])]


@register_op("Unsqueeze", "shape_manipulation", shape_inputs=(1,))
def _unsqueeze(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 2)
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    shape = index_vector(node, 1, "axes", scalar_ok=True)
    axes = known_ints(node, 1)
    if axes is None:
        return [(element_type, [DYNAMIC] * (data.rank + static_length(node, shape, "axes")))]
    rank = data.rank + len(set(axes))
    inserted = {normalize_axis(node, a, rank, "axes value") for a in axes}
    if len(inserted) != len(set(axes)):
        raise node.error(f"axes {axes} name one output axis twice")
    rest = iter(data)
    return [(element_type, [1 if i in inserted else next(rest) for i in _range(rank)])]


@register_op(
    "Broadcast",
    "shape_manipulation",
    "opset3",
    shape_inputs=(
        1,
        2,
    ),
)
def _broadcast(node: Node) -> list[OutputSpec]:
    mode = expect_attr(node, "mode", ("numpy", "bidirectional", "explicit"))
    expect_inputs(node, *((3,) if mode == "explicit" else (2,)))
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    target, length = values_or_length(node, 1, "target_shape")
    if target is not None and any(t < 0 for t in target):
        raise node.error(f"target_shape {target} has negative dimensions")
    if mode == "bidirectional":
        if target is None:
            rank = max(length, data.rank)
            return [(element_type, [DYNAMIC] * (rank - data.rank) + [d if d > 1 else DYNAMIC for d in data])]
        shape = broadcast_shapes(data, PartialShape(target))
        if shape is None:
            raise node.error(f"data {data} and target_shape {target} do not broadcast (bidirectional)")
        return [(element_type, shape)]
    if mode == "numpy":
        if length < data.rank:
            raise node.error(f"target_shape has {length} dims, fewer than the rank of data {data}")
        mapping = list(_range(length - data.rank, length))
    else:
        index_vector(node, 2, "axes_mapping")
        known = known_ints(node, 2)
        if known is None:
            return [(element_type, target if target is not None else [DYNAMIC] * length)]
        mapping = known
        if len(mapping) != data.rank or sorted(set(mapping)) != mapping or not all(0 <= a < length for a in mapping):
            raise node.error(
                f"axes_mapping {mapping} must give each of the {data.rank} data dims an increasing axis of "
                f"the {length}-dim target"
            )
    out = list(target) if target is not None else [DYNAMIC] * length
    for d, axis in zip(data, mapping):
        if target is None:
            out[axis] = d if d > 1 else DYNAMIC
        elif d not in (1, DYNAMIC, target[axis]):
            raise node.error(f"data {data} does not broadcast to target_shape {target} ({mode}, axes {mapping})")
    return [(element_type, out)]


@register_op("Tile", "shape_manipulation", shape_inputs=(1,))
def _tile(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 2)
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    repeats, length = values_or_length(node, 1, "repeats")
    rank = max(data.rank, length)
    dims = [1] * (rank - data.rank) + list(data)
    if repeats is None:
        return [(element_type, dims[: rank - length] + [DYNAMIC] * length)]
    if any(r < 0 for r in repeats):
        raise node.error(f"repeats {repeats} must be >= 0")
    return [(element_type, [dim_mul(d, r) for d, r in zip(dims, [1] * (rank - length) + repeats)])]


@register_op("ShapeOf", "shape_manipulation", "opset3")
def _shape_of(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 1)
    node.attrs.setdefault("output_type", Type.i64)
    output_type = _type_attr(node, "output_type", INDEX_TYPES)
    return [(output_type, [node.input_value(0).partial_shape.rank])]


@register_op(
    "Range",
    "shape_manipulation",
    "opset4",
    shape_inputs=(
        0,
        1,
        2,
    ),
)
def _range_infer(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 3)
    output_type = _type_attr(node, "output_type", NUMERIC_TYPES)
    for i, what in enumerate(("start", "stop", "step")):
        expect_type(node, i, NUMERIC_TYPES, what)
        expect_rank(node, i, 0, what=what)
    values = [v for v in (constant_value(node.input_value(i)) for i in _range(3)) if v is not None]
    if len(values) < 3:
        return [(output_type, [DYNAMIC])]
    start, stop, step = (float(np.trunc(v) if output_type.is_integral else v) for v in values)
    if step == 0:
        raise node.error(f"step is 0 (after conversion to {output_type.value})")
    if not all(math.isfinite(v) for v in (start, stop, step)):
        raise node.error(f"start {start}, stop {stop} and step {step} must be finite")
    return [(output_type, [max(math.ceil((stop - start) / step), 0)])]
