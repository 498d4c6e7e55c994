"""Shape buckets: a dynamic input dimension that no computation mixes across is padded up to the next
power of two, so that its values share one executable per bucket instead of one per value.

The rule is checked on the graph before any padding happens (:func:`independent_groups`). A group of
input dimensions (the first dimension of every input where it is dynamic: the batch; or one dynamic
dimension of one input) qualifies when each element of every output along the matching axis depends
only on the same element of the inputs along their axes: elementwise ops, activations, convolutions,
pooling and batch normalisation over the batch axis, a MatMul's rows, reductions and softmax over other
axes, transposes, squeezes, reshapes that keep the axis first and whole, gathers, splits and concats on
other axes. The shape of a padded tensor may be read (``ShapeOf``) only to rebuild that first axis in a
Reshape. Every other op, or any use of a padded tensor that the table does not cover, leaves the
dimension unpadded. Padded rows are zeros; they never reach an unpadded output element, and each output
is sliced back to the rows asked for, so the results are those of the unpadded input.

A dimension that fails the rule (a convolution's width, a sequence that attention mixes) gets one
executable per value, the last ``XLA_SHAPE_CACHE_SIZE`` kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from hetero_sdk import Model, Node, Output
from hetero_sdk.plugin import constant_value

__all__ = ["BUCKET_POLICIES", "BucketPlan", "ShapeBuckets", "independent_groups", "keep_rows", "next_bucket", "pad"]

BUCKET_POLICIES = ("POW2", "EXACT")
"""``XLA_SHAPE_BUCKETS`` values: pad independent dimensions to the next power of two, or compile per value."""

_ELEMENTWISE_FAMILIES = ("activation", "elementwise")
_BATCH_ONLY = frozenset(
    {"Convolution", "GroupConvolution", "ConvolutionBackpropData", "MaxPool", "AvgPool", "BatchNormInference",
     "DepthToSpace", "SpaceToDepth"}
)  # fmt: skip
"""Ops that mix neighbours along every axis but the first (the batch)."""


@dataclass(frozen=True)
class _Carry:
    """A tensor whose axis ``axis`` is the padded dimension, each element along it computed from the same
    element of the inputs."""

    axis: int


@dataclass(frozen=True)
class _ShapeVector:
    """A 1-D shape vector whose entry ``index`` is the padded size (the rest does not depend on it)."""

    index: int


State = _Carry | _ShapeVector | None
"""None: does not depend on the padded dimension."""


def next_bucket(size: int) -> int:
    """The bucket of a dimension of ``size``: the next power of two (``size`` itself when 0 or a power)."""
    return size if size <= 1 else 1 << (size - 1).bit_length()


def independent_groups(model: Model) -> list[tuple[tuple[tuple[int, int], ...], tuple[int | None, ...]]]:
    """The groups of dynamic input dimensions that padding cannot change the results of, each with the
    axis of every output that carries it (None: the output does not depend on it).

    A group is ``((input index, axis), ...)``: the batch (axis 0 of every input whose first dimension is
    dynamic) is tried as one group, then each other dynamic dimension alone."""
    inputs = list(model.inputs)
    dynamic = [(i, a) for i, port in enumerate(inputs) for a, d in enumerate(port.partial_shape.dims) if d < 0]
    batch = tuple((i, a) for i, a in dynamic if a == 0)
    candidates = ([batch] if batch else []) + [((i, a),) for i, a in dynamic if a != 0 or len(batch) > 1]
    found = []
    for group in candidates:
        axes = _output_axes(model, group)
        if axes is not None:
            found.append((group, axes))
    return found


def _output_axes(model: Model, group: Sequence[tuple[int, int]]) -> tuple[int | None, ...] | None:
    states: dict[Output, State] = {}
    parameters = model.get_parameters()
    for index, axis in group:
        states[parameters[index].output(0)] = _Carry(axis)
    for node in model.get_ops():
        if node.type_name == "Parameter":
            states.setdefault(node.output(0), None)
            continue
        ins = [states.get(v) for v in node.input_values()]
        if node.type_name == "Result":
            states[node.output(0)] = ins[0]
            continue
        if all(s is None for s in ins):
            for output in node.outputs():
                states[output] = None
            continue
        outs = _rule(node, ins)
        if outs is None:
            return None
        for output, state in zip(node.outputs(), outs):
            states[output] = state
    axes: list[int | None] = []
    for result in model.get_results():
        state = states.get(result.output(0))
        if state is None:
            axes.append(None)
        elif isinstance(state, _Carry):
            axes.append(state.axis)
        else:
            return None
    return tuple(axes)


def _rank(output: Output) -> int | None:
    rank = output.partial_shape.rank
    return None if rank is None else int(rank)


def _const(output: Output) -> np.ndarray | None:
    value = constant_value(output)
    return None if value is None else np.asarray(value)


def _rule(node: Node, ins: list[State]) -> list[State] | None:
    """The states of ``node``'s outputs, or None when the rule does not allow padding through it."""
    kind = node.type_name
    values = node.input_values()
    out_rank = _rank(node.output(0))
    if any(isinstance(s, _ShapeVector) for s in ins):
        return _shape_rule(node, ins)
    if kind == "Interpolate":
        return _interpolate_rule(node, ins)
    if node.op.family in _ELEMENTWISE_FAMILIES or kind in ("Convert", "Softmax", "LogSoftmax"):
        if out_rank is None:
            return None
        axis = _broadcast_axis(values, ins, out_rank)
        if axis is None:
            return None
        if kind in ("Softmax", "LogSoftmax") and node.attrs["axis"] % out_rank == axis:
            return None
        return [_Carry(axis)] * len(node.outputs())
    if kind == "Concat":
        carried = {s.axis if isinstance(s, _Carry) else -1 for s in ins}
        along = _axis_input(node, values)
        if len(carried) != 1 or -1 in carried or along is None or along in carried:
            return None  # (an unpadded input would not have the padded size)
        return [_Carry(carried.pop())]
    if kind in ("MatMul", "Gather") and not (isinstance(ins[0], _Carry) and all(s is None for s in ins[1:])):
        return _two_input_rule(node, ins)
    first = ins[0]
    if not isinstance(first, _Carry) or any(s is not None for s in ins[1:]):
        return None
    axis = first.axis
    if kind in _BATCH_ONLY:
        return [_Carry(0)] * len(node.outputs()) if axis == 0 else None
    if kind == "ShapeOf":
        return [_ShapeVector(axis)]
    if kind.startswith("Reduce"):
        reduced = _axes(values[1], _rank(values[0]))
        if not reduced or axis in reduced:  # (no axes: a reduction over all of them, in ONNX's sense)
            return None
        keep = node.attrs["keep_dims"]
        return [_Carry(axis if keep else axis - sum(1 for a in reduced if a < axis))]
    if kind == "Transpose":
        given = _const(values[1])
        if given is None:
            return None
        order = [int(a) for a in given.reshape(-1)] or list(range(_rank(values[0]) or 0))[::-1]
        return [_Carry(order.index(axis))] if axis in order else None
    if kind == "Squeeze":
        squeezed = _axes(values[1], _rank(values[0])) if len(values) > 1 else None
        if squeezed is None or axis in squeezed:
            return None
        return [_Carry(axis - sum(1 for a in squeezed if a < axis))]
    if kind == "Unsqueeze":
        added = _axes(values[1], out_rank)
        if added is None:
            return None
        position = axis
        for a in sorted(added):
            if a <= position:
                position += 1
        return [_Carry(position)]
    if kind == "Reshape":
        return _reshape_rule(node, axis)
    if kind in ("Split", "VariadicSplit", "Gather", "Slice"):
        along = _axis_input(node, values)
        if along is None or along == axis:
            return None
        return [_Carry(axis)] * len(node.outputs()) if kind != "Gather" else _gather_data(node, axis, along)
    if kind in ("MatMul", "XlaMatMulBias"):  # (XlaMatMulBias: a MatMul and a constant per-column bias)
        return _two_input_rule(node, ins)
    return None


