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

from hetero_sdk.array_api import namespace
from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import BOOL, ELEMENT_TYPE, LOWER_STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import NUMERIC_TYPES, dim_mul, expect_rank, normalize_axis
from hetero_sdk.ops.folding import UNKNOWN, constant_value, partial_value
from hetero_sdk.ops.inputs import (
    index_input,
    index_operand,
    index_vector,
    known_ints,
    static_length,
    values_or_length,
)
from hetero_sdk.shape import DYNAMIC, PartialShape, broadcast_shapes

__all__ = [
    "BROADCAST", "RANGE", "RESHAPE", "SHAPE_OF", "SQUEEZE", "TILE", "UNSQUEEZE", "broadcast", "range", "reshape",
    "reshape_dims", "shape_of", "squeeze", "squeezed_dims", "tile", "unsqueeze", "unsqueezed_dims",
]  # fmt: skip

_range = builtins.range


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
    return Node(RESHAPE, [as_output(data), index_input(output_shape)], {"special_zero": special_zero}, name)


def squeeze(data: Any, axes: Any = None, name: str | None = None) -> Node:
    """Removes dimensions of size 1 (``Squeeze``).

    :param axes: the axes to remove (each of size 1); None or empty removes every static dimension of
        size 1, and then every dimension must be static.
    """
    inputs = [as_output(data)] if axes is None else [as_output(data), index_input(axes)]
    return Node(SQUEEZE, inputs, {}, name)


def unsqueeze(data: Any, axes: Any, name: str | None = None) -> Node:
    """Inserts dimensions of size 1 at ``axes`` of the output (``Unsqueeze``); repeats count once."""
    return Node(UNSQUEEZE, [as_output(data), index_input(axes)], {}, name)


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
    return Node(BROADCAST, inputs, {"mode": mode}, name)


def tile(data: Any, repeats: Any, name: str | None = None) -> Node:
    """Repeats ``data`` ``repeats[i]`` times along each axis (``Tile``), like ``np.tile``.

    :param repeats: non-negative counts; the shorter of ``repeats`` and the shape is padded with 1 in front.
    """
    return Node(TILE, [as_output(data), index_input(repeats)], {}, name)


def shape_of(data: Any, output_type: Any = Type.i64, name: str | None = None) -> Node:
    """The shape of ``data`` as a 1D tensor (``ShapeOf``, opset3).

    :param output_type: ``i64`` or ``i32``.
    """
    return Node(SHAPE_OF, [as_output(data)], {"output_type": output_type}, name)


# -- shape and type inference -------------------------------------------------------------------------


def _partly_known_reshape(data: PartialShape, pattern: list[int], special_zero: bool) -> list[int]:
    """Reshape's output dims for a target with unknown entries: the known ones, copied zeros, and
    the ``-1`` when every other dimension and the input's element count are known."""
    out = [
        DYNAMIC if v == UNKNOWN else (data[i] if v == 0 and special_zero and i < data.rank else v)
        for i, v in enumerate(pattern)
    ]
    if -1 in out:
        rest = [d for d in out if d != -1]
        total = _product(list(data.dims))
        known_rest = math.prod(rest) if DYNAMIC not in rest else None
        out[out.index(-1)] = total // known_rest if total is not None and known_rest else DYNAMIC
    return out


def _reshape(node: Node) -> list[OutputSpec]:
    special_zero = node.attrs["special_zero"]
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    pattern, length = values_or_length(node, 1, "output_shape")
    if pattern is None:
        partial = partial_value(node.input_value(1))
        if partial is None:
            return [(element_type, [DYNAMIC] * length)]
        return [(element_type, _partly_known_reshape(data, [int(v) for v in partial], special_zero))]
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


def _squeeze(node: Node) -> list[OutputSpec]:
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


def _unsqueeze(node: Node) -> list[OutputSpec]:
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    shape = index_vector(node, 1, "axes", scalar_ok=True)
    axes = known_ints(node, 1)
    if not data.rank_is_static:  # an If's output whose branches differ in rank: the kernel finds it
        return [(element_type, PartialShape.dynamic())]
    if axes is None:
        return [(element_type, [DYNAMIC] * (data.rank + static_length(node, shape, "axes")))]
    rank = data.rank + len(set(axes))
    inserted = {normalize_axis(node, a, rank, "axes value") for a in axes}
    if len(inserted) != len(set(axes)):
        raise node.error(f"axes {axes} name one output axis twice")
    rest = iter(data)
    return [(element_type, [1 if i in inserted else next(rest) for i in _range(rank)])]


