"""What XLA does to a Focus layer (YOLOv5's, YOLOX's stem) or a SpaceToDepth in front of a convolution: one
strided convolution over the image.

Focus concatenates the four strided slices ``x[..., ::2, ::2]``, ``x[..., 1::2, ::2]``, ``x[..., ::2, 1::2]``,
``x[..., 1::2, 1::2]`` of an image ``[N, C, H, W]`` on the channels (in whatever order), a SpaceToDepth of block 2
up to the channels' order; a convolution follows. Channel ``c'`` of the result is source channel ``c`` shifted by
``(dy, dx)`` and subsampled by the block ``B``: ``x'[c', i, j] = x[c, B i + dy, B j + dx]``. A KxK convolution of
``x'`` at stride ``s``, pads ``p``, reads ``x'[c', s i + a - p]`` = ``x[c, B s i + (B a + dy) - B p]``: it is one
convolution of ``x`` with a ``BK x BK`` kernel at stride ``B s``, pads ``B p``, whose tap ``(B a + dy, B b + dx)``
on channel ``c`` is the old tap ``(a, b)`` on ``c'`` (every new tap one old one: the same sums in another
order). Rows and columns past ``x'`` are past ``x`` (``H = B H'``), so the padding means the same.

On the XLA device YOLOX's Focus was a copy of the whole image into ``[N, H/2, W/2, 4C]`` (``transpose_copy_fusion``,
1.4 ms at 416x416) before a 12-channel convolution; rewritten, the stem reads the image where it lies (the native
stem kernel, :mod:`hetero_sdk_jax.lowering.kernels.stem_conv`). :class:`FocusConvolution` leaves the graph as it is
where anything else reads the slices or their concatenation.

Where the stem kernel does not run (native kernels off, no compiler, another platform), the lowering computes
such a convolution the other way round (:func:`as_focus`): the Focus of the image, then XLA's convolution of
``B^2 C`` channels, the graph's form before the rewrite. XLA's own convolution of a 3-channel image by a 6x6
kernel took ten times as long (YOLOX's stem: 34 ms against 3.2).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np
from hetero_sdk import Model, Node, Output, opset
from hetero_sdk.plugin import ConsumerMap, MatcherPass, constant_value, replace_node, resolve_pads, slice_index

__all__ = ["FocusConvolution", "as_focus", "focus_block", "focus_filters", "focus_offsets"]

_SLICES = frozenset({"Slice", "StridedSlice"})
Channels = list[tuple[int, int, int]]
"""Each channel of a Focus as ``(c, dy, dx)``: source channel ``c`` at block offset ``(dy, dx)``."""


def _axis_indices(node: Node, rank: int, sizes: list[np.ndarray]) -> list[np.ndarray] | None:
    """``sizes`` (each axis's source indices) after the Slice or StridedSlice ``node``, when its bounds are
    constants and it slices each axis apart (no new, shrunk or ellipsis axes); else None."""
    bounds = [constant_value(node.input_value(i)) for i in range(1, node.get_input_size())]
    if any(b is None for b in bounds):
        return None
    ints = [[int(v) for v in np.asarray(b).reshape(-1)] for b in bounds]
    if node.type_name == "Slice":
        index = slice_index(rank, ints[0], ints[1], ints[2], ints[3] if len(ints) > 3 else None)
    else:
        masks = {name: list(node.attrs[name]) for name in ("new_axis_mask", "shrink_axis_mask", "ellipsis_mask")}
        if any(any(mask) for mask in masks.values()):
            return None
        count = len(ints[0])
        steps = ints[2] if len(ints) > 2 else [1] * count
        begin_mask = (list(node.attrs["begin_mask"]) + [0] * count)[:count]
        end_mask = (list(node.attrs["end_mask"]) + [0] * count)[:count]
        index = tuple(
            slice(None if begin_mask[k] else ints[0][k], None if end_mask[k] else ints[1][k], steps[k])
            for k in range(count)
        ) + (slice(None),) * (rank - count)
    if len(index) != rank:
        return None
    return [axis[part] for axis, part in zip(sizes, index)]


def focus_offsets(part: Output, users: ConsumerMap) -> tuple[Output, int, int, int] | None:
    """``(x, block, dy, dx)`` when ``part`` is ``x[:, :, dy::block, dx::block]`` of a static 4-D ``x`` whose height
    and width divide by ``block`` (>= 2), written as a chain of Slice or StridedSlice ops each read by the next
    alone (``part`` itself may have other readers: the caller checks); else None."""
    node = part.node
    chain: list[Node] = []
    while node.type_name in _SLICES:
        if chain and users.count(node.output(0)) != 1:
            return None
        chain.append(node)
        node = node.input_value(0).node
    if not chain:
        return None
    source = chain[-1].input_value(0)
    shape = source.partial_shape
    if not shape.is_static or shape.rank != 4:
        return None
    dims = [int(d) for d in shape.to_shape()]
    sizes: list[np.ndarray] | None = [np.arange(d) for d in dims]
    for step in reversed(chain):
        sizes = _axis_indices(step, 4, sizes) if sizes is not None else None
    if sizes is None or any(len(sizes[a]) != dims[a] or np.any(sizes[a] != np.arange(dims[a])) for a in (0, 1)):
        return None
    rows, cols = sizes[2], sizes[3]
    if len(rows) == 0 or len(cols) == 0:
        return None
    block = dims[2] // len(rows)
    if block < 2 or dims[2] != block * len(rows) or dims[3] != block * len(cols):
        return None
    dy, dx = int(rows[0]), int(cols[0])
    if dy >= block or dx >= block:
        return None
    if np.any(rows != dy + block * np.arange(len(rows))) or np.any(cols != dx + block * np.arange(len(cols))):
        return None
    return source, block, dy, dx


def _space_to_depth_channels(node: Node) -> tuple[Output, int, Channels] | None:
    """``(x, block, [(c, dy, dx) for each output channel])`` of a 2-D SpaceToDepth ``node`` of static ``x``."""
    source = node.input_value(0)
    shape = source.partial_shape
    if not shape.is_static or shape.rank != 4:
        return None
    block = int(node.attrs["block_size"])
    channels = int(shape[1])
    if block < 2:
        return None
    if node.attrs["mode"] == "blocks_first":
        order = [(c, dy, dx) for dy in range(block) for dx in range(block) for c in range(channels)]
    else:
        order = [(c, dy, dx) for c in range(channels) for dy in range(block) for dx in range(block)]
    return source, block, order


def _focus_channels(node: Node, users: ConsumerMap) -> tuple[Output, int, Channels, list[Node]] | None:
    """``(x, block, [(c, dy, dx) per channel], nodes)`` when ``node``'s output is a Focus of ``x`` (a Concat on
    the channels of strided slices of ``x`` covering every ``(c, dy, dx)`` once, or a SpaceToDepth), its nodes
    read by nothing outside; else None."""
    if node.type_name == "SpaceToDepth":
        found = _space_to_depth_channels(node)
        return None if found is None else (*found, [node])
    if node.type_name != "Concat" or node.attrs["axis"] not in (1, -3):
        return None
    source: Output | None = None
    block = 0
    order: Channels = []
    nodes = [node]
    for part in node.input_values():
        if users.count(part) != 1 or users.feeds_result(part):
            return None
        offsets = focus_offsets(part, users)
        if offsets is None:
            return None
        x, size, dy, dx = offsets
        if source is None:
            source, block = x, size
        elif (x.node, x.index) != (source.node, source.index) or size != block:
            return None
        order += [(c, dy, dx) for c in range(int(x.partial_shape[1]))]
        step = part.node
        while step.type_name in _SLICES:
            nodes.append(step)
            step = step.input_value(0).node
    if source is None:
        return None
    channels = int(source.partial_shape[1])
    expected = {(c, dy, dx) for c in range(channels) for dy in range(block) for dx in range(block)}
    if len(order) != len(expected) or set(order) != expected:
        return None
    return source, block, order, nodes


def focus_filters(w: np.ndarray, block: int, order: Channels, channels: int) -> np.ndarray:
    """The filters ``[O, C, B K, B K]`` over the image of filters ``w`` ``[O, B^2 C, K, K]`` over its Focus whose
    channel ``k`` is ``order[k] = (c, dy, dx)``: ``new[o, c, B a + dy, B b + dx] = w[o, k, a, b]``."""
    outputs, _, kh, kw = w.shape
    new = np.zeros((outputs, channels, block * kh, block * kw), w.dtype)
    for k, (c, dy, dx) in enumerate(order):
        new[:, c, dy::block, dx::block] = w[:, k]
    return new


class FocusConvolution(MatcherPass):
    """Rewrites a Convolution (2-D, dilation 1, constant filters) of a Focus of ``x`` (strided slices of ``x``
    concatenated on the channels, covering every block offset of every channel once; or a SpaceToDepth) that
    nothing else reads into one Convolution of ``x`` with a ``B K`` kernel at stride ``B s`` and pads ``B p``."""

    name = "XlaFocusConvolution"
    anchors = ("Convolution",)

    def apply(self, model: Model, node: Node, users: ConsumerMap) -> bool:
        data, filters = node.input_value(0), constant_value(node.input_value(1))
        if filters is None or filters.ndim != 4 or any(d != 1 for d in node.attrs["dilations"]):
            return False
        if users.count(data) != 1 or users.feeds_result(data):
            return False
        found = _focus_channels(data.node, users)
        if found is None:
            return False
        source, block, order, nodes = found
        if filters.shape[1] != len(order):
            return False
        attrs = node.attrs
        kernel = list(filters.shape[2:])
        focus_sizes = [int(d) for d in data.partial_shape.to_shape()[2:]]
        begin, end = resolve_pads(
            attrs["auto_pad"], focus_sizes, kernel, attrs["strides"], attrs["dilations"],
            attrs["pads_begin"], attrs["pads_end"],
        )  # fmt: skip
        channels = int(source.partial_shape[1])
        conv = opset.convolution(
            source,
            opset.constant(focus_filters(filters, block, order, channels), node.input_value(1).element_type),
            [block * s for s in attrs["strides"]],
            [block * p for p in begin],
            [block * p for p in end],
            [1, 1],
            "explicit",
        )
        replace_node(model, node, conv, fused=nodes, consumers=users)
        return True


def focus_block(
    sizes: Sequence[int], kernel: Sequence[int], strides: Sequence[int], padding: Sequence[tuple[int, int]],
    dilations: Sequence[int],
) -> int | None:  # fmt: skip
    """The block ``B`` when a 2-D convolution of an image of spatial ``sizes`` is :class:`FocusConvolution`'s
    result, a Focus of block ``B`` then a convolution at stride 1: strides ``(B, B)`` (``2 <= B <= 4``), dilation 1,
    the kernel (at most ``4 B``), the leading pads and the image divisible by ``B``; else None (a ViT's 16x16
    patches, say, are left to XLA's convolution)."""
    block = strides[0]
    if len(strides) != 2 or not 2 <= block <= 4 or strides[1] != block or any(d != 1 for d in dilations):
        return None
    if max(kernel) > 4 * block:
        return None
    divisible = [*kernel, *sizes, padding[0][0], padding[1][0]]
    return block if all(v % block == 0 for v in divisible) else None


def as_focus(
    x: Any, w: Any, block: int, padding: Sequence[tuple[int, int]],
    conv: Callable[[Any, Any, Sequence[tuple[int, int]]], Any],
) -> Any:  # fmt: skip
    """The convolution of ``x`` ``[N, C, H, W]`` by ``w`` ``[B K, B K, C, O]`` at stride ``B`` (:func:`focus_block`)
    as the Focus of ``x`` moved channels-last, ``[N, H/B, W/B, B^2 C]`` (channel ``(dy B + dx) C + c`` is
    ``x[:, c, dy::B, dx::B]``), convolved by ``conv(focus, filters, pads)`` at stride 1 with ``filters``
    ``[K, K, B^2 C, O]`` (``filters[a, b, (dy B + dx) C + c] = w[B a + dy, B b + dx, c]``) and ``pads`` giving the
    same ``[N, OH, OW, O]``."""
    channels, (height, width) = x.shape[1], x.shape[2:]
    parts = [x[:, :, dy::block, dx::block] for dy in range(block) for dx in range(block)]
    focus = jnp.transpose(jnp.concatenate(parts, axis=1), (0, 2, 3, 1))
    kh, kw, _, outputs = w.shape
    filters = w.reshape(kh // block, block, kw // block, block, channels, outputs)
    filters = jnp.transpose(filters, (0, 2, 1, 3, 4, 5)).reshape(kh // block, kw // block, -1, outputs)
    pads = []
    for size, k, (begin, end) in zip((height, width), (kh, kw), padding):
        out = (size + begin + end - k) // block + 1
        pads.append((begin // block, out - 1 + k // block - size // block - begin // block))
    return conv(focus, filters, pads)