def _interpolate_rule(node: Node, ins: list[State]) -> list[State] | None:
    """An Interpolate keeps a padded batch when it resizes other axes only: its axes input leaves out
    axis 0, or it computes from scales and the scale of axis 0 is 1."""
    if ins[0] != _Carry(0) or any(s is not None for s in ins[1:]):
        return None
    if any(next(iter(node.attrs.get(name) or [0])) != 0 for name in ("pads_begin", "pads_end")):
        return None  # padding the batch axis itself
    values = node.input_values()
    rank = _rank(values[0])
    newer = node.version != "opset4"  # opset 11: (data, scales or sizes, axes); opset 4: (data, sizes, scales, axes)
    axes_at, scales_at = (2, 1) if newer else (3, 2)
    axes = _axes(values[axes_at], rank) if len(values) > axes_at else list(range(rank or 0))
    if axes is None:
        return None
    if 0 not in axes:
        return [_Carry(0)]
    scales = _const(values[scales_at]) if len(values) > scales_at else None
    by_scales = str(node.attrs.get("shape_calculation_mode", "")).lower() == "scales"
    if by_scales and scales is not None and scales.size == len(axes) and float(scales[axes.index(0)]) == 1.0:
        return [_Carry(0)]
    return None


def _broadcast_axis(values: Sequence[Output], ins: Sequence[State], out_rank: int) -> int | None:
    """The output axis of the padded dimension under numpy broadcasting, or None when inputs disagree or
    an unpadded input is not 1 (or absent) along it."""
    axis = None
    for value, state in zip(values, ins):
        rank = _rank(value)
        if rank is None or isinstance(state, _ShapeVector):
            return None
        if isinstance(state, _Carry):
            mapped = state.axis + out_rank - rank
            if axis is not None and axis != mapped:
                return None
            axis = mapped
    if axis is None:
        return None
    for value, state in zip(values, ins):
        if state is None:
            rank = _rank(value) or 0
            position = axis - (out_rank - rank)
            if position >= 0 and value.partial_shape.dims[position] != 1:
                return None
    return axis


