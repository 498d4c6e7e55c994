"""com.microsoft GatherBlockQuantized, the quantized embedding lookup of onnxruntime-genai's models: rows
of a u8 table holding 4- or 8-bit values packed along its last axis (lowest bits first), each block of
``block_size`` values with a scale and a zero point (packed the same way; ``2^(bits-1)`` when left out),
gathered along ``gather_axis`` and dequantized.

The kernel is array-API code (numpy on TEMPLATE, traced by JAX on XLA) that gathers the packed rows,
scales and zero points first and dequantizes only them: no dequantized copy of the table is made.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hetero_sdk import Node, PartialShape, Type
from hetero_sdk.extensions import OnnxRule
from hetero_sdk.plugin import (
    INDEX_TYPES,
    INT,
    REAL_TYPES,
    Attr,
    Input,
    OpDef,
    OutputSpec,
    namespace,
    widened,
)
from hetero_sdk.plugin import OnnxNodeContext as NodeContext

from hetero_sdk_contrib.checks import Outputs, normalize_axis
from hetero_sdk_contrib.constants import DOMAIN, VERSION
from hetero_sdk_contrib.ops_matmul_nbits import unpacked

__all__ = ["GATHER_BLOCK_QUANTIZED", "ONNX_RULES", "OPS", "RECIPES"]


def _infer(node: Node) -> list[OutputSpec]:
    data, indices = node.input_value(0).partial_shape, node.input_value(1).partial_shape
    element_type = node.input_value(2).element_type
    bits, block = node.attrs["bits"], node.attrs["block_size"]
    if block < 16 or block & (block - 1):
        raise node.error(f"attribute block_size={block} must be a power of 2, at least 16")
    if node.get_input_size() > 3 and node.input_value(3).element_type != Type.u8:
        raise node.error(f"zero_points has element type {node.input_value(3).element_type.value}; expected u8")
    if not data.rank_is_static or not indices.rank_is_static:
        return [(element_type, PartialShape.dynamic())]
    axis = normalize_axis(node, node.attrs["gather_axis"], data.rank, "gather_axis")
    if axis == data.rank - 1:
        raise node.error("gather_axis is the quantized (last) axis; gather along another one")
    last = data[data.rank - 1] * (8 // bits) if data[data.rank - 1] >= 0 else -1
    dims = [*data.dims[:axis], *indices.dims, *data.dims[axis + 1 : -1], last]
    return [(element_type, PartialShape(dims))]


def _gather_block_quantized(node: Node, data: Any, indices: Any, scales: Any, zero_points: Any | None = None) -> Any:
    xp = namespace(data)
    bits, block = node.attrs["bits"], node.attrs["block_size"]
    axis = node.attrs["gather_axis"] % data.ndim
    size = data.shape[axis]
    flat = xp.reshape(indices, (-1,))
    flat = xp.where(flat < 0, flat + size, flat)
    values = data.shape[-1] * (8 // bits)
    q = xp.astype(unpacked(xp.take(data, flat, axis=axis), bits, values), xp.float32)
    blocks = scales.shape[-1]
    column_block = xp.asarray(np.arange(values) // block)
    scale = xp.take(widened(xp.take(scales, flat, axis=axis)), column_block, axis=-1)
    if zero_points is None:
        zero = float(1 << (bits - 1))
    else:
        zero_rows = xp.astype(unpacked(xp.take(zero_points, flat, axis=axis), bits, blocks), xp.float32)
        zero = xp.take(zero_rows, column_block, axis=-1)
    out = (q - zero) * scale
    shape = (*data.shape[:axis], *indices.shape, *data.shape[axis + 1 : -1], values)
    return xp.reshape(out, shape)


GATHER_BLOCK_QUANTIZED = OpDef(
    "GatherBlockQuantized",
    "contrib",
    _infer,
    inputs=(
        Input("data", frozenset({Type.u8}), doc="the table, 4- or 8-bit values packed along the last axis"),
        Input("indices", INDEX_TYPES, doc="positions along gather_axis (negative from the end)"),
        Input("scales", REAL_TYPES, doc="data's shape, the last axis one per block"),
        Input("zero_points", frozenset({Type.u8}), optional=True, doc="packed like data; 2^(bits-1) by default"),
    ),
    attrs=(
        Attr("gather_axis", INT, 0, doc="the axis indices pick along"),
        Attr("block_size", INT, 128, minimum=16, doc="values per block of the last axis"),
        Attr("bits", INT, 4, choices=(4, 8), doc="bits per value"),
    ),
    version=VERSION,
    evaluate=_gather_block_quantized,
    doc="Gather of a block-quantized table, dequantized: (q - zero_point) * scale of each value's block.",
)

OPS = [GATHER_BLOCK_QUANTIZED]
"""The op definitions this module contributes."""


def gather_block_quantized_rule(ctx: NodeContext) -> Outputs:
    """GatherBlockQuantized: data (u8), indices, scales, [zero_points]; gather_axis, quantize_axis (the
    last), block_size, bits. int4/uint4 tables are refused (u8 packing only)."""
    data = ctx.input(0)
    if data.element_type != Type.u8:
        raise ctx.unsupported(f"a table of {data.element_type.value} (u8 with bits=4 or 8 only)")
    rank = data.partial_shape.rank
    if ctx.axis("quantize_axis", 1, rank) != rank - 1:
        raise ctx.unsupported("a quantize_axis other than the last")
    attrs = {
        "gather_axis": ctx.axis("gather_axis", 0, rank),
        "block_size": ctx.attr("block_size", 128),
        "bits": ctx.attr("bits", 4),
    }
    inputs = [data, ctx.input(1), ctx.input(2)]
    if (zero := ctx.optional_input(3)) is not None:
        inputs.append(zero)
    return [Node(GATHER_BLOCK_QUANTIZED, inputs, attrs).output(0)]


ONNX_RULES = [
    OnnxRule(DOMAIN, "GatherBlockQuantized", gather_block_quantized_rule, makes=("GatherBlockQuantized",)),
]
"""The ONNX ops this module translates."""


def _case(b: Any, op_type: str) -> Any:
    bits, block = b.pick([4, 8]), 16
    rows, blocks = b.integer(1, 6), b.integer(1, 3)
    data = b.operand(b.values([rows, blocks * block * bits // 8], np.uint8, 0, 255), "data", constant=True)
    indices = b.input(b.values(b.shape(0, 2, 1, 3), np.int64, 0, rows - 1), "indices")
    scales = b.operand(b.values([rows, blocks], np.float32, 0.01, 0.1), "scales", constant=True)
    attrs = {"gather_axis": 0, "block_size": block, "bits": bits}
    node = Node(GATHER_BLOCK_QUANTIZED, [data.output(0), indices.output(0), scales.output(0)], attrs, "op")
    return b.case(op_type, node, "simple", **attrs)


RECIPES = {"GatherBlockQuantized": _case}
"""Conformance-kit case recipes by op type."""
