"""Slicing ops: Slice (opset8, numpy-style) and StridedSlice (TensorFlow-style masks).

Their bounds are inputs, as in OpenVINO; inference gives exact dimensions when the bounds are known
at build time (see :mod:`hetero_sdk.ops.inputs`). Each op is one array-API kernel every device shares.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import INTS, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import normalize_axis
from hetero_sdk.ops.inputs import index_input, index_operand, index_vector, known_ints, static_length
from hetero_sdk.shape import DYNAMIC

__all__ = ["SLICE", "STRIDED_SLICE", "slice", "slice_index", "strided_slice", "strided_slice_index"]

_slice = builtins.slice


def _mask(node: Node, name: str, length: int) -> list[int]:
    bits: list[int] = node.attrs[name]
    if any(b not in (0, 1) for b in bits):
        raise node.error(f"attribute {name}={bits} must hold only 0 and 1")
    return (bits + [0] * length)[:length]


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


def _ints(value: Any) -> list[int]:
    return [int(v) for v in np.asarray(value).reshape(-1)]


def slice_index(rank: int, start: Sequence[int], stop: Sequence[int], step: Sequence[int],
                axes: Sequence[int] | None = None) -> tuple[Any, ...]:  # fmt: skip
    """The numpy index of ``Slice`` on a tensor of ``rank`` dimensions (python slices clamp to each
    dimension's length, as Slice does)."""
    index = [_slice(None)] * rank
    chosen = axes if axes is not None else range(len(start))
    for a, b, e, s in zip(chosen, start, stop, step):
        index[a % rank] = _slice(b, e, s)
    return tuple(index)


def strided_slice_index(node: Node, begin: Sequence[int], end: Sequence[int],
                        strides: Sequence[int] | None = None) -> tuple[Any, ...]:  # fmt: skip
    """The numpy index of the ``StridedSlice`` ``node`` (its masks) for ``begin``, ``end`` and ``strides``."""
    s = strides if strides is not None else [1] * len(begin)
    masks = {m: node.attrs[m] + [0] * len(begin) for m in node.attrs if m.endswith("_mask")}
    index: list[Any] = []
    for i in range(len(begin)):
        if masks["ellipsis_mask"][i]:
            index.append(Ellipsis)
        elif masks["new_axis_mask"][i]:
            index.append(None)
        elif masks["shrink_axis_mask"][i]:
            index.append(begin[i])
        else:
            first = None if masks["begin_mask"][i] else begin[i]
            index.append(_slice(first, None if masks["end_mask"][i] else end[i], s[i]))
    return tuple(index)


def _slice_kernel(node: Node, x: Any, start: Any, stop: Any, step: Any, *axes: Any) -> Any:
    return x[slice_index(x.ndim, _ints(start), _ints(stop), _ints(step), _ints(axes[0]) if axes else None)]


def _strided_slice_kernel(node: Node, x: Any, begin: Any, end: Any, *strides: Any) -> Any:
    return x[strided_slice_index(node, _ints(begin), _ints(end), _ints(strides[0]) if strides else None)]


_DATA = Input("data")


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

SLICE = define(
    OpDef(
        "Slice",
        "slicing",
        _slice_infer,
        inputs=(
            _DATA,
            index_operand("start", "1D start indices"),
            index_operand("stop", "1D stop indices (exclusive)"),
            index_operand("step", "1D non-zero steps"),
            index_operand("axes", "the axes sliced; 0..len(start)-1 by default", True),
        ),
        version="opset8",
        evaluate=_slice_kernel,
        doc="Numpy-style data[start:stop:step] along axes.",
    )
)
STRIDED_SLICE = define(
    OpDef(
        "StridedSlice",
        "slicing",
        _strided_slice,
        inputs=(
            _DATA,
            index_operand("begin", "1D"),
            index_operand("end", "1D"),
            index_operand("strides", "1D non-zero; ones when absent", True),
        ),
        attrs=_MASKS,
        evaluate=_strided_slice_kernel,
        doc="TensorFlow-style strided slice.",
    )
)