def _axes(value: Output, rank: int | None) -> list[int] | None:
    found = _const(value)
    if found is None or rank is None:
        return None
    return [int(a) % rank for a in np.atleast_1d(found)]


def _axis_input(node: Node, values: Sequence[Output]) -> int | None:
    rank = _rank(values[0])
    if rank is None:
        return None
    kind = node.type_name
    if kind == "Concat":
        return int(node.attrs["axis"]) % rank
    if kind == "Slice":
        axes = _axes(values[4], rank) if len(values) > 4 else None
        return None if axes is None or len(axes) != 1 else axes[0]
    if kind == "Gather" and node.attrs["batch_dims"] != 0:
        return None
    axes = _axes(values[2] if kind == "Gather" else values[1], rank)
    return None if axes is None or len(axes) != 1 else axes[0]


def _gather_data(node: Node, axis: int, along: int) -> list[State] | None:
    indices_rank = _rank(node.input_value(1))
    if indices_rank is None:
        return None
    return [_Carry(axis if axis < along else axis + indices_rank - 1)]


def _two_input_rule(node: Node, ins: list[State]) -> list[State] | None:
    values = node.input_values()
    kind = node.type_name
    if kind == "Gather":
        data, indices = ins[0], ins[1]
        if data is None and isinstance(indices, _Carry) and all(s is None for s in ins[2:]):
            along = _axis_input(node, values)
            return None if along is None else [_Carry(along + indices.axis)]
        return None
    a, b = ins[0], ins[1]
    rank_a, rank_b, out_rank = _rank(values[0]), _rank(values[1]), _rank(node.output(0))
    if isinstance(a, _Carry) and a == b and rank_a == rank_b == out_rank and rank_a is not None:
        return [a] if a.axis < rank_a - 2 else None  # a batched product, both sides padded along a batch axis
    if not isinstance(a, _Carry) or b is not None or rank_a is None or rank_b is None or out_rank is None:
        return None
    if node.attrs["transpose_a"] or rank_a < 2 or rank_b < 2 or a.axis == rank_a - 1:
        return None
    if a.axis < rank_a - 2:  # a batch axis of A: B must broadcast along it
        position = a.axis - rank_a + rank_b
        if position >= 0 and values[1].partial_shape.dims[position] != 1:
            return None
    return [_Carry(a.axis + out_rank - rank_a)]


def _reshape_rule(node: Node, axis: int) -> list[State] | None:
    """A reshape keeps the padded axis when it is the first one and stays first and whole: the target's
    first entry copies it (0 with ``special_zero``) and the other entries do not depend on it."""
    if axis != 0:
        return None
    target = _const(node.input_value(1))
    data_dims = node.input_value(0).partial_shape.dims
    if node.attrs["special_zero"] and _first_entry(node.input_value(1)) == 0:
        return [_Carry(0)]
    if target is None or target.ndim != 1 or target.size == 0:
        return None
    rest = [int(d) for d in target[1:]]
    if int(target[0]) == -1 and all(d > 0 for d in rest) and all(d >= 0 for d in data_dims[1:]):
        return [_Carry(0)] if int(np.prod(rest)) == int(np.prod(data_dims[1:])) else None
    return None


def _first_entry(vector: Output) -> int | None:
    """The first entry of a 1-D integer vector when it is known: a constant, or a Concat whose first
    input is one."""
    found = _const(vector)
    if found is None and vector.node.type_name == "Concat" and vector.node.get_input_size():
        found = _const(vector.node.input_value(0))
    return None if found is None or found.size == 0 else int(found.reshape(-1)[0])


