"""Ops that move data: Transpose, Concat, Split, VariadicSplit, Gather, GatherElements, Pad, DepthToSpace,
SpaceToDepth (slicing is in :mod:`.slicing`).

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
from hetero_sdk.graph.limits import LISTED_VALUES
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import INT, LOWER_STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import (
    INDEX_TYPES,
    dim_mul,
    expect_rank,
    expect_same_types,
    expect_type,
    merge_dims,
    normalize_axis,
)
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.ops.inputs import INTEGER_TYPES, index_input, index_operand, index_vector, known_ints, values_or_length
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = [
    "CONCAT", "DEPTH_TO_SPACE", "GATHER", "GATHER_ELEMENTS", "PAD", "SPACE_TO_DEPTH", "SPLIT", "TRANSPOSE",
    "VARIADIC_SPLIT", "concat", "depth_to_space", "gather", "gather_elements", "pad", "space_to_depth", "split",
    "split_bounds", "transpose", "variadic_split",
]  # fmt: skip

# -- The array-API kernels of the movement ops, shared by every device (numpy for TEMPLATE and folding,
# ``jax.numpy`` for XLA). Index-like operands (orders, axes, bounds, pads) are numpy arrays here, even
# while XLA traces: their values decide the output shapes.


def _ints(value: Any) -> list[int]:
    return [int(v) for v in np.asarray(value).reshape(-1)]


def _along(x: Any, axis: int, part: slice) -> Any:
    return x[(slice(None),) * axis + (part,)]


def split_bounds(size: int, lengths: list[int]) -> list[tuple[int, int]]:
    """The ``[begin, end)`` of each part when a dimension of ``size`` is split into ``lengths`` (one may
    be ``-1``: what the others leave)."""
    if -1 in lengths:
        lengths = list(lengths)
        lengths[lengths.index(-1)] = size - sum(v for v in lengths if v != -1)
    ends = np.cumsum(lengths).tolist()
    return list(zip([0, *ends[:-1]], ends))


def _transpose_kernel(node: Node, x: Any, order: Any) -> Any:
    return namespace(x).permute_dims(x, tuple(_ints(order)) or tuple(range(x.ndim - 1, -1, -1)))


def _concat_kernel(node: Node, *xs: Any) -> Any:
    return namespace(*xs).concat(xs, axis=node.attrs["axis"])


def _split_kernel(node: Node, x: Any, axis: Any) -> tuple[Any, ...]:
    dim = _ints(axis)[0] % x.ndim
    parts = node.attrs["num_splits"]
    step = x.shape[dim] // parts
    return tuple(_along(x, dim, slice(k * step, (k + 1) * step)) for k in range(parts))


def _variadic_split_kernel(node: Node, x: Any, axis: Any, lengths: Any) -> tuple[Any, ...]:
    dim = _ints(axis)[0] % x.ndim
    return tuple(_along(x, dim, slice(b, e)) for b, e in split_bounds(x.shape[dim], _ints(lengths)))


def _gather_kernel(node: Node, x: Any, indices: Any, axis: Any) -> Any:
    """Gather with batches, one ``take`` per batch entry; out-of-range indices give zeros."""
    xp = namespace(x, indices)
    batch = node.attrs["batch_dims"]
    batch = batch + indices.ndim if batch < 0 else batch
    dim = _ints(axis)[0] % x.ndim
    size = x.shape[dim]
    valid = (indices >= -size) & (indices < size)
    safe = xp.where(valid, indices, 0)
    safe = xp.where(safe < 0, safe + size, safe)
    lead = x.shape[:batch]
    count = math.prod(lead)
    flat_x = xp.reshape(x, (count, *x.shape[batch:]))
    flat_i = xp.reshape(safe, (count, *indices.shape[batch:]))
    tail = (*x.shape[batch:dim], *indices.shape[batch:], *x.shape[dim + 1 :])
    if count and size:
        out = xp.stack([_take(xp, flat_x[k], flat_i[k], dim - batch) for k in range(count)])
    else:
        out = xp.zeros((count, *tail), dtype=x.dtype)
    mask_shape = (count,) + (1,) * (dim - batch) + tuple(indices.shape[batch:]) + (1,) * (x.ndim - dim - 1)
    out = xp.where(xp.reshape(valid, mask_shape), out, xp.zeros((), dtype=x.dtype))
    return xp.reshape(out, (*lead, *tail))


def _gather_elements_kernel(node: Node, x: Any, indices: Any) -> Any:
    """Element ``[i, j, ...]`` of the output is ``x`` at ``indices[i, j, ...]`` along ``axis`` and at
    ``i, j, ...`` elsewhere; negative indices count from the end."""
    xp = namespace(x, indices)
    axis = node.attrs["axis"] % x.ndim
    size = x.shape[axis]
    safe = xp.where(indices < 0, indices + size, indices)
    window = tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(indices.shape))
    return xp.take_along_axis(x[window], safe, axis=axis)


def _take(xp: Any, data: Any, where: Any, axis: int) -> Any:
    flat = xp.reshape(where, (-1,))
    taken = xp.take(data, flat, axis=axis)
    return xp.reshape(taken, (*data.shape[:axis], *where.shape, *data.shape[axis + 1 :]))


def _pad_kernel(node: Node, x: Any, begin: Any, end: Any, *value: Any) -> Any:
    """Pads with ``pad`` of numpy or ``jax.numpy`` (the array API has none); negative pads crop after
    padding, so reflect and symmetric mirror the original borders, as OpenVINO does."""
    xp = namespace(x)
    b, e = _ints(begin), _ints(end)
    widths = [(max(p, 0), max(q, 0)) for p, q in zip(b, e)]
    mode = node.attrs["pad_mode"]
    if mode == "constant":
        fill = xp.reshape(value[0], ()) if value else xp.zeros((), dtype=x.dtype)
        padded = xp.pad(x, widths, mode="constant", constant_values=fill)
    else:
        padded = xp.pad(x, widths, mode=mode)
    crop = tuple(slice(max(-p, 0), max(n - max(-q, 0), 0)) for p, q, n in zip(b, e, padded.shape))
    return padded[crop]


_slice = builtins.slice


def _scalar_axis(
    node: Node, index: int, rank: int, types: frozenset[Type] = INTEGER_TYPES, one_element_ok: bool = False
) -> int | None:
    expect_type(node, index, types, "axis")
    shape = node.input_value(index).partial_shape
    if shape.rank != 0 and not (one_element_ok and shape.dims in ((1,), (DYNAMIC,))):
        raise node.error(f"axis must be a scalar, got shape {shape}")
    value = known_ints(node, index)
    return None if value is None else normalize_axis(node, value[0], rank)


# -- factories ----------------------------------------------------------------------------------------


def transpose(data: Any, input_order: Any, name: str | None = None) -> Node:
    """Permutes dimensions (``Transpose``): output dim ``i`` is input dim ``input_order[i]``.

    :param input_order: a permutation of ``0..rank-1``; empty reverses the dimensions.
    """
    return Node(TRANSPOSE, [as_output(data), index_input(input_order)], {}, name)


def concat(nodes: Sequence[Any], axis: int, name: str | None = None) -> Node:
    """Joins tensors along ``axis`` (``Concat``); the other dimensions must match.

    :param axis: in ``[-rank, rank-1]``.
    """
    return Node(CONCAT, [as_output(n) for n in nodes], {"axis": axis}, name)


def split(data: Any, axis: Any, num_splits: int, name: str | None = None) -> Node:
    """Splits ``data`` into ``num_splits`` equal parts along ``axis`` (``Split``): one output per part.

    :param axis: a scalar integer input or int.
    :param num_splits: how many parts; must divide the dimension at ``axis``.
    """
    return Node(SPLIT, [as_output(data), index_input(axis)], {"num_splits": num_splits}, name)


def variadic_split(data: Any, axis: Any, split_lengths: Any, name: str | None = None) -> Node:
    """Splits ``data`` along ``axis`` into parts of ``split_lengths`` (``VariadicSplit``).

    :param split_lengths: one length per output; one of them may be ``-1`` (the rest of the dimension).
    """
    return Node(VARIADIC_SPLIT, [as_output(data), index_input(axis), index_input(split_lengths)], {}, name)


def gather(data: Any, indices: Any, axis: Any, batch_dims: int = 0, name: str | None = None) -> Node:
    """Takes slices of ``data`` at ``indices`` along ``axis`` (``Gather``, opset8).

    :param indices: i32/i64 indices in ``[-dim, dim-1]``; out-of-range indices give zeros.
    :param axis: a scalar input or int; normalized against the rank of ``data``.
    :param batch_dims: how many leading dimensions ``data`` and ``indices`` share as batches;
        negative counts from the rank of ``indices``; at most ``axis``.
    """
    return Node(GATHER, [as_output(data), index_input(indices), index_input(axis)], {"batch_dims": batch_dims}, name)


def gather_elements(data: Any, indices: Any, axis: int = 0, name: str | None = None) -> Node:
    """Takes one element of ``data`` per element of ``indices`` along ``axis`` (``GatherElements``,
    opset6): ``out[i][j] = data[indices[i][j]][j]`` for ``axis=0``.

    :param indices: i32/i64, of ``data``'s rank; along ``axis`` values in ``[-dim, dim-1]``, elsewhere
        dimensions no larger than ``data``'s; the output has its shape.
    :param axis: in ``[-rank, rank-1]``.
    """
    return Node(GATHER_ELEMENTS, [as_output(data), index_input(indices)], {"axis": axis}, name)


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
    return Node(PAD, inputs, {"pad_mode": pad_mode}, name)


# -- shape and type inference -------------------------------------------------------------------------


def _transpose(node: Node) -> list[OutputSpec]:
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    length = index_vector(node, 1, "input_order")[0]
    order = known_ints(node, 1)
    if not data.rank_is_static:  # an If's output whose branches differ in rank: the order gives the rank
        return [(element_type, [DYNAMIC] * len(order) if order else PartialShape.dynamic())]
    if order == [] or length == 0:
        order = list(range(data.rank - 1, -1, -1))
    if order is None:
        if length not in (DYNAMIC, data.rank):
            raise node.error(f"input_order has {length} values; data {data} has rank {data.rank}")
        return [(element_type, [DYNAMIC] * data.rank)]
    if sorted(order) != list(range(data.rank)):
        raise node.error(f"input_order {order} is not a permutation of 0..{data.rank - 1} (data {data})")
    return [(element_type, [data[i] for i in order])]


def _concat(node: Node) -> list[OutputSpec]:
    count = node.get_input_size()
    if count == 0:
        raise node.error("expects at least one input")
    element_type = expect_same_types(node, *range(count))
    shapes = [node.input_value(i).partial_shape for i in range(count)]
    known = [s for s in shapes if s.rank_is_static]
    if len(known) < len(shapes):  # an If's output whose branches differ in rank: checked when it runs
        if known:
            shapes = [s if s.rank_is_static else PartialShape([DYNAMIC] * known[0].rank) for s in shapes]
        else:
            return [(element_type, PartialShape.dynamic())]
    rank = shapes[0].rank
    if rank == 0 or any(s.rank != rank for s in shapes):
        raise node.error(f"inputs must share one non-zero rank, got {', '.join(map(str, shapes))}")
    axis = normalize_axis(node, node.attrs["axis"], rank)
    out = list(shapes[0])
    for k, shape in enumerate(shapes[1:], 1):
        for i in range(rank):
            if i != axis:
                out[i] = merge_dims(node, out[i], shape[i], f"input {k} dim {i} ({shape}) differs from {shapes[0]}")
    sizes = [s[axis] for s in shapes]
    out[axis] = DYNAMIC if DYNAMIC in sizes else sum(sizes)
    return [(element_type, out)]


def _split(node: Node) -> list[OutputSpec]:
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    parts = node.attrs["num_splits"]
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


def _variadic_split(node: Node) -> list[OutputSpec]:
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    axis = _scalar_axis(node, 1, data.rank, one_element_ok=True)
    lengths, count = values_or_length(node, 2, "split_lengths", LISTED_VALUES)
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


def _gather(node: Node) -> list[OutputSpec]:
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    indices = node.input_value(1).partial_shape
    batch_dims = node.attrs["batch_dims"]
    limit = min(data.rank, indices.rank)
    if not -limit <= batch_dims <= limit:
        raise node.error(f"attribute batch_dims={batch_dims} is out of range for data {data}, indices {indices}")
    batch = batch_dims + indices.rank if batch_dims < 0 else batch_dims
    axis = _scalar_axis(node, 2, data.rank, INDEX_TYPES, one_element_ok=True)
    if axis is not None and batch > axis:
        raise node.error(f"batch_dims={batch_dims} must not exceed axis {axis}")
    lead = [
        merge_dims(node, data[i], indices[i], f"batch dim {i} of data {data}, indices {indices}") for i in range(batch)
    ]
    if axis is None:
        return [(element_type, lead + [DYNAMIC] * (data.rank + indices.rank - 1 - 2 * batch))]
    return [(element_type, [*lead, *data[batch:axis], *indices[batch:], *data[axis + 1 :]])]


def _gather_elements(node: Node) -> list[OutputSpec]:
    data = node.input_value(0).partial_shape
    indices = node.input_value(1).partial_shape
    if data.rank != indices.rank or data.rank == 0:
        raise node.error(f"indices {indices} must have the rank of data {data} (at least 1)")
    axis = normalize_axis(node, node.attrs["axis"], data.rank)
    for d, (size, taken) in enumerate(zip(data.dims, indices.dims)):
        if d != axis and DYNAMIC not in (size, taken) and taken > size:
            raise node.error(f"indices {indices} exceed data {data} on axis {d}, which is not the gathered axis")
    known = constant_value(node.input_value(1))
    size = data[axis]
    if known is not None and size != DYNAMIC and known.size and (known.min() < -size or known.max() >= size):
        span = f"[{known.min()}, {known.max()}]"
        raise node.error(f"indices must lie in [{-size}, {size - 1}] along axis {axis}; they span {span}")
    return [(node.input_value(0).element_type, indices)]


_PAD_LIMITS = {"edge": (1, None), "reflect": (1, -1), "symmetric": (1, 0)}
"""Per pad mode: the size a padded dimension needs, and the most a pad may exceed it by."""


def _pad(node: Node) -> list[OutputSpec]:
    mode = node.attrs["pad_mode"]
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    if node.get_input_size() == 4:
        expect_same_types(node, 0, 3)
        expect_rank(node, 3, 0, what="pad_value")
    begin, end = (values_or_length(node, i, n)[0] for i, n in ((1, "pads_begin"), (2, "pads_end")))
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


# -- definitions ----------------------------------------------------------------------------------------

_DATA = Input("data")


TRANSPOSE = define(
    OpDef(
        "Transpose",
        "movement",
        _transpose,
        inputs=(_DATA, index_operand("input_order", "a permutation of 0..rank-1; empty reverses")),
        evaluate=_transpose_kernel,
        doc="Permutes dimensions: output dim i is input dim input_order[i].",
    )
)
CONCAT = define(
    OpDef(
        "Concat",
        "movement",
        _concat,
        inputs=(Input("inputs", variadic=True),),
        attrs=(Attr("axis", INT, doc="in [-rank, rank-1]", axis_of=0),),
        evaluate=_concat_kernel,
        doc="Joins tensors along axis; the other dimensions must match.",
    )
)
SPLIT = define(
    OpDef(
        "Split",
        "movement",
        _split,
        inputs=(_DATA, index_operand("axis", "a scalar")),
        attrs=(Attr("num_splits", INT, doc="how many equal parts"),),
        evaluate=_split_kernel,
        doc="Splits data into equal parts along axis, one output per part.",
    )
)
VARIADIC_SPLIT = define(
    OpDef(
        "VariadicSplit",
        "movement",
        _variadic_split,
        inputs=(
            _DATA,
            index_operand("axis", "a scalar"),
            index_operand("split_lengths", "one per output; one may be -1"),
        ),
        evaluate=_variadic_split_kernel,
        doc="Splits data along axis into parts of the given lengths.",
    )
)
GATHER = define(
    OpDef(
        "Gather",
        "movement",
        _gather,
        inputs=(
            _DATA,
            Input("indices", INDEX_TYPES, doc="out-of-range indices give zeros"),
            index_operand("axis", "a scalar"),
        ),
        attrs=(Attr("batch_dims", INT, 0, doc="leading dimensions data and indices share as batches"),),
        version="opset8",
        evaluate=_gather_kernel,
        doc="Takes slices of data at indices along axis.",
    )
)
GATHER_ELEMENTS = define(
    OpDef(
        "GatherElements",
        "movement",
        _gather_elements,
        inputs=(_DATA, Input("indices", INDEX_TYPES, doc="of data's rank; the output's shape")),
        attrs=(Attr("axis", INT, 0, doc="the axis indices index, in [-rank, rank)", axis_of=0),),
        version="opset6",
        evaluate=_gather_elements_kernel,
        doc="Takes one element of data per element of indices along axis.",
    )
)
PAD = define(
    OpDef(
        "Pad",
        "movement",
        _pad,
        inputs=(
            _DATA,
            index_operand("pads_begin", "one count per axis"),
            index_operand("pads_end", "one count per axis"),
            Input("pad_value", optional=True, doc="the constant mode's scalar"),
        ),
        attrs=(Attr("pad_mode", LOWER_STRING, "constant", ("constant", "edge", "reflect", "symmetric")),),
        version="opset12",
        evaluate=_pad_kernel,
        doc="Pads, or with negative pads crops, every axis.",
    )
)


# -- DepthToSpace and SpaceToDepth (OpenVINO opset 1): blocks of channels moved into the spatial
# dimensions and back, for data ``[N, C, D1, ..., Dk]`` of any spatial rank ``k >= 1``.
#
# Both are a reshape, a transpose and a reshape, as OpenVINO's specification writes them; ``mode`` says
# whether the block index comes before the remaining channels (``blocks_first``) or after them
# (``depth_first``).


_MODES = ("blocks_first", "depth_first")


def depth_to_space(data: Any, mode: str, block_size: int = 1, name: str | None = None) -> Node:
    """Moves blocks of channels into the spatial dimensions (``DepthToSpace``, opset1):
    ``[N, C, D1, ..., Dk]`` becomes ``[N, C / block_size**k, D1 * block_size, ..., Dk * block_size]``.

    :param mode: ``blocks_first`` (the channels split as ``[block_size, ..., block_size, C / block_size**k]``)
        or ``depth_first`` (as ``[C / block_size**k, block_size, ..., block_size]``).
    :param block_size: the block's size along each spatial dimension; ``C`` must be a multiple of
        ``block_size**k``.
    """
    return Node(DEPTH_TO_SPACE, [as_output(data)], {"mode": mode, "block_size": block_size}, name)


def space_to_depth(data: Any, mode: str, block_size: int = 1, name: str | None = None) -> Node:
    """Moves spatial blocks into the channels (``SpaceToDepth``, opset1): ``[N, C, D1, ..., Dk]`` becomes
    ``[N, C * block_size**k, D1 / block_size, ..., Dk / block_size]``; the inverse of ``depth_to_space``.

    :param mode: ``blocks_first`` (the new channels ordered block index first) or ``depth_first``
        (input channel first).
    :param block_size: the block's size along each spatial dimension, which it must divide.
    """
    return Node(SPACE_TO_DEPTH, [as_output(data)], {"mode": mode, "block_size": block_size}, name)


# -- shape inference ------------------------------------------------------------------------------------


def _checked(node: Node) -> tuple[list[int], int, int]:
    """The data's dims, the block size and the spatial rank, checked."""
    data = node.input_value(0).partial_shape
    block = node.attrs["block_size"]
    if data.rank < 3:
        raise node.error(f"data {data} must be [N, C, D1, ...] with at least one spatial dimension")
    if block < 1:
        raise node.error(f"block_size={block} must be >= 1")
    return list(data.dims), block, data.rank - 2


