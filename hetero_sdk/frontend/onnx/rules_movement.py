"""Rules for ONNX's data movement ops: Transpose, Concat, Split, Gather, GatherElements, Pad,
DepthToSpace and SpaceToDepth."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.graph.limits import CONSTANT_ELEMENTS
from hetero_sdk.graph.node import Output
from hetero_sdk.ops.folding import constant_value

__all__: list[str] = []


_I64 = np.int64


def _out(node: object, index: int = 0) -> Output:
    return node.output(index)  # type: ignore[attr-defined, no-any-return]


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


@rule("Gather")
def gather(ctx: NodeContext) -> Outputs:
    return [_out(opset.gather(ctx.input(0), ctx.input(1), ctx.const(ctx.attr("axis", 0), _I64)))]


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


@rule("GatherElements", since=11)
def gather_elements(ctx: NodeContext) -> Outputs:
    return [_out(opset.gather_elements(ctx.input(0), ctx.input(1), axis=ctx.attr("axis", 0)))]


_BLOCK_MODES = {"DCR": "blocks_first", "CRD": "depth_first"}


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