def _broadcast(node: Node) -> list[OutputSpec]:
    mode = node.attrs["mode"]
    wanted = 3 if mode == "explicit" else 2
    if node.get_input_size() != wanted:
        raise node.error(f"expects {wanted} input(s), got {node.get_input_size()} (mode={mode!r})")
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


def _tile(node: Node) -> list[OutputSpec]:
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


def _shape_of(node: Node) -> list[OutputSpec]:
    shape = node.input_value(0).partial_shape
    return [(node.attrs["output_type"], [shape.rank if shape.rank_is_static else DYNAMIC])]


# -- kernels: one array-API kernel per op, the shapes computed here once -------------------------------


def _ints(value: Any) -> list[int]:
    return [int(v) for v in np.asarray(value).reshape(-1)]


def reshape_dims(shape: Sequence[int], pattern: Sequence[int], special_zero: bool) -> tuple[int, ...]:
    """The shape Reshape gives a tensor of ``shape`` for ``pattern`` (a ``0`` copies with ``special_zero``,
    one ``-1`` takes what is left)."""
    dims = [shape[i] if v == 0 and special_zero else v for i, v in enumerate(pattern)]
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        dims[dims.index(-1)] = math.prod(shape) // known if known else 1
    return tuple(dims)


def unsqueezed_dims(shape: Sequence[int], axes: Sequence[int]) -> tuple[int, ...]:
    """``shape`` with a 1 inserted at each of ``axes`` (axes of the output; repeats count once)."""
    rank = len(shape) + len(set(axes))
    inserted = {a % rank for a in axes}
    rest = iter(shape)
    return tuple(1 if i in inserted else next(rest) for i in _range(rank))


def _reshape_kernel(node: Node, x: Any, pattern: Any) -> Any:
    return namespace(x).reshape(x, reshape_dims(x.shape, _ints(pattern), node.attrs["special_zero"]))


def squeezed_dims(shape: Sequence[int], axes: Sequence[int] | None) -> tuple[int, ...]:
    """``shape`` without the dimensions at ``axes``, or without every 1 when ``axes`` is None or empty."""
    chosen = {a % len(shape) for a in axes} if axes and shape else set()
    return tuple(d for i, d in enumerate(shape) if (i not in chosen if chosen else d != 1))


def _squeeze_kernel(node: Node, x: Any, *axes: Any) -> Any:
    return namespace(x).reshape(x, squeezed_dims(x.shape, _ints(axes[0]) if axes else None))


def _unsqueeze_kernel(node: Node, x: Any, axes: Any) -> Any:
    return namespace(x).reshape(x, unsqueezed_dims(x.shape, _ints(axes)))


def _broadcast_kernel(node: Node, x: Any, target: Any, *mapping: Any) -> Any:
    xp = namespace(x)
    shape = tuple(_ints(target))
    mode = node.attrs["mode"]
    if mode == "bidirectional":
        shape = np.broadcast_shapes(x.shape, shape)
    elif mode == "explicit":
        aligned = [1] * len(shape)
        for d, a in zip(x.shape, _ints(mapping[0])):
            aligned[a] = d
        x = xp.reshape(x, tuple(aligned))
    return xp.asarray(xp.broadcast_to(x, shape), copy=True)


def _tile_kernel(node: Node, x: Any, repeats: Any) -> Any:
    return namespace(x).tile(x, tuple(_ints(repeats))) if np.asarray(repeats).size else x


def _shape_of_kernel(node: Node, x: Any) -> Any:
    return np.array(x.shape, dtype=node.attrs["output_type"].numpy)  # the shape is known, even while tracing


_DATA = Input("data")
_NUMERIC_CHOICES = tuple(sorted(NUMERIC_TYPES, key=lambda t: t.value))


