"""DepthToSpace and SpaceToDepth (OpenVINO opset 1): blocks of channels moved into the spatial
dimensions and back, for data ``[N, C, D1, ..., Dk]`` of any spatial rank ``k >= 1``.

Both are a reshape, a transpose and a reshape, as OpenVINO's specification writes them; ``mode`` says
whether the block index comes before the remaining channels (``blocks_first``) or after them
(``depth_first``).
"""

from __future__ import annotations

from typing import Any

from hetero_sdk.array_api import namespace
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import INT, LOWER_STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import dim_mul
from hetero_sdk.shape import DYNAMIC

__all__ = ["DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "depth_to_space", "space_to_depth"]

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
