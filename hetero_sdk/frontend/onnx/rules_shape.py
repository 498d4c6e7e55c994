"""Rules for ONNX ops that make, read and change shapes, and move data: Constant, Shape, Reshape,
Squeeze, Slice, Gather, Concat, Split, Pad, Expand..."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.frontend.onnx.types import element_type
from hetero_sdk.graph.limits import CONSTANT_ELEMENTS
from hetero_sdk.graph.node import Output
from hetero_sdk.ops.folding import constant_value

__all__: list[str] = []

_I64 = np.int64


def _out(node: object, index: int = 0) -> Output:
    return node.output(index)  # type: ignore[attr-defined, no-any-return]


def _axes(ctx: NodeContext, attribute: str, input_index: int, since_input: int) -> Output | None:
    """An axes list given as an attribute before opset ``since_input`` and as an input from then on."""
    if ctx.version < since_input:
        axes = ctx.attr(attribute, None)
        return None if axes is None else ctx.const(axes, _I64)
    return ctx.optional_input(input_index)


@rule("Constant")
def constant(ctx: NodeContext) -> Outputs:
    for name, dtype in (
        ("value_float", np.float32),
        ("value_floats", np.float32),
        ("value_int", _I64),
        ("value_ints", _I64),
        ("value_string", Type.string.numpy),
        ("value_strings", Type.string.numpy),
    ):
        if ctx.has_attr(name):
            return [ctx.const(ctx.attr(name), dtype)]
    if ctx.has_attr("value"):
        return [ctx.const(ctx.attr("value"))]
    raise ctx.unsupported("a Constant without a dense tensor, number or string value (a sparse tensor)")


@rule("Shape")
def shape(ctx: NodeContext) -> Outputs:
    shape_of = _out(opset.shape_of(ctx.input(0)))
    start, end = ctx.attr("start", 0), ctx.attr("end", None)
    if start == 0 and end is None:
        return [shape_of]
    stop = np.iinfo(_I64).max if end is None else end
    return [_out(opset.slice(shape_of, ctx.const([start], _I64), ctx.const([stop], _I64), ctx.const([1], _I64)))]


@rule("Size")
def size(ctx: NodeContext) -> Outputs:
    return [_out(opset.reduce_prod(opset.shape_of(ctx.input(0)), ctx.const(0, _I64), keep_dims=False))]


@rule("Reshape", since=5)
def reshape(ctx: NodeContext) -> Outputs:
    special_zero = not ctx.flag("allowzero", False)
    return [_out(opset.reshape(ctx.input(0), ctx.input(1), special_zero=special_zero))]


@rule("Flatten")
def flatten(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    rank = x.partial_shape.rank
    axis = ctx.attr("axis", 1)
    axis = axis + rank if axis < 0 else axis
    dims = x.partial_shape.dims
    if all(d >= 0 for d in dims[:axis]):
        first = int(np.prod(dims[:axis], dtype=_I64))
        return [_out(opset.reshape(x, ctx.const([first, -1], _I64), special_zero=False))]
    if axis == 1:  # the usual [batch, features]: the copied batch cancels, so static features stay known
        return [_out(opset.reshape(x, ctx.const([0, -1], _I64), special_zero=True))]
    shape_of = opset.shape_of(x)
    leading = opset.reduce_prod(
        opset.slice(shape_of, ctx.const([0], _I64), ctx.const([axis], _I64), ctx.const([1], _I64)),
        ctx.const([0], _I64),
        keep_dims=True,
    )
    target = opset.concat([leading, ctx.const([-1], _I64)], axis=0)
    return [_out(opset.reshape(x, target, special_zero=False))]


@rule("Squeeze")
def squeeze(ctx: NodeContext) -> Outputs:
    axes = _axes(ctx, "axes", 1, since_input=13)
    return [_out(opset.squeeze(ctx.input(0), axes))]


@rule("Unsqueeze")
def unsqueeze(ctx: NodeContext) -> Outputs:
    axes = _axes(ctx, "axes", 1, since_input=13)
    if axes is None:
        raise ctx.error("axes are required")
    return [_out(opset.unsqueeze(ctx.input(0), axes))]


@rule("Transpose")
def transpose(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    order = ctx.attr("perm", list(range(x.partial_shape.rank))[::-1])
    return [_out(opset.transpose(x, ctx.const(order, _I64)))]


@rule("Concat", since=4)
def concat(ctx: NodeContext) -> Outputs:
    values = [v for v in ctx.inputs if v is not None]
    return [_out(opset.concat(values, axis=ctx.attr("axis")))]


@rule("Split", since=2)
def split(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    axis = ctx.axis("axis", 0, x.partial_shape.rank)
    count = ctx.output_count
    if ctx.version < 13:
        lengths = ctx.attr("split", None)
        lengths_output = None if lengths is None else ctx.const(lengths, _I64)
    else:
        lengths_output = ctx.optional_input(1)
        if ctx.version >= 18 and ctx.has_attr("num_outputs"):
            count = _split_count(ctx, lengths_output is None)
    if lengths_output is None:
        size = x.partial_shape[axis]
        if size >= 0 and size % count:  # opset 18: the last part is smaller
            part = -(-size // count)
            if size < part * (count - 1):  # as ONNX Runtime refuses it
                raise ctx.error(f"{count} outputs of {part} element(s) along axis {axis} need more than its "
                                f"{size} element(s), which leaves the last output a negative length",
                                "use fewer outputs, or give the split lengths")  # fmt: skip
            lengths_output = ctx.const([part] * (count - 1) + [size - part * (count - 1)], _I64)
        else:
            node = opset.split(x, ctx.const(axis, _I64), num_splits=count)
            return [_out(node, i) for i in range(count)]
    node = opset.variadic_split(x, ctx.const(axis, _I64), lengths_output)
    return [_out(node, i) for i in range(node.get_output_size())]


def _split_count(ctx: NodeContext, without_lengths: bool) -> int:
    """Split-18's ``num_outputs``, checked against the outputs the node lists."""
    count = ctx.attr("num_outputs")
    if count < 1 or count != ctx.output_count:
        raise ctx.error(f"num_outputs is {count} but the node lists {ctx.output_count} output(s)",
                        "set num_outputs to the number of outputs (at least 1)")  # fmt: skip
    if not without_lengths:
        raise ctx.error("num_outputs and the split input are both given", "give one of them")
    return int(count)


