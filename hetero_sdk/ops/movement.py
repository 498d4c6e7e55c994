"""Ops that move data: Transpose, Concat, Split, VariadicSplit, Slice, StridedSlice, Gather, Pad.

Shape-like operands are inputs, as in OpenVINO; how they are read when known at build time, and what
inference gives when they are not, is described in :mod:`hetero_sdk.ops.inputs`.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import INT, INTS, LOWER_STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops import movement_kernels as kernels
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import INDEX_TYPES, expect_rank, expect_same_types, expect_type, merge_dims, normalize_axis
from hetero_sdk.ops.inputs import INTEGER_TYPES, index_input, index_vector, known_ints, static_length, values_or_length
from hetero_sdk.shape import DYNAMIC

__all__ = [
    "CONCAT", "GATHER", "PAD", "SLICE", "SPLIT", "STRIDED_SLICE", "TRANSPOSE", "VARIADIC_SPLIT", "concat", "gather",
    "pad", "slice", "split", "strided_slice", "transpose", "variadic_split",
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


def _mask(node: Node, name: str, length: int) -> list[int]:
    bits: list[int] = node.attrs[name]
    if any(b not in (0, 1) for b in bits):
        raise node.error(f"attribute {name}={bits} must hold only 0 and 1")
    return (bits + [0] * length)[:length]


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
    return Node(SLICE, inputs, {}, name)


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
    return Node(STRIDED_SLICE, inputs, attrs, name)


def gather(data: Any, indices: Any, axis: Any, batch_dims: int = 0, name: str | None = None) -> Node:
    """Takes slices of ``data`` at ``indices`` along ``axis`` (``Gather``, opset8).

    :param indices: i32/i64 indices in ``[-dim, dim-1]``; out-of-range indices give zeros.
    :param axis: a scalar input or int; normalized against the rank of ``data``.
    :param batch_dims: how many leading dimensions ``data`` and ``indices`` share as batches;
        negative counts from the rank of ``indices``; at most ``axis``.
    """
    return Node(GATHER, [as_output(data), index_input(indices), index_input(axis)], {"batch_dims": batch_dims}, name)


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
    lengths, count = values_or_length(node, 2, "split_lengths")
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


def _slice_infer(node: Node) -> list[OutputSpec]:
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    names = ("start", "stop", "step", "axes")[: node.get_input_size() - 1]
    lengths = {index_vector(node, i + 1, n)[0] for i, n in enumerate(names)} - {DYNAMIC}
    if len(lengths) > 1:
        raise node.error(f"{', '.join(names)} must have one length, got {sorted(lengths)}")
    start, stop, step = (known_ints(node, i) for i in (1, 2, 3))
    if step is not None and 0 in step:
        raise node.error(f"step {step} must not contain 0")
    count = next(iter(lengths)) if lengths else DYNAMIC
    axes = known_ints(node, 4) if len(names) == 4 else (None if count == DYNAMIC else list(range(count)))
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
            out[axis] = len(range(*_slice(start[k], stop[k], step[k]).indices(data[axis])))
    return [(element_type, out)]


def _strided_slice(node: Node) -> list[OutputSpec]:
    data = node.input_value(0).partial_shape
    element_type = node.input_value(0).element_type
    names = ("begin", "end", "strides")[: node.get_input_size() - 1]
    lengths = {index_vector(node, i + 1, n)[0] for i, n in enumerate(names)} - {DYNAMIC}
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
    consumed = sum(1 for i in range(count) if not ellipsis[i] and not new_axis[i])
    if consumed > data.rank:
        raise node.error(f"{consumed} dimensions are indexed but data {data} has rank {data.rank}")
    out: list[int] = []
    dim = 0
    for i in range(count):
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
                out.append(len(range(*_slice(first, last, strides[i]).indices(data[dim]))))
            dim += 1
    return [(element_type, out + list(data[dim:]))]


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


def _index(name: str, doc: str, optional: bool = False) -> Input:
    return Input(name, INTEGER_TYPES, optional=optional, decides_shape=True, doc=doc)


_MASKS = tuple(
    Attr(mask, INTS, [], doc=doc)
    for mask, doc in (
        ("begin_mask", "1: ignore begin[i]"),
        ("end_mask", "1: ignore end[i]"),
        ("new_axis_mask", "1: insert a dimension of size 1"),
        ("shrink_axis_mask", "1: take index begin[i] and remove the dimension"),
        ("ellipsis_mask", "1 (once at most): all dimensions not otherwise indexed"),
    )
)

TRANSPOSE = define(
    OpDef(
        "Transpose",
        "movement",
        _transpose,
        inputs=(_DATA, _index("input_order", "a permutation of 0..rank-1; empty reverses")),
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
        attrs=(Attr("axis", INT, doc="in [-rank, rank-1]"),),
        evaluate=kernels.concat,
        doc="Joins tensors along axis; the other dimensions must match.",
    )
)
SPLIT = define(
    OpDef(
        "Split",
        "movement",
        _split,
        inputs=(_DATA, _index("axis", "a scalar")),
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
        inputs=(_DATA, _index("axis", "a scalar"), _index("split_lengths", "one per output; one may be -1")),
        evaluate=kernels.variadic_split,
        doc="Splits data along axis into parts of the given lengths.",
    )
)
SLICE = define(
    OpDef(
        "Slice",
        "movement",
        _slice_infer,
        inputs=(
            _DATA,
            _index("start", "1D start indices"),
            _index("stop", "1D stop indices (exclusive)"),
            _index("step", "1D non-zero steps"),
            _index("axes", "the axes sliced; 0..len(start)-1 by default", True),
        ),
        version="opset8",
        evaluate=kernels.slice_,
        doc="Numpy-style data[start:stop:step] along axes.",
    )
)
STRIDED_SLICE = define(
    OpDef(
        "StridedSlice",
        "movement",
        _strided_slice,
        inputs=(
            _DATA,
            _index("begin", "1D"),
            _index("end", "1D"),
            _index("strides", "1D non-zero; ones when absent", True),
        ),
        attrs=_MASKS,
        evaluate=kernels.strided_slice,
        doc="TensorFlow-style strided slice.",
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
            _index("axis", "a scalar"),
        ),
        attrs=(Attr("batch_dims", INT, 0, doc="leading dimensions data and indices share as batches"),),
        version="opset8",
        evaluate=kernels.gather,
        doc="Takes slices of data at indices along axis.",
    )
)
PAD = define(
    OpDef(
        "Pad",
        "movement",
        _pad,
        inputs=(
            _DATA,
            _index("pads_begin", "one count per axis"),
            _index("pads_end", "one count per axis"),
            Input("pad_value", optional=True, doc="the constant mode's scalar"),
        ),
        attrs=(Attr("pad_mode", LOWER_STRING, "constant", ("constant", "edge", "reflect", "symmetric")),),
        version="opset12",
        evaluate=kernels.pad,
        doc="Pads, or with negative pads crops, every axis.",
    )
)
