"""Ops that read or write data at positions held in another tensor: GatherND, ScatterElementsUpdate,
ScatterNDUpdate, and ReverseSequence (which reverses a prefix of each sequence of a batch).

GatherND and ReverseSequence have one array-API kernel every device shares. The scatters have none (the
array API cannot write at computed positions): TEMPLATE's numpy kernels are in
:mod:`hetero_sdk.reference.indexing`; both it and XLA's lowering use :func:`scatter_positions`.
"""

from __future__ import annotations

from typing import Any

from hetero_sdk.array_api import namespace
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import INT, STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import INDEX_TYPES, NUMERIC_TYPES, expect_same_types, merge_dims, normalize_axis
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = [
    "GATHER_ND", "REDUCTIONS", "REVERSE_SEQUENCE", "SCATTER_ELEMENTS_UPDATE", "SCATTER_ND_UPDATE", "gather_nd",
    "reverse_sequence", "scatter_elements_update", "scatter_nd_update", "scatter_positions",
]  # fmt: skip

REDUCTIONS = ("none", "sum", "prod", "min", "max")
"""How a scatter combines an update with the element it lands on: ``none`` replaces it (with repeated
positions, which update wins is unspecified), the others fold every update into it."""


# -- factories ----------------------------------------------------------------------------------------


def gather_nd(data: Any, indices: Any, batch_dims: int = 0, name: str | None = None) -> Node:
    """Slices of ``data`` at the coordinates in the last dimension of ``indices`` (``GatherND``, opset8).

    The output has shape ``indices.shape[:-1] + data.shape[batch_dims + indices.shape[-1]:]``.

    :param indices: i32/i64; its last dimension ``k`` (static, at most ``rank(data) - batch_dims``)
        holds coordinates into the dims after the batch dims; negative values count from the end.
    :param batch_dims: how many leading dimensions ``data`` and ``indices`` share as batches.
    """
    return Node(GATHER_ND, [as_output(data), as_output(indices)], {"batch_dims": batch_dims}, name)


def scatter_elements_update(
    data: Any, indices: Any, updates: Any, axis: int = 0, reduction: str = "none", name: str | None = None
) -> Node:
    """``data`` with each element of ``updates`` written at its own position but, along ``axis``, at the
    position ``indices`` holds (``ScatterElementsUpdate``, opset12; ``axis`` is an attribute here).

    :param indices: i32/i64, the shape of ``updates`` and the rank of ``data``; values in ``[-dim, dim-1]``.
    :param reduction: one of :data:`REDUCTIONS` (OpenVINO's ``mean`` is not offered).
    """
    inputs = [as_output(data), as_output(indices), as_output(updates)]
    return Node(SCATTER_ELEMENTS_UPDATE, inputs, {"axis": axis, "reduction": reduction}, name)


def scatter_nd_update(data: Any, indices: Any, updates: Any, reduction: str = "none", name: str | None = None) -> Node:
    """``data`` with the slices of ``updates`` written at the coordinates in the last dimension of
    ``indices`` (``ScatterNDUpdate``, opset15).

    :param indices: i32/i64; its last dimension ``k`` (static, at most ``rank(data)``) holds
        coordinates into the first ``k`` dims of ``data``; negative values count from the end.
    :param updates: of shape ``indices.shape[:-1] + data.shape[k:]``.
    :param reduction: one of :data:`REDUCTIONS` (OpenVINO's ``sub`` is not offered).
    """
    inputs = [as_output(data), as_output(indices), as_output(updates)]
    return Node(SCATTER_ND_UPDATE, inputs, {"reduction": reduction}, name)


def reverse_sequence(
    data: Any, seq_lengths: Any, batch_axis: int = 0, seq_axis: int = 1, name: str | None = None
) -> Node:
    """Reverses the first ``seq_lengths[b]`` elements along ``seq_axis`` of each batch entry ``b`` along
    ``batch_axis``; the rest are kept (``ReverseSequence``, opset1).

    :param seq_lengths: one integer per batch entry, in ``[0, data.shape[seq_axis]]``.
    """
    attrs = {"batch_axis": batch_axis, "seq_axis": seq_axis}
    return Node(REVERSE_SEQUENCE, [as_output(data), as_output(seq_lengths)], attrs, name)


# -- shape and type inference -------------------------------------------------------------------------


def _coordinate_count(node: Node, indices: PartialShape, most: int) -> int:
    if indices.rank == 0:
        raise node.error("indices must have at least one dimension (its last holds the coordinates)")
    k = indices[-1]
    if k == DYNAMIC:
        raise node.error(f"the last dimension of indices {indices} must be static: it decides the output rank")
    if k > most:
        raise node.error(f"indices {indices} hold {k} coordinates; data has only {most} dims to index")
    return k