@rule("Slice")
def slice_1(ctx: NodeContext) -> Outputs:
    starts, ends = ctx.attr("starts"), ctx.attr("ends")
    axes = ctx.attr("axes", list(range(len(starts))))
    steps = ctx.const([1] * len(starts), _I64)
    return [
        _out(opset.slice(ctx.input(0), ctx.const(starts, _I64), ctx.const(ends, _I64), steps, ctx.const(axes, _I64)))
    ]


@rule("Slice", since=10)
def slice_10(ctx: NodeContext) -> Outputs:
    starts = _onnx_starts(ctx)
    steps = ctx.optional_input(4)
    if steps is None:
        ones = ctx.const(1, starts.element_type)
        steps = _out(opset.broadcast(ones, opset.shape_of(starts)))
    return [_out(opset.slice(ctx.input(0), starts, ctx.input(2), steps, ctx.optional_input(3)))]


def _onnx_starts(ctx: NodeContext) -> Output:
    """Slice's starts, where they differ from the opset's (Python's) slicing made ONNX's: with a
    negative step a start below ``-size`` clamps to index 0 in ONNX, and takes nothing in Python.
    Known starts, steps and axes over static dims are rewritten; other cases keep Python's reading."""
    starts, steps = ctx.constant_input(1), ctx.constant_input(4)
    x = ctx.input(0)
    if starts is None or steps is None or (ctx.has_input(3) and ctx.constant_input(3) is None):
        return ctx.input(1)
    rank = x.partial_shape.rank
    axes = ctx.constant_input(3) if ctx.has_input(3) else np.arange(len(starts))
    fixed = np.array(starts, copy=True)
    for k, (axis, step) in enumerate(zip(np.asarray(axes).reshape(-1), np.asarray(steps).reshape(-1))):
        size = x.partial_shape.dims[ctx.check_axis(int(axis), rank, "axes (input 3)")]
        if step < 0 and size > 0 and fixed[k] < -size:
            fixed[k] = 0
    return ctx.const(fixed) if not np.array_equal(fixed, starts) else ctx.input(1)


