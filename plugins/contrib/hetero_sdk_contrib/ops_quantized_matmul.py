"""com.microsoft's integer matmuls to float, as ONNX Runtime's dynamic quantizer writes them:
MatMulIntegerToFloat (``(A - a_zero) (B - b_zero) a_scale b_scale + bias``) and DynamicQuantizeMatMul
(the same with A quantized to u8 at run time, as DynamicQuantizeLinear does).

The integer products accumulate exactly in i32: the array-API kernels on TEMPLATE, an i8 x i8 dot with
i32 accumulation on XLA (:mod:`.xla_quantized_matmul`); only the scaling is floating point. Scales and
zero points are per tensor or, for B, per column.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hetero_sdk import Node, Output, PartialShape, Type
from hetero_sdk.extensions import OnnxRule
from hetero_sdk.plugin import Input, OpDef, OutputSpec, namespace
from hetero_sdk.plugin import OnnxNodeContext as NodeContext

from hetero_sdk_contrib.checks import Outputs
from hetero_sdk_contrib.constants import DOMAIN, VERSION

__all__ = [
    "DYNAMIC_QUANTIZE_MATMUL", "KERNELS", "MATMUL_INTEGER_TO_FLOAT", "ONNX_RULES", "OPS", "RECIPES",
    "dynamically_quantized", "integer_matmul",
]  # fmt: skip

_INT8 = frozenset({Type.i8, Type.u8})
_F32 = frozenset({Type.f32})


def integer_matmul(a: Any, a_zero: Any | None, b: Any, b_zero: Any | None) -> Any:
    """``(a - a_zero) @ (b - b_zero)``, accumulated exactly in i32 (zero points per tensor, or per column
    of ``b``; None for 0)."""
    xp = namespace(a)
    shifted_a, shifted_b = xp.astype(a, xp.int32), xp.astype(b, xp.int32)
    if a_zero is not None:
        shifted_a = shifted_a - xp.astype(a_zero, xp.int32)
    if b_zero is not None:
        shifted_b = shifted_b - xp.astype(b_zero, xp.int32)
    return xp.matmul(shifted_a, shifted_b)


def dynamically_quantized(x: Any) -> tuple[Any, Any, Any]:
    """``x`` quantized to u8 as DynamicQuantizeLinear does: the range of ``x`` and 0 over 255 levels,
    the zero point rounded half to even; returns (values, scale, zero point)."""
    xp = namespace(x)
    low = xp.minimum(xp.min(x), 0.0)
    high = xp.maximum(xp.max(x), 0.0)
    scale = (high - low) / 255.0
    safe = xp.where(scale == 0, 1.0, scale)
    zero = xp.clip(xp.round(-low / safe), 0.0, 255.0)
    values = xp.clip(xp.round(x / safe) + zero, 0.0, 255.0)
    return xp.astype(values, xp.uint8), xp.astype(scale, xp.float32), xp.astype(zero, xp.uint8)


def _matmul_shape(node: Node) -> PartialShape:
    """A (..., K) times B (K, N): (..., N)."""
    a, b = node.input_value(0).partial_shape, node.input_value(1).partial_shape
    if b.rank_is_static and b.rank != 2:
        raise node.error(f"B has shape {b}; expected (K, N)")
    if not a.rank_is_static:
        return a
    if a.rank < 1:
        raise node.error("A is a scalar; expected (..., K)")
    columns = b[1] if b.rank_is_static else -1
    if b.rank_is_static and a[-1] >= 0 and b[0] >= 0 and a[-1] != b[0]:
        raise node.error(f"A {a} and B {b} do not chain: their K differ")
    return PartialShape([*a.dims[:-1], columns])


def _check_per_column(node: Node, index: int, what: str) -> None:
    if index >= node.get_input_size():
        return
    shape = node.input_value(index).partial_shape
    columns = node.input_value(1).partial_shape
    n = columns[1] if columns.rank_is_static and columns.rank == 2 else -1
    if shape.rank_is_static and (shape.rank > 1 or (shape.rank == 1 and shape[0] not in (-1, 1, n))):
        raise node.error(f"{what} has shape {shape}; expected a scalar or one value per column of B")


def _infer_integer_to_float(node: Node) -> list[OutputSpec]:
    for index, what in ((3, "b_scale"), (5, "b_zero_point")):
        _check_per_column(node, index, what)
    return [(Type.f32, _matmul_shape(node))]


def _infer_dynamic(node: Node) -> list[OutputSpec]:
    for index, what in ((2, "b_scale"), (3, "b_zero_point")):
        _check_per_column(node, index, what)
    return [(Type.f32, _matmul_shape(node))]


def _integer_to_float(
    node: Node,
    a: Any,
    b: Any,
    a_scale: Any,
    b_scale: Any,
    a_zero: Any | None = None,
    b_zero: Any | None = None,
    bias: Any | None = None,
) -> Any:
    xp = namespace(a)
    product = integer_matmul(a, a_zero, b, b_zero)
    y = xp.astype(product, xp.float32) * (a_scale * b_scale)
    return y if bias is None else y + bias


def _dynamic(node: Node, a: Any, b: Any, b_scale: Any, b_zero: Any | None = None, bias: Any | None = None) -> Any:
    xp = namespace(a)
    values, scale, zero = dynamically_quantized(a)
    product = integer_matmul(values, zero, b, b_zero)
    y = xp.astype(product, xp.float32) * (scale * b_scale)
    return y if bias is None else y + bias


MATMUL_INTEGER_TO_FLOAT = OpDef(
    "MatMulIntegerToFloat",
    "contrib",
    _infer_integer_to_float,
    inputs=(
        Input("A", _INT8, doc="(..., K)"),
        Input("B", _INT8, doc="(K, N)"),
        Input("a_scale", _F32, doc="a scalar"),
        Input("b_scale", _F32, doc="a scalar, or (N)"),
        Input("a_zero_point", _INT8, optional=True, doc="a scalar, A's type"),
        Input("b_zero_point", _INT8, optional=True, doc="a scalar or (N), B's type"),
        Input("bias", _F32, optional=True, doc="(N)"),
    ),
    version=VERSION,
    evaluate=_integer_to_float,
    doc="(A - a_zero_point) @ (B - b_zero_point) accumulated in i32, times a_scale * b_scale, plus bias.",
)
DYNAMIC_QUANTIZE_MATMUL = OpDef(
    "DynamicQuantizeMatMul",
    "contrib",
    _infer_dynamic,
    inputs=(
        Input("A", _F32, doc="(..., K)"),
        Input("B", _INT8, doc="(K, N)"),
        Input("b_scale", _F32, doc="a scalar, or (N)"),
        Input("b_zero_point", _INT8, optional=True, doc="a scalar or (N), B's type"),
        Input("bias", _F32, optional=True, doc="(N)"),
    ),
    version=VERSION,
    evaluate=_dynamic,
    doc="A quantized to u8 over its range (as DynamicQuantizeLinear), then as MatMulIntegerToFloat.",
)

OPS = [MATMUL_INTEGER_TO_FLOAT, DYNAMIC_QUANTIZE_MATMUL]
"""The op definitions this module contributes."""

_XLA = "hetero_sdk_contrib.xla_quantized_matmul"
KERNELS = {"XLA": {"MatMulIntegerToFloat": f"{_XLA}:integer_to_float", "DynamicQuantizeMatMul": f"{_XLA}:dynamic"}}
"""XLA computes the integer products as i8 dots accumulating in i32 (:mod:`.xla_quantized_matmul`)."""


def _zero_of(ctx: NodeContext, value: Output) -> Output:
    """A zero point of 0 in ``value``'s type, standing for a left-out one that a later input follows."""
    return ctx.const(np.zeros((), value.element_type.numpy))