def _check_known_indices(node: Node, index: int, sizes: list[int], what: str) -> None:
    """Raises when constant indices leave ``[-size, size-1]`` (``sizes`` per coordinate, last axis)."""
    known = constant_value(node.input_value(index))
    if known is None or not known.size:
        return
    for j, size in enumerate(sizes):
        column = known[..., j]
        if size != DYNAMIC and (column.min() < -size or column.max() >= size):
            raise node.error(
                f"indices must lie in [{-size}, {size - 1}] for {what} {j}; they span [{column.min()}, {column.max()}]"
            )


def _gather_nd(node: Node) -> list[OutputSpec]:
    data = node.input_value(0).partial_shape
    indices = node.input_value(1).partial_shape
    batch = node.attrs["batch_dims"]
    if not 0 <= batch < min(data.rank, indices.rank):
        raise node.error(f"batch_dims={batch} must be in [0, {min(data.rank, indices.rank) - 1}] here")
    k = _coordinate_count(node, indices, data.rank - batch)
    lead = [
        merge_dims(node, data[i], indices[i], f"batch dim {i} of data {data}, indices {indices}") for i in range(batch)
    ]
    if k:
        _check_known_indices(node, 1, list(data.dims[batch : batch + k]), "coordinate")
    return [(node.input_value(0).element_type, [*lead, *indices[batch:-1], *data[batch + k :]])]


def _scatter_elements(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 2)
    data, indices, updates = (node.input_value(i).partial_shape for i in range(3))
    if data.rank == 0 or indices.rank != data.rank or updates.rank != data.rank:
        raise node.error(f"data {data}, indices {indices} and updates {updates} must share one rank (at least 1)")
    for d in range(data.rank):
        merge_dims(node, indices[d], updates[d], f"indices {indices} and updates {updates} differ on dim {d}")
    axis = normalize_axis(node, node.attrs["axis"], data.rank)
    for d in range(data.rank):
        if d != axis and DYNAMIC not in (data[d], indices[d]) and indices[d] > data[d]:
            raise node.error(f"indices {indices} exceed data {data} on dim {d}, which is not the scatter axis")
    known = constant_value(node.input_value(1))
    size = data[axis]
    if known is not None and known.size and size != DYNAMIC and (known.min() < -size or known.max() >= size):
        span = f"[{known.min()}, {known.max()}]"
        raise node.error(f"indices must lie in [{-size}, {size - 1}] along axis {axis}; they span {span}")
    return [(element_type, data)]


def _scatter_nd(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 2)
    data, indices, updates = (node.input_value(i).partial_shape for i in range(3))
    k = _coordinate_count(node, indices, data.rank)
    expected = PartialShape([*indices[:-1], *data[k:]])
    if updates.rank != expected.rank or updates.merge(expected) is None:
        raise node.error(f"updates {updates} must have shape {expected} (indices[:-1] + data[{k}:])")
    if k:
        _check_known_indices(node, 1, list(data.dims[:k]), "coordinate")
    return [(element_type, data)]


def _reverse_sequence(node: Node) -> list[OutputSpec]:
    data = node.input_value(0).partial_shape
    lengths = node.input_value(1).partial_shape
    if data.rank < 2:
        raise node.error(f"data {data} needs at least 2 dims (a batch axis and a sequence axis)")
    if lengths.rank != 1:
        raise node.error(f"seq_lengths {lengths} must be 1-D, one length per batch entry")
    batch = normalize_axis(node, node.attrs["batch_axis"], data.rank, "batch_axis")
    seq = normalize_axis(node, node.attrs["seq_axis"], data.rank, "seq_axis")
    if batch == seq:
        raise node.error(f"batch_axis and seq_axis must differ; both are dim {batch}")
    merge_dims(node, data[batch], lengths[0], f"seq_lengths {lengths} needs one length per batch entry of {data}")
    known = constant_value(node.input_value(1))
    if known is not None and data[seq] != DYNAMIC and known.size and (known.min() < 0 or known.max() > data[seq]):
        raise node.error(f"seq_lengths must lie in [0, {data[seq]}]; got {known.tolist()}")
    return [(node.input_value(0).element_type, data)]


# -- kernels shared by every device ---------------------------------------------------------------------


def _positive(xp: Any, indices: Any, size: Any) -> Any:
    return xp.where(indices < 0, indices + size, indices)


def _batch_grid(xp: Any, shape: tuple[int, ...], batch: int) -> tuple[Any, ...]:
    """One index array per batch dim, shaped to broadcast against ``shape`` (``indices.shape[:-1]``)."""
    grid = []
    for i in range(batch):
        dims = [1] * len(shape)
        dims[i] = shape[i]
        grid.append(xp.reshape(xp.arange(shape[i]), tuple(dims)))
    return tuple(grid)