def _depth_to_space(node: Node) -> list[OutputSpec]:
    dims, block, k = _checked(node)
    group = block**k
    channels = dims[1]
    if channels != DYNAMIC and channels % group:
        raise node.error(f"{channels} channels of data {dims} are not a multiple of block_size**{k} = {group}")
    out = [dims[0], DYNAMIC if channels == DYNAMIC else channels // group]
    out += [dim_mul(d, block) for d in dims[2:]]
    return [(node.input_value(0).element_type, out)]


def _space_to_depth(node: Node) -> list[OutputSpec]:
    dims, block, k = _checked(node)
    for axis, d in enumerate(dims[2:], 2):
        if d != DYNAMIC and d % block:
            raise node.error(f"spatial dimension {axis} of data {dims} ({d}) is not a multiple of block_size={block}")
    channels = dims[1]
    out = [dims[0], dim_mul(channels, block**k)]
    out += [DYNAMIC if d == DYNAMIC else d // block for d in dims[2:]]
    return [(node.input_value(0).element_type, out)]


# -- the kernels: OpenVINO's reshape, transpose, reshape -------------------------------------------------


def _depth_to_space_kernel(node: Node, x: Any) -> Any:
    xp = namespace(x)
    block, k = node.attrs["block_size"], x.ndim - 2
    n, c, spatial = x.shape[0], x.shape[1], tuple(x.shape[2:])
    depth = c // block**k
    blocks = (block,) * k
    if node.attrs["mode"] == "blocks_first":
        split = xp.reshape(x, (n, *blocks, depth, *spatial))
        order = [0, k + 1] + [i for d in range(k) for i in (k + 2 + d, 1 + d)]
    else:
        split = xp.reshape(x, (n, depth, *blocks, *spatial))
        order = [0, 1] + [i for d in range(k) for i in (k + 2 + d, 2 + d)]
    moved = xp.permute_dims(split, tuple(order))
    return xp.reshape(moved, (n, depth, *(d * block for d in spatial)))


def _space_to_depth_kernel(node: Node, x: Any) -> Any:
    xp = namespace(x)
    block, k = node.attrs["block_size"], x.ndim - 2
    n, c, spatial = x.shape[0], x.shape[1], tuple(x.shape[2:])
    split = xp.reshape(x, (n, c, *(v for d in spatial for v in (d // block, block))))
    inner, outer = [3 + 2 * d for d in range(k)], [2 + 2 * d for d in range(k)]
    head = [0, *inner, 1] if node.attrs["mode"] == "blocks_first" else [0, 1, *inner]
    moved = xp.permute_dims(split, tuple(head + outer))
    return xp.reshape(moved, (n, c * block**k, *(d // block for d in spatial)))


# -- definitions ----------------------------------------------------------------------------------------

_ATTRS = (
    Attr("mode", LOWER_STRING, choices=_MODES, doc="where the block index sits among the channels"),
    Attr("block_size", INT, 1, doc="the block's size along each spatial dimension"),
)

DEPTH_TO_SPACE = define(
    OpDef(
        "DepthToSpace",
        "movement",
        _depth_to_space,
        inputs=(Input("data", doc="[N, C, D1, ..., Dk], C a multiple of block_size**k"),),
        attrs=_ATTRS,
        version="opset1",
        evaluate=_depth_to_space_kernel,
        doc="Moves blocks of channels into the spatial dimensions.",
    )
)
SPACE_TO_DEPTH = define(
    OpDef(
        "SpaceToDepth",
        "movement",
        _space_to_depth,
        inputs=(Input("data", doc="[N, C, D1, ..., Dk], each Di a multiple of block_size"),),
        attrs=_ATTRS,
        version="opset1",
        evaluate=_space_to_depth_kernel,
        doc="Moves spatial blocks into the channels: the inverse of DepthToSpace.",
    )
)