def _with_defaults(ctx: NodeContext, required: int, zero_of: dict[int, int]) -> list[Output]:
    """The node's inputs, a left-out zero point that a later input follows written as 0 in the type
    of the input it belongs to (``zero_of``: zero point index -> that input's index)."""
    inputs = [ctx.input(i) for i in range(required)]
    optional = [ctx.optional_input(i) for i in range(required, required + len(zero_of) + 1)]
    last = max((i for i, v in enumerate(optional) if v is not None), default=-1)
    for offset, value in enumerate(optional[: last + 1]):
        index = required + offset
        if value is None and index not in zero_of:
            raise ctx.error(f"input {index} is required before the inputs that follow it")
        inputs.append(value if value is not None else _zero_of(ctx, inputs[zero_of[index]]))
    return inputs


def integer_to_float_rule(ctx: NodeContext) -> Outputs:
    """com.microsoft MatMulIntegerToFloat: A, B, a_scale, b_scale, [a_zero_point], [b_zero_point], [bias]."""
    inputs = _with_defaults(ctx, 4, {4: 0, 5: 1})
    return [Node(MATMUL_INTEGER_TO_FLOAT, inputs).output(0)]


def dynamic_rule(ctx: NodeContext) -> Outputs:
    """com.microsoft DynamicQuantizeMatMul: A, B, b_scale, [b_zero_point], [bias]."""
    inputs = _with_defaults(ctx, 3, {3: 1})
    return [Node(DYNAMIC_QUANTIZE_MATMUL, inputs).output(0)]


ONNX_RULES = [
    OnnxRule(DOMAIN, "MatMulIntegerToFloat", integer_to_float_rule, makes=("MatMulIntegerToFloat",)),
    OnnxRule(DOMAIN, "DynamicQuantizeMatMul", dynamic_rule, makes=("DynamicQuantizeMatMul",)),
]
"""The ONNX ops this module translates."""


# -- conformance-kit recipes -----------------------------------------------------------------------------


def _integer_to_float_case(b: Any, op_type: str) -> Any:
    k, n = b.integer(1, 6), b.integer(1, 5)
    a_type, b_type = b.pick([(np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8)])
    a = b.input(b.values([*b.shape(1, 2, 1, 3), k], a_type, 0, 100), "A")
    w = b.operand(b.values([k, n], b_type, 0, 100), "B")
    scales = [b.operand(np.array(s, np.float32), name) for s, name in ((0.05, "a_scale"), (0.02, "b_scale"))]
    zeros = [
        b.operand(np.array(z, t), name) for z, t, name in ((3, a_type, "a_zero_point"), (5, b_type, "b_zero_point"))
    ]
    inputs = [n.output(0) for n in (a, w, *scales, *zeros)]
    return b.case(op_type, Node(MATMUL_INTEGER_TO_FLOAT, inputs, {}, "op"), "accumulate", k)


def _dynamic_case(b: Any, op_type: str) -> Any:
    k, n = b.integer(1, 6), b.integer(1, 5)
    a = b.input(b.values([*b.shape(1, 2, 1, 3), k], np.float32), "A")
    w = b.operand(b.values([k, n], np.int8, -100, 100), "B")
    scale = b.operand(np.array(0.02, np.float32), "b_scale")
    # the quantization of A rounds: ties decided differently move a result by one level of A's scale
    return b.case(op_type, Node(DYNAMIC_QUANTIZE_MATMUL, [a.output(0), w.output(0), scale.output(0)], {}, "op"),
                  "accumulate", 100 * k)  # fmt: skip


RECIPES = {"MatMulIntegerToFloat": _integer_to_float_case, "DynamicQuantizeMatMul": _dynamic_case}
"""Conformance-kit case recipes by op type."""