def _shape_rule(node: Node, ins: list[State]) -> list[State] | None:
    """Shape vectors of padded tensors: gathered apart from the padded entry, converted, concatenated,
    and fed to a Reshape of a tensor padded along its first axis as the target's first entry."""
    kind = node.type_name
    values = node.input_values()
    if kind == "Reshape" and isinstance(ins[0], _Carry) and ins[0].axis == 0 and ins[1] == _ShapeVector(0):
        return [_Carry(0)]
    if kind == "Convert" and isinstance(ins[0], _ShapeVector):
        return [ins[0]]
    if kind == "Gather" and isinstance(ins[0], _ShapeVector) and all(s is None for s in ins[1:]):
        indices = _const(values[1])
        axis = _const(values[2])
        if indices is None or axis is None or int(axis) != 0:
            return None
        picked = [int(i) for i in np.atleast_1d(indices)]
        if ins[0].index not in picked:
            return [None]
        if indices.ndim == 1 and picked == [ins[0].index]:
            return [_ShapeVector(0)]
        return None
    if kind == "Slice" and isinstance(ins[0], _ShapeVector) and all(s is None for s in ins[1:]):
        found = [_const(v) for v in values[1:4]]
        if any(b is None or b.size != 1 for b in found):
            return None
        start, stop, step = (int(b.reshape(-1)[0]) for b in found if b is not None)
        if step != 1:
            return None
        length = values[0].partial_shape.dims[0]
        start, stop = (max(0, min(length, b + length if b < 0 else b)) for b in (start, stop))
        index = ins[0].index
        return [_ShapeVector(index - start) if start <= index < stop else None]
    if kind == "Concat" and int(node.attrs["axis"]) in (0, -1):
        offset, entry = 0, None
        for value, state in zip(values, ins):
            dims = value.partial_shape.dims
            if len(dims) != 1 or dims[0] < 0:
                return None
            if isinstance(state, _ShapeVector):
                if entry is not None:
                    return None
                entry = offset + state.index
            elif state is not None:
                return None
            offset += int(dims[0])
        return None if entry is None else [_ShapeVector(entry)]
    return None


@dataclass(frozen=True)
class BucketPlan:
    """How one call runs: the inputs' padded shapes, and the rows to keep of each output."""

    shapes: tuple[tuple[int, ...], ...]
    keep: tuple[tuple[tuple[int, int], ...], ...]
    """Per output: the (axis, rows) to slice it to (none: keep it whole)."""


class ShapeBuckets:
    """The bucket policy of one compiled model: its independent groups (see the module's docstring).

    :param model: the model as the device lowers it.
    """

    def __init__(self, model: Model) -> None:
        self.groups = independent_groups(model)
        self._outputs = len(model.outputs)

    def __bool__(self) -> bool:
        return bool(self.groups)

    def plan(self, shapes: Sequence[tuple[int, ...]]) -> BucketPlan | None:
        """The padded shapes for inputs of ``shapes``, or None when no dimension needs padding. A group
        whose dimensions differ in this call, or that shares a dimension with a group padded already,
        stays as it is."""
        padded = [list(s) for s in shapes]
        keep: list[list[tuple[int, int]]] = [[] for _ in range(self._outputs)]
        for group, axes in self.groups:
            sizes = {shapes[i][a] for i, a in group}
            if len(sizes) != 1:
                continue
            size = sizes.pop()
            bucket = next_bucket(size)
            if bucket == size or any(padded[i][a] != shapes[i][a] for i, a in group):
                continue
            if any(axis is not None and any(kept == axis for kept, _ in keep[o]) for o, axis in enumerate(axes)):
                continue
            for i, a in group:
                padded[i][a] = bucket
            for o, axis in enumerate(axes):
                if axis is not None:
                    keep[o].append((axis, size))
        if padded == [list(s) for s in shapes]:
            return None
        return BucketPlan(tuple(tuple(s) for s in padded), tuple(tuple(k) for k in keep))


def pad(value: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """``value`` with zeros after its elements up to ``shape`` (the same array when already that shape)."""
    if tuple(value.shape) == tuple(shape):
        return value
    return np.pad(value, [(0, s - d) for d, s in zip(value.shape, shape)])


def keep_rows(value: Any, keep: Sequence[tuple[int, int]]) -> Any:
    """``value`` sliced to ``keep``'s rows along each of their axes."""
    if not keep:
        return value
    index = [slice(None)] * value.ndim
    for axis, rows in keep:
        index[axis] = slice(0, rows)
    return value[tuple(index)]