RESHAPE = define(
    OpDef(
        "Reshape",
        "shape_manipulation",
        _reshape,
        inputs=(_DATA, index_operand("output_shape", "the target shape; one -1 at most")),
        attrs=(Attr("special_zero", BOOL, False, doc="a 0 copies the input dimension at its index"),),
        evaluate=_reshape_kernel,
        doc="Gives data a new shape with the same elements.",
    )
)
SQUEEZE = define(
    OpDef(
        "Squeeze",
        "shape_manipulation",
        _squeeze,
        inputs=(_DATA, index_operand("axes", "the axes of size 1 to remove; all of them when absent", True)),
        evaluate=_squeeze_kernel,
        doc="Removes dimensions of size 1.",
    )
)
UNSQUEEZE = define(
    OpDef(
        "Unsqueeze",
        "shape_manipulation",
        _unsqueeze,
        inputs=(_DATA, index_operand("axes", "the output axes to insert")),
        evaluate=_unsqueeze_kernel,
        doc="Inserts dimensions of size 1.",
    )
)
BROADCAST = define(
    OpDef(
        "Broadcast",
        "shape_manipulation",
        _broadcast,
        inputs=(
            _DATA,
            index_operand("target_shape", "the shape to broadcast to"),
            index_operand("axes_mapping", "explicit mode: the output axis of each data dimension", True),
        ),
        attrs=(Attr("mode", LOWER_STRING, "numpy", ("numpy", "bidirectional", "explicit"), doc="how dims align"),),
        version="opset3",
        evaluate=_broadcast_kernel,
        doc="Broadcasts data to target_shape.",
    )
)
TILE = define(
    OpDef(
        "Tile",
        "shape_manipulation",
        _tile,
        inputs=(_DATA, index_operand("repeats", "how often each axis repeats")),
        evaluate=_tile_kernel,
        doc="Repeats data along each axis, like np.tile.",
    )
)
SHAPE_OF = define(
    OpDef(
        "ShapeOf",
        "shape_manipulation",
        _shape_of,
        inputs=(_DATA,),
        attrs=(Attr("output_type", ELEMENT_TYPE, Type.i64, (Type.i64, Type.i32), doc="i64 or i32"),),
        version="opset3",
        evaluate=_shape_of_kernel,
        doc="The shape of data, as a 1D tensor.",
    )
)


# -- Range: the sequence ``start, start + step, ...`` up to ``stop``.


def range(start: Any, stop: Any, step: Any, output_type: Any, name: str | None = None) -> Node:  # noqa: A001
    """The sequence ``start, start + step, ...`` up to ``stop`` excluded (``Range``, opset4), like ``np.arange``.

    Its length is ``max(ceil((stop - start) / step), 0)``; for an integer ``output_type`` the three
    values are first truncated toward zero.

    :param start: a numeric scalar input or number; likewise ``stop`` and ``step`` (non-zero).
    :param output_type: the element type of the output (any numeric type).
    """
    return Node(RANGE, [as_output(start), as_output(stop), as_output(step)], {"output_type": output_type}, name)


def _range_infer(node: Node) -> list[OutputSpec]:
    output_type = node.attrs["output_type"]
    for i, what in enumerate(("start", "stop", "step")):
        expect_rank(node, i, 0, what=what)
    values = [v for v in (constant_value(node.input_value(i)) for i in builtins.range(3)) if v is not None]
    if len(values) < 3:
        return [(output_type, [DYNAMIC])]
    start, stop, step = _range_bounds(node, *values)
    return [(output_type, [max(math.ceil((stop - start) / step), 0)])]


def _range_bounds(node: Node, *values: Any) -> tuple[float, float, float]:
    """Range's start, stop and step as the output type reads them; at compile time and at run time.
    :raises ModelValidationError: for a step of 0 or a value that is not finite."""
    output_type = node.attrs["output_type"]
    start, stop, step = (float(np.trunc(v) if output_type.is_integral else v) for v in values)
    if step == 0:
        raise node.error(f"step is 0 (after conversion to {output_type.value}), so stop {stop} is never reached")
    if not all(math.isfinite(v) for v in (start, stop, step)):
        raise node.error(f"start {start}, stop {stop} and step {step} must be finite")
    return start, stop, step


def _range_kernel(node: Node, start: Any, stop: Any, step: Any) -> Any:
    first, last, delta = _range_bounds(node, start, stop, step)
    count = max(math.ceil((last - first) / delta), 0)
    if node.attrs["output_type"].is_integral:
        return int(first) + np.arange(count, dtype=np.int64) * int(delta)
    return first + np.arange(count, dtype=np.float64) * delta


RANGE = define(
    OpDef(
        "Range",
        "shape_manipulation",
        _range_infer,
        inputs=tuple(Input(n, NUMERIC_TYPES, decides_shape=True, doc="a scalar") for n in ("start", "stop", "step")),
        attrs=(
            Attr("output_type", ELEMENT_TYPE, choices=tuple(sorted(NUMERIC_TYPES, key=str)), doc="the element type"),
        ),
        version="opset4",
        evaluate=_range_kernel,
        doc="start, start + step, ... up to stop excluded.",
    )
)