def _coordinates(xp: Any, data_shape: tuple[int, ...], indices: Any, first: int) -> tuple[Any, ...]:
    k = indices.shape[-1]
    return tuple(_positive(xp, indices[..., j], data_shape[first + j]) for j in range(k))


def _gather_nd_kernel(node: Node, x: Any, indices: Any) -> Any:
    xp = namespace(x, indices)
    batch = node.attrs["batch_dims"]
    where = _batch_grid(xp, indices.shape[:-1], batch) + _coordinates(xp, x.shape, indices, batch)
    target = (*indices.shape[:-1], *x.shape[batch + indices.shape[-1] :])
    # with no coordinates (k == 0) every output entry is a whole (batch entry of) data
    return xp.broadcast_to(x[where] if where else x, target)


def scatter_positions(node: Node, xp: Any, data_shape: tuple[int, ...], indices: Any) -> tuple[Any, ...]:
    """Where each update of a scatter lands in ``data``: a tuple of index arrays (negative indices made
    positive), for ``data[positions] = updates`` in numpy or ``data.at[positions]`` in JAX.

    :param xp: the array namespace of ``indices``.
    """
    if node.type_name == "ScatterNDUpdate":
        return _coordinates(xp, data_shape, indices, 0)
    axis = node.attrs["axis"] % len(data_shape)
    grid = []
    for d, n in enumerate(indices.shape):
        if d == axis:
            grid.append(_positive(xp, indices, data_shape[axis]))
        else:
            dims = [1] * indices.ndim
            dims[d] = n
            grid.append(xp.broadcast_to(xp.reshape(xp.arange(n), tuple(dims)), indices.shape))
    return tuple(grid)


def _reverse_sequence_kernel(node: Node, x: Any, lengths: Any) -> Any:
    xp = namespace(x)
    batch = node.attrs["batch_axis"] % x.ndim
    seq = node.attrs["seq_axis"] % x.ndim
    steps = x.shape[seq]
    dims = [1] * x.ndim
    dims[batch] = x.shape[batch]
    limit = xp.reshape(xp.astype(xp.asarray(lengths), xp.int64), tuple(dims))
    dims = [1] * x.ndim
    dims[seq] = steps
    position = xp.reshape(xp.arange(steps, dtype=xp.int64), tuple(dims))
    source = xp.where(position < limit, limit - 1 - position, position)
    return xp.take_along_axis(x, xp.broadcast_to(source, x.shape), axis=seq)


# -- definitions ----------------------------------------------------------------------------------------

_INDICES = Input("indices", INDEX_TYPES, doc="i32/i64 positions; negative values count from the end")
_REDUCTION = Attr("reduction", STRING, "none", REDUCTIONS, doc="how an update combines with its target")

GATHER_ND = define(
    OpDef(
        "GatherND",
        "indexing",
        _gather_nd,
        inputs=(Input("data"), _INDICES),
        attrs=(Attr("batch_dims", INT, 0, doc="leading dimensions data and indices share as batches"),),
        version="opset8",
        evaluate=_gather_nd_kernel,
        doc="Slices of data at the coordinates in the last dimension of indices.",
    )
)
SCATTER_ELEMENTS_UPDATE = define(
    OpDef(
        "ScatterElementsUpdate",
        "indexing",
        _scatter_elements,
        inputs=(Input("data"), _INDICES, Input("updates", doc="the shape of indices")),
        attrs=(Attr("axis", INT, 0, doc="the axis indices index, in [-rank, rank)", axis_of=0), _REDUCTION),
        version="opset12",
        doc="data with each update written where indices say along axis.",
    )
)
SCATTER_ND_UPDATE = define(
    OpDef(
        "ScatterNDUpdate",
        "indexing",
        _scatter_nd,
        inputs=(Input("data"), _INDICES, Input("updates", doc="indices.shape[:-1] + data.shape[k:]")),
        attrs=(_REDUCTION,),
        version="opset15",
        doc="data with slices of updates written at the coordinates in indices.",
    )
)
REVERSE_SEQUENCE = define(
    OpDef(
        "ReverseSequence",
        "indexing",
        _reverse_sequence,
        inputs=(Input("data"), Input("seq_lengths", NUMERIC_TYPES, doc="one length per batch entry")),
        attrs=(
            Attr("batch_axis", INT, 0, doc="the axis of batch entries", axis_of=0),
            Attr("seq_axis", INT, 1, doc="the axis reversed", axis_of=0),
        ),
        evaluate=_reverse_sequence_kernel,
        doc="Reverses the first seq_lengths[b] elements along seq_axis of each batch entry b.",
    )
)
