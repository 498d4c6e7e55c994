"""Ops that move data: Transpose, Concat, Split, VariadicSplit, Gather, Pad (slicing is in :mod:`.slicing`).

Shape-like operands are inputs, as in OpenVINO; how they are read when known at build time, and what
inference gives when they are not, is described in :mod:`hetero_sdk.ops.inputs`.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from hetero_sdk.element_type import Type
from hetero_sdk.graph.limits import LISTED_VALUES
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import INT, LOWER_STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops import movement_kernels as kernels
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import INDEX_TYPES, expect_rank, expect_same_types, expect_type, merge_dims, normalize_axis
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.ops.inputs import INTEGER_TYPES, index_input, index_operand, index_vector, known_ints, values_or_length
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = [
    "CONCAT", "GATHER", "GATHER_ELEMENTS", "PAD", "SPLIT", "TRANSPOSE", "VARIADIC_SPLIT", "concat", "gather",
    "gather_elements", "pad", "split", "transpose", "variadic_split",
]  # fmt: skip

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
        evaluate=kernels.transpose,
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
        evaluate=kernels.concat,
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
        evaluate=kernels.split,
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
        evaluate=kernels.variadic_split,
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
        evaluate=kernels.gather,
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
        evaluate=kernels.gather_elements,
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
        evaluate=kernels.pad,
        doc="Pads, or with negative pads crops, every axis.",
    )
)