@rule("Gather")
def gather(ctx: NodeContext) -> Outputs:
    return [_out(opset.gather(ctx.input(0), ctx.input(1), ctx.const(ctx.attr("axis", 0), _I64)))]


@rule("Expand", since=8)
def expand(ctx: NodeContext) -> Outputs:
    return [_out(opset.broadcast(ctx.input(0), ctx.input(1), mode="bidirectional"))]


@rule("Tile", since=6)
def tile(ctx: NodeContext) -> Outputs:
    return [_out(opset.tile(ctx.input(0), ctx.input(1)))]


@rule("ConstantOfShape", since=9)
def constant_of_shape(ctx: NodeContext) -> Outputs:
    value = ctx.attr("value", None)
    fill = np.zeros((), np.float32) if value is None else np.asarray(value).reshape(())
    return [_out(opset.broadcast(ctx.const(fill), ctx.input(0)))]


@rule("Range", since=11)
def range_(ctx: NodeContext) -> Outputs:
    # ONNX's own function bodies (AffineGrid's) pass one-element 1-D tensors where scalars are due
    start, stop, step = (_scalar_of(ctx, i) for i in range(3))
    return [_out(opset.range(start, stop, step, output_type=start.element_type))]


def _scalar_of(ctx: NodeContext, index: int) -> Output:
    """Input ``index`` as a scalar: itself, or reshaped when it is a one-element 1-D tensor."""
    value = ctx.input(index)
    if value.partial_shape.rank == 1 and value.partial_shape[0] in (1, -1):
        return _out(opset.reshape(value, ctx.const([], _I64), special_zero=False))
    return value


