"""Ops that move data or change shapes: Reshape, Transpose, Concat, Split, Slice, Gather, Pad, Range...

Shape-like operands (target shapes, axes, pads, slice bounds) are inputs, as in OpenVINO; factories
also take Python lists and ints and turn them into i64 constants. When such an input is known at build
time (see :func:`~hetero_sdk.ops.registry.constant_value`), inference gives exact dimensions; otherwise
it gives the rank, with ``-1`` for each dimension it cannot know.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node, Output
from hetero_sdk.ops.basic import constant
from hetero_sdk.ops.checks import (
    INDEX_TYPES,
    NUMERIC_TYPES,
    dim_mul,
    expect_attr,
    expect_inputs,
    expect_rank,
    expect_same_types,
    expect_type,
    merge_dims,
    normalize_axis,
)
from hetero_sdk.ops.registry import OutputSpec, as_output, constant_value, register_op
from hetero_sdk.shape import DYNAMIC, PartialShape, broadcast_shapes

__all__ = [
    "broadcast", "concat", "gather", "pad", "range", "reshape", "shape_of", "slice", "split", "squeeze",
    "strided_slice", "tile", "transpose", "unsqueeze", "variadic_split",
]  # fmt: skip

INTEGER_TYPES = frozenset({Type.i8, Type.u8, Type.i32, Type.i64})
_range, _slice = builtins.range, builtins.slice


# -- helpers shared with the reduction family ---------------------------------------------------------


def index_input(value: Any) -> Output:
    """An index-like operand as an Output: ints and lists or tuples of ints become i64 constants."""
    if isinstance(value, (list, tuple, int, np.integer)) and not isinstance(value, bool):
        return constant(np.asarray(value, dtype=np.int64)).output(0)
    return as_output(value)


def known_ints(node: Node, index: int) -> list[int] | None:
    """Input ``index`` flattened to a list of ints when known at build time, else None."""
    value = constant_value(node.input_value(index))
    return None if value is None else [int(v) for v in np.asarray(value).reshape(-1)]


def static_length(node: Node, shape: PartialShape, what: str) -> int:
    """The number of values of a scalar or 1D operand whose values are unknown, raising when dynamic."""
    length = 1 if shape.rank == 0 else shape[0]
    if length == DYNAMIC:
        raise node.error(
            f"{what} has a dynamic length and values unknown at build time, so the output rank cannot be "
            "inferred; give it a static length or constant values"
        )
    return length


def bool_attr(node: Node, name: str, default: bool) -> bool:
    """Attribute ``name`` (set to ``default`` when absent), raising unless it is a bool."""
    value = node.attrs.setdefault(name, default)
    if not isinstance(value, (bool, np.bool_)):
        raise node.error(f"attribute {name}={value!r} must be True or False")
    node.attrs[name] = bool(value)
    return bool(value)


def _vector(node: Node, index: int, what: str, scalar_ok: bool = False) -> PartialShape:
    expect_type(node, index, INTEGER_TYPES, what)
    return expect_rank(node, index, *((0, 1) if scalar_ok else (1,)), what=what)


def _values_or_length(node: Node, index: int, what: str) -> tuple[list[int] | None, int]:
    shape = _vector(node, index, what)
    values = known_ints(node, index)
    return values, len(values) if values is not None else static_length(node, shape, what)


def _scalar_axis(
    node: Node, index: int, rank: int, types: frozenset[Type] = INTEGER_TYPES, one_element_ok: bool = False
) -> int | None:
    expect_type(node, index, types, "axis")
    shape = node.input_value(index).partial_shape
    if shape.rank != 0 and not (one_element_ok and shape.dims in ((1,), (DYNAMIC,))):
        raise node.error(f"axis must be a scalar, got shape {shape}")
    value = known_ints(node, index)
    return None if value is None else normalize_axis(node, value[0], rank)


def _int_attr(node: Node, name: str, default: int | None = None) -> int:
    value = node.attrs.setdefault(name, default) if default is not None else node.attrs.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise node.error(f"attribute {name}={value!r} must be an integer")
    node.attrs[name] = int(value)
    return int(value)


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


def _mask(node: Node, name: str, length: int) -> list[int]:
    value = node.attrs.setdefault(name, [])
    try:
        bits = [int(v) for v in value]
    except (TypeError, ValueError):
        raise node.error(f"attribute {name}={value!r} must be a list of 0 and 1") from None
    if any(b not in (0, 1) for b in bits):
        raise node.error(f"attribute {name}={bits} must hold only 0 and 1")
    node.attrs[name] = bits
    return (bits + [0] * length)[:length]


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


def transpose(data: Any, input_order: Any, name: str | None = None) -> Node:
    """Permutes dimensions (``Transpose``): output dim ``i`` is input dim ``input_order[i]``.

    :param input_order: a permutation of ``0..rank-1``; empty reverses the dimensions.
    """
    return Node("Transpose", [as_output(data), index_input(input_order)], {}, name)


def concat(nodes: Sequence[Any], axis: int, name: str | None = None) -> Node:
    """Joins tensors along ``axis`` (``Concat``); the other dimensions must match.

    :param axis: in ``[-rank, rank-1]``.
    """
    return Node("Concat", [as_output(n) for n in nodes], {"axis": axis}, name)


def split(data: Any, axis: Any, num_splits: int, name: str | None = None) -> Node:
    """Splits ``data`` into ``num_splits`` equal parts along ``axis`` (``Split``): one output per part.

    :param axis: a scalar integer input or int.
    :param num_splits: how many parts; must divide the dimension at ``axis``.
    """
    return Node("Split", [as_output(data), index_input(axis)], {"num_splits": num_splits}, name)


def variadic_split(data: Any, axis: Any, split_lengths: Any, name: str | None = None) -> Node:
    """Splits ``data`` along ``axis`` into parts of ``split_lengths`` (``VariadicSplit``).

    :param split_lengths: one length per output; one of them may be ``-1`` (the rest of the dimension).
    """
    return Node("VariadicSplit", [as_output(data), index_input(axis), index_input(split_lengths)], {}, name)


def slice(data: Any, start: Any, stop: Any, step: Any, axes: Any = None, name: str | None = None) -> Node:  # noqa: A001
    """Numpy-style ``data[start:stop:step]`` along ``axes`` (``Slice``, opset8).

    :param start: 1D start indices; negative count from the end; out-of-range values are clamped.
    :param stop: 1D stop indices (exclusive), clamped likewise.
    :param step: 1D non-zero steps; negative steps walk backwards.
    :param axes: the axes ``start``... apply to (default ``0..len(start)-1``), unique.
    """
    inputs = [as_output(data), index_input(start), index_input(stop), index_input(step)]
    if axes is not None:
        inputs.append(index_input(axes))
    return Node("Slice", inputs, {}, name)


def strided_slice(
    data: Any,
    begin: Any,
    end: Any,
    strides: Any,
    begin_mask: Sequence[int],
    end_mask: Sequence[int],
    new_axis_mask: Sequence[int] = (),
    shrink_axis_mask: Sequence[int] = (),
    ellipsis_mask: Sequence[int] = (),
    name: str | None = None,
) -> Node:
    """TensorFlow-style strided slice (``StridedSlice``). Entry ``i`` of ``begin``/``end``/``strides``
    and of the masks (lists of 0 and 1, shorter ones padded with 0) describes one index of the slice.

    :param strides: 1D non-zero strides, or None for ones.
    :param begin_mask: 1 ignores ``begin[i]`` (the slice starts at the beginning, or end for a negative stride).
    :param end_mask: 1 ignores ``end[i]``.
    :param new_axis_mask: 1 inserts a dimension of size 1 (``np.newaxis``).
    :param shrink_axis_mask: 1 takes the single index ``begin[i]`` and removes the dimension.
    :param ellipsis_mask: 1 (at most once) stands for all dimensions not otherwise indexed (``...``).
    """
    inputs = [as_output(data), index_input(begin), index_input(end)]
    if strides is not None:
        inputs.append(index_input(strides))
    attrs = {
        "begin_mask": list(begin_mask), "end_mask": list(end_mask), "new_axis_mask": list(new_axis_mask),
        "shrink_axis_mask": list(shrink_axis_mask), "ellipsis_mask": list(ellipsis_mask),
    }  # fmt: skip
    return Node("StridedSlice", inputs, attrs, name)


def gather(data: Any, indices: Any, axis: Any, batch_dims: int = 0, name: str | None = None) -> Node:
    """Takes slices of ``data`` at ``indices`` along ``axis`` (``Gather``, opset8).

    :param indices: i32/i64 indices in ``[-dim, dim-1]``; out-of-range indices give zeros.
    :param axis: a scalar input or int; normalized against the rank of ``data``.
    :param batch_dims: how many leading dimensions ``data`` and ``indices`` share as batches;
        negative counts from the rank of ``indices``; at most ``axis``.
    """
    return Node("Gather", [as_output(data), index_input(indices), index_input(axis)], {"batch_dims": batch_dims}, name)


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


def pad(
    data: Any,
    pads_begin: Any,
    pads_end: Any,
    pad_mode: str = "constant",
    pad_value: Any = None,
    name: str | None = None,
) -> Node:
    """Pads (or, with negative pads, crops) every axis (``Pad``, opset12); dims become ``max(b + d + e, 0)``.

    :param pads_begin: one count per axis, added before the data.
    :param pads_end: one count per axis, added after.
    :param pad_mode: ``constant``, ``edge`` (repeat the border), ``reflect`` (mirror without the border;
        pads below the dimension) or ``symmetric`` (mirror with it; pads up to the dimension).
    :param pad_value: the scalar for ``constant`` mode, of the data's type (0 by default); other modes
        ignore it.
    """
    source = as_output(data)
    inputs = [source, index_input(pads_begin), index_input(pads_end)]
    if pad_value is not None:
        inputs.append(as_output(pad_value, like=source))
    return Node("Pad", inputs, {"pad_mode": pad_mode.lower()}, name)


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


@register_op("Reshape", "shape_manipulation")
def _reshape(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 2)
    special_zero = bool_attr(node, "special_zero", False)
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    pattern, length = _values_or_length(node, 1, "output_shape")
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


@register_op("Transpose", "shape_manipulation")
def _transpose(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 2)
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    length = _vector(node, 1, "input_order")[0]
    order = known_ints(node, 1)
    if order == [] or length == 0:
        order = list(_range(data.rank - 1, -1, -1))
    if order is None:
        if length not in (DYNAMIC, data.rank):
            raise node.error(f"input_order has {length} values; data {data} has rank {data.rank}")
        return [(element_type, [DYNAMIC] * data.rank)]
    if sorted(order) != list(_range(data.rank)):
        raise node.error(f"input_order {order} is not a permutation of 0..{data.rank - 1} (data {data})")
    return [(element_type, [data[i] for i in order])]


@register_op("Concat", "shape_manipulation")
def _concat(node: Node) -> list[OutputSpec]:
    count = node.get_input_size()
    if count == 0:
        raise node.error("expects at least one input")
    element_type = expect_same_types(node, *_range(count))
    shapes = [node.input_value(i).partial_shape for i in _range(count)]
    rank = shapes[0].rank
    if rank == 0 or any(s.rank != rank for s in shapes):
        raise node.error(f"inputs must share one non-zero rank, got {', '.join(map(str, shapes))}")
    axis = normalize_axis(node, _int_attr(node, "axis"), rank)
    out = list(shapes[0])
    for k, shape in enumerate(shapes[1:], 1):
        for i in _range(rank):
            if i != axis:
                out[i] = merge_dims(node, out[i], shape[i], f"input {k} dim {i} ({shape}) differs from {shapes[0]}")
    sizes = [s[axis] for s in shapes]
    out[axis] = DYNAMIC if DYNAMIC in sizes else sum(sizes)
    return [(element_type, out)]


@register_op("Split", "shape_manipulation")
def _split(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 2)
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    parts = _int_attr(node, "num_splits")
    if parts < 1:
        raise node.error(f"attribute num_splits={parts} must be >= 1")
    axis = _scalar_axis(node, 1, data.rank)
    if axis is None:
        return [(element_type, [DYNAMIC] * data.rank)] * parts
    size = data[axis]
    if size != DYNAMIC and size % parts:
        raise node.error(f"dimension {axis} of data {data} ({size}) is not divisible by num_splits={parts}")
    out = list(data)
    out[axis] = DYNAMIC if size == DYNAMIC else size // parts
    return [(element_type, out)] * parts


@register_op("VariadicSplit", "shape_manipulation")
def _variadic_split(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 3)
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    axis = _scalar_axis(node, 1, data.rank, one_element_ok=True)
    lengths, count = _values_or_length(node, 2, "split_lengths")
    if axis is None or lengths is None:
        dims = [DYNAMIC] * data.rank
        return [(element_type, dims if axis is None else [*data[:axis], DYNAMIC, *data[axis + 1 :]])] * count
    if lengths.count(-1) > 1 or any(v < -1 for v in lengths):
        raise node.error(f"split_lengths {lengths} must be >= 0, with at most one -1")
    size, known = data[axis], sum(v for v in lengths if v != -1)
    if size != DYNAMIC and (known > size or (-1 not in lengths and known != size)):
        raise node.error(f"split_lengths {lengths} do not add up to dimension {axis} of data {data} ({size})")
    rest = DYNAMIC if size == DYNAMIC else size - known
    return [(element_type, [*data[:axis], rest if v == -1 else v, *data[axis + 1 :]]) for v in lengths]


@register_op("Slice", "shape_manipulation", "opset8")
def _slice_infer(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 4, 5)
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    names = ("start", "stop", "step", "axes")[: node.get_input_size() - 1]
    lengths = {_vector(node, i + 1, n)[0] for i, n in enumerate(names)} - {DYNAMIC}
    if len(lengths) > 1:
        raise node.error(f"{', '.join(names)} must have one length, got {sorted(lengths)}")
    start, stop, step = (known_ints(node, i) for i in (1, 2, 3))
    if step is not None and 0 in step:
        raise node.error(f"step {step} must not contain 0")
    count = next(iter(lengths)) if lengths else DYNAMIC
    axes = known_ints(node, 4) if len(names) == 4 else (None if count == DYNAMIC else list(_range(count)))
    if axes is None:
        return [(element_type, [DYNAMIC] * data.rank)]
    normalized = [normalize_axis(node, a, data.rank, "axes value") for a in axes]
    if len(set(normalized)) != len(normalized):
        raise node.error(f"axes {axes} must be unique")
    out = list(data)
    for k, axis in enumerate(normalized):
        if start is None or stop is None or step is None or data[axis] == DYNAMIC:
            out[axis] = DYNAMIC
        else:
            out[axis] = len(_range(*_slice(start[k], stop[k], step[k]).indices(data[axis])))
    return [(element_type, out)]


@register_op("StridedSlice", "shape_manipulation")
def _strided_slice(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 3, 4)
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    names = ("begin", "end", "strides")[: node.get_input_size() - 1]
    lengths = {_vector(node, i + 1, n)[0] for i, n in enumerate(names)} - {DYNAMIC}
    if len(lengths) > 1:
        raise node.error(f"{', '.join(names)} must have one length, got {sorted(lengths)}")
    begin, end = known_ints(node, 1), known_ints(node, 2)
    count = next(iter(lengths)) if lengths else static_length(node, node.input_value(1).partial_shape, "begin")
    strides = known_ints(node, 3) if len(names) == 3 else [1] * count
    if strides is not None and 0 in strides:
        raise node.error(f"strides {strides} must not contain 0")
    begin_mask, end_mask, new_axis, shrink, ellipsis = (
        _mask(node, m, count) for m in ("begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask", "ellipsis_mask")
    )
    if sum(ellipsis) > 1:
        raise node.error(f"ellipsis_mask {node.attrs['ellipsis_mask']} may set one bit at most")
    consumed = sum(1 for i in _range(count) if not ellipsis[i] and not new_axis[i])
    if consumed > data.rank:
        raise node.error(f"{consumed} dimensions are indexed but data {data} has rank {data.rank}")
    out: list[int] = []
    dim = 0
    for i in _range(count):
        if ellipsis[i]:
            out.extend(data[dim : dim + data.rank - consumed])
            dim += data.rank - consumed
        elif new_axis[i]:
            out.append(1)
        elif shrink[i]:
            size = data[dim]
            if begin is not None and size != DYNAMIC and not -size <= begin[i] < size:
                raise node.error(f"shrink_axis_mask takes index {begin[i]} of dimension {dim} of data {data}")
            dim += 1
        else:
            first = None if begin_mask[i] or begin is None else begin[i]
            last = None if end_mask[i] or end is None else end[i]
            unknown = (begin is None and not begin_mask[i]) or (end is None and not end_mask[i])
            if unknown or strides is None or data[dim] == DYNAMIC:
                out.append(DYNAMIC)
            else:
                out.append(len(_range(*_slice(first, last, strides[i]).indices(data[dim]))))
            dim += 1
    return [(element_type, out + list(data[dim:]))]


@register_op("Gather", "shape_manipulation", "opset8")
def _gather(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 3)
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    indices = node.input_value(1).partial_shape
    expect_type(node, 1, INDEX_TYPES, "indices")
    batch_dims = _int_attr(node, "batch_dims", 0)
    limit = min(data.rank, indices.rank)
    if not -limit <= batch_dims <= limit:
        raise node.error(f"attribute batch_dims={batch_dims} is out of range for data {data}, indices {indices}")
    batch = batch_dims + indices.rank if batch_dims < 0 else batch_dims
    axis = _scalar_axis(node, 2, data.rank, INDEX_TYPES, one_element_ok=True)
    if axis is not None and batch > axis:
        raise node.error(f"batch_dims={batch_dims} must not exceed axis {axis}")
    lead = [
        merge_dims(node, data[i], indices[i], f"batch dim {i} of data {data}, indices {indices}") for i in _range(batch)
    ]
    if axis is None:
        return [(element_type, lead + [DYNAMIC] * (data.rank + indices.rank - 1 - 2 * batch))]
    return [(element_type, [*lead, *data[batch:axis], *indices[batch:], *data[axis + 1 :]])]


@register_op("Squeeze", "shape_manipulation")
def _squeeze(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 1, 2)
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    axes: list[int] | None = []
    if node.get_input_size() == 2:
        shape = _vector(node, 1, "axes", scalar_ok=True)
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


@register_op("Unsqueeze", "shape_manipulation")
def _unsqueeze(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 2)
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    shape = _vector(node, 1, "axes", scalar_ok=True)
    axes = known_ints(node, 1)
    if axes is None:
        return [(element_type, [DYNAMIC] * (data.rank + static_length(node, shape, "axes")))]
    rank = data.rank + len(set(axes))
    inserted = {normalize_axis(node, a, rank, "axes value") for a in axes}
    if len(inserted) != len(set(axes)):
        raise node.error(f"axes {axes} name one output axis twice")
    rest = iter(data)
    return [(element_type, [1 if i in inserted else next(rest) for i in _range(rank)])]


@register_op("Broadcast", "shape_manipulation", "opset3")
def _broadcast(node: Node) -> list[OutputSpec]:
    mode = expect_attr(node, "mode", ("numpy", "bidirectional", "explicit"))
    expect_inputs(node, *((3,) if mode == "explicit" else (2,)))
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    target, length = _values_or_length(node, 1, "target_shape")
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
        _vector(node, 2, "axes_mapping")
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


@register_op("Tile", "shape_manipulation")
def _tile(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 2)
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    repeats, length = _values_or_length(node, 1, "repeats")
    rank = max(data.rank, length)
    dims = [1] * (rank - data.rank) + list(data)
    if repeats is None:
        return [(element_type, dims[: rank - length] + [DYNAMIC] * length)]
    if any(r < 0 for r in repeats):
        raise node.error(f"repeats {repeats} must be >= 0")
    return [(element_type, [dim_mul(d, r) for d, r in zip(dims, [1] * (rank - length) + repeats)])]


_PAD_LIMITS = {"edge": (1, None), "reflect": (1, -1), "symmetric": (1, 0)}
"""Per pad mode: the size a padded dimension needs, and the most a pad may exceed it by."""


@register_op("Pad", "shape_manipulation", "opset12")
def _pad(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 3, 4)
    mode = expect_attr(node, "pad_mode", ("constant", "edge", "reflect", "symmetric"))
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    if node.get_input_size() == 4:
        expect_same_types(node, 0, 3)
        expect_rank(node, 3, 0, what="pad_value")
    begin, end = (_values_or_length(node, i, n)[0] for i, n in ((1, "pads_begin"), (2, "pads_end")))
    for pads, what in ((begin, "pads_begin"), (end, "pads_end")):
        if pads is not None and len(pads) != data.rank:
            raise node.error(f"{what} {pads} must have one value per dimension of data {data}")
    if begin is None or end is None:
        return [(element_type, [DYNAMIC] * data.rank)]
    out = []
    for i, (d, b, e) in enumerate(zip(data, begin, end)):
        if d == DYNAMIC:
            out.append(DYNAMIC)
            continue
        need, over = _PAD_LIMITS.get(mode, (0, None))
        if max(b, e) > 0 and (d < need or (over is not None and max(b, e) > d + over)):
            raise node.error(f"pad_mode={mode!r} cannot pad dimension {i} of data {data} by {b}, {e}")
        out.append(max(d + b + e, 0))
    return [(element_type, out)]


@register_op("ShapeOf", "shape_manipulation", "opset3")
def _shape_of(node: Node) -> list[OutputSpec]:
    expect_inputs(node, 1)
    node.attrs.setdefault("output_type", Type.i64)
    output_type = _type_attr(node, "output_type", INDEX_TYPES)
    return [(output_type, [node.input_value(0).partial_shape.rank])]


@register_op("Range", "shape_manipulation", "opset4")
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