@rule("Pad", since=2)
def pad_2(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    pads = ctx.attr("pads" if ctx.has_attr("pads") else "paddings")
    half = len(pads) // 2
    value = ctx.const(ctx.attr("value", 0.0), x.element_type)
    return [_pad(ctx, x, ctx.const(pads[:half], _I64), ctx.const(pads[half:], _I64), value)]


@rule("Pad", since=11)
def pad_11(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    rank = x.partial_shape.rank
    pads = ctx.input(1)
    if ctx.has_input(3):  # opset 18: pads for the listed axes only, begins then ends
        pads = _pads_on_axes(ctx, rank)
    begins = _out(opset.slice(pads, ctx.const([0], _I64), ctx.const([rank], _I64), ctx.const([1], _I64)))
    ends = _out(opset.slice(pads, ctx.const([rank], _I64), ctx.const([2 * rank], _I64), ctx.const([1], _I64)))
    value = ctx.optional_input(2)
    if value is not None:
        value = _out(opset.reshape(value, ctx.const([], _I64), special_zero=False))
    return [_pad(ctx, x, begins, ends, value)]


def _pads_on_axes(ctx: NodeContext, rank: int) -> Output:
    """Opset 18's pads for the listed axes spread over all ``2 * rank`` slots: a constant when pads and
    axes are known (so devices with static shapes see them), else a ScatterElementsUpdate into zeros."""
    axes, given = ctx.constant_input(3), ctx.constant_input(1)
    if axes is not None and given is not None:
        full = np.zeros(2 * rank, _I64)
        listed = [ctx.check_axis(int(a), rank, "axes (input 3)") for a in axes.reshape(-1)]
        for i, axis in enumerate(listed):
            full[axis], full[rank + axis] = given.reshape(-1)[i], given.reshape(-1)[len(listed) + i]
        return ctx.const(full)
    positive = opset.floor_mod(opset.convert(ctx.input(3), Type.i64), ctx.const(rank, _I64))
    slots = opset.concat([positive, opset.add(positive, ctx.const(rank, _I64))], 0)
    pads = opset.convert(ctx.input(1), Type.i64)
    return _out(opset.scatter_elements_update(ctx.const(np.zeros(2 * rank, _I64)), slots, pads))


def _pad(ctx: NodeContext, x: Output, begins: Output, ends: Output, value: Output | None) -> Output:
    mode = ctx.attr("mode", "constant")
    if mode == "wrap":
        return _wrap(ctx, x, begins, ends)
    modes = {"constant": "constant", "reflect": "reflect", "edge": "edge"}
    if mode not in modes:
        raise ctx.unsupported(f"mode '{mode}'")
    return _out(opset.pad(x, begins, ends, pad_mode=modes[mode], pad_value=value if mode == "constant" else None))


def _wrap(ctx: NodeContext, x: Output, begins: Output, ends: Output) -> Output:
    """Pad mode ``wrap`` (the input repeated periodically): per axis, a Gather of the positions
    ``-begin .. size + end`` modulo the size (constants where pads and the size are known)."""
    before, after = constant_value(begins), constant_value(ends)
    shape = None
    for axis in range(x.partial_shape.rank):
        size = x.partial_shape[axis]
        if before is not None and after is not None and size > 0:
            first, last = int(before.reshape(-1)[axis]), int(after.reshape(-1)[axis])
            if first == 0 and last == 0:
                continue
            CONSTANT_ELEMENTS.check(size + first + last, f"wrapping axis {axis} with pads {first}, {last}", ctx.error)
            positions = ctx.const(np.arange(-first, size + last) % size, _I64)
        else:
            shape = shape or _out(opset.shape_of(x, Type.i64))
            index = ctx.const([axis], _I64)
            length = _out(opset.reshape(opset.gather(shape, index, ctx.const(0, _I64)), ctx.const([], _I64), False))
            b, e = (_out(opset.reshape(opset.gather(p, index, ctx.const(0, _I64)), ctx.const([], _I64), False))
                    for p in (begins, ends))  # fmt: skip
            steps = opset.range(opset.negative(b), opset.add(length, e), ctx.const(1, _I64), Type.i64)
            positions = _out(opset.floor_mod(steps, length))
        x = _out(opset.gather(x, positions, ctx.const(axis, _I64)))
    return x


@rule("NonZero", since=9)
def non_zero(ctx: NodeContext) -> Outputs:
    return [_out(opset.non_zero(ctx.input(0), output_type=Type.i64))]


@rule("GatherElements", since=11)
def gather_elements(ctx: NodeContext) -> Outputs:
    return [_out(opset.gather_elements(ctx.input(0), ctx.input(1), axis=ctx.attr("axis", 0)))]


@rule("Trilu", since=14)
def trilu(ctx: NodeContext) -> Outputs:
    """Upper or lower triangle of the last two axes, as OpenVINO's frontend decomposes it: a mask from
    ``column - row`` against ``k``, then Select."""
    x = ctx.input(0)
    k = ctx.optional_input(1)
    k = ctx.const(0, _I64) if k is None else _out(opset.reshape(k, ctx.const([], _I64), special_zero=False))
    shape = opset.shape_of(x)
    zero, one = ctx.const(0, _I64), ctx.const(1, _I64)
    rows = opset.range(zero, opset.gather(shape, ctx.const(-2, _I64), zero), one, output_type=Type.i64)
    cols = opset.range(zero, opset.gather(shape, ctx.const(-1, _I64), zero), one, output_type=Type.i64)
    offset = opset.subtract(opset.unsqueeze(cols, ctx.const([0], _I64)), opset.unsqueeze(rows, ctx.const([1], _I64)))
    keep = opset.greater_equal(offset, k) if ctx.flag("upper", True) else opset.less_equal(offset, k)
    return [_out(opset.select(keep, x, ctx.const(0, x.element_type)))]


@rule("OneHot", since=9)
def one_hot(ctx: NodeContext) -> Outputs:
    """``values[1]`` where an index equals its position along the new ``axis``, else ``values[0]``;
    negative indices count from ``depth`` (as OpenVINO's frontend decomposes it, with existing ops)."""
    indices = _out(opset.convert(ctx.input(0), Type.i64))
    known = ctx.constant_input(1)
    if known is not None and known.size == 1 and known.reshape(()) < 1:
        raise ctx.error(f"depth is {known.reshape(()).item()}", "depth is the number of classes and must be 1 or more")
    depth = _out(opset.convert(opset.reshape(ctx.input(1), ctx.const([], _I64), special_zero=False), Type.i64))
    values = ctx.input(2)
    rank = indices.partial_shape.rank + 1
    axis = ctx.axis("axis", -1, rank)
    indices = _out(opset.select(opset.less(indices, ctx.const(0, _I64)), opset.add(indices, depth), indices))
    positions = opset.range(ctx.const(0, _I64), depth, ctx.const(1, _I64), output_type=Type.i64)
    shape = [1] * rank
    shape[axis] = -1
    positions = opset.reshape(positions, ctx.const(shape, _I64), special_zero=False)
    hit = opset.equal(opset.unsqueeze(indices, ctx.const([axis], _I64)), positions)
    zero, one = ctx.const(0, _I64), ctx.const(1, _I64)
    off = opset.gather(values, zero, zero)
    on = opset.gather(values, one, zero)
    return [_out(opset.select(hit, on, off))]


@rule("EyeLike", since=9)
def eye_like(ctx: NodeContext) -> Outputs:
    """Ones on the ``k``-th diagonal of a matrix shaped like the input, zeros elsewhere."""
    x = ctx.input(0)
    dtype = element_type(ctx.attr("dtype"), f"ONNX {ctx.describe()} dtype") if ctx.has_attr("dtype") else x.element_type
    shape = opset.shape_of(x)
    zero, one = ctx.const(0, _I64), ctx.const(1, _I64)
    rows = opset.range(zero, opset.gather(shape, zero, zero), one, output_type=Type.i64)
    cols = opset.range(zero, opset.gather(shape, one, zero), one, output_type=Type.i64)
    offset = opset.subtract(opset.unsqueeze(cols, ctx.const([0], _I64)), opset.unsqueeze(rows, ctx.const([1], _I64)))
    diagonal = opset.equal(offset, ctx.const(ctx.attr("k", 0), _I64))
    return [_out(opset.convert(diagonal, dtype))]


# -- DepthToSpace, SpaceToDepth: OpenVINO's ops of the same names -----------------------------------------

_BLOCK_MODES = {"DCR": "blocks_first", "CRD": "depth_first"}
"""ONNX's modes as OpenVINO names them: DCR splits the channels block first, CRD channels first."""


def _blocks(ctx: NodeContext) -> tuple[Output, int, str]:
    """The input (NCHW), the block size and OpenVINO's mode of DepthToSpace or SpaceToDepth, checked."""
    x, blocksize, mode = ctx.input(0), ctx.attr("blocksize"), ctx.attr("mode", "DCR")
    if x.partial_shape.rank != 4:
        raise ctx.error(f"the input must be 4-D [N, C, H, W], not {x.partial_shape.rank}-D")
    if blocksize < 1:
        raise ctx.error(f"blocksize must be positive, not {blocksize}")
    if mode not in _BLOCK_MODES:
        raise ctx.error(f"mode must be DCR or CRD, not '{mode}'")
    _, channels, height, width = x.partial_shape.dims
    if ctx.op_type == "DepthToSpace" and channels >= 0 and channels % (blocksize * blocksize):
        raise ctx.error(f"{channels} channels do not split into blocks of {blocksize}x{blocksize}")
    if ctx.op_type == "SpaceToDepth" and any(d >= 0 and d % blocksize for d in (height, width)):
        raise ctx.error(f"height and width {height}x{width} must be multiples of blocksize {blocksize}")
    return x, blocksize, _BLOCK_MODES[mode]


@rule("DepthToSpace")
def depth_to_space(ctx: NodeContext) -> Outputs:
    """Opset 1 (DCR only), 11 (``mode``), 13 and 28 (more types): one computation."""
    x, b, mode = _blocks(ctx)
    return [_out(opset.depth_to_space(x, mode, b))]


@rule("SpaceToDepth")
def space_to_depth(ctx: NodeContext) -> Outputs:
    """Opset 1, 13 (more types) and 28 (``mode``, CRD besides the DCR order of the older versions)."""
    x, b, mode = _blocks(ctx)
    return [_out(opset.space_to_depth(x, mode, b))]
