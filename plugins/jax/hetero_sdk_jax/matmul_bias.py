"""``XlaMatMulBias``: an f32 MatMul by a constant matrix and the Add of a constant per-column bias as one op, so
that the native GEMM kernel (:mod:`hetero_sdk_jax.lowering.kernels.gemm`, ``hetero_sdk_gemm_f32_bias``) adds
the bias to each output vector before storing it. As separate ops XLA ran the Add as a loop of its own after
the kernel's custom call (XLA fuses nothing into a custom call), or fused it into the next loop (ONNX's Gemm
becomes MatMul + Add: the CRNN's classifier; PP-OCRv4 rec's output layer and its attention projections).

:class:`MatMulBiasFusion` makes the op where the kernel may run: the MatMul's ``A`` f32, not transposed, ``B``
an f32 Constant ``[K, N]`` (``[N, K]`` with ``transpose_b``), the product in the kernel's class
(:func:`~hetero_sdk_jax.lowering.kernels.gemm.faster_natively`) where ``A``'s shape is static, ``B`` of
:data:`~hetero_sdk_jax.lowering.kernels.gemm.MIN_WEIGHT` elements and more where it is dynamic (the lowering
decides at each compiled shape); the MatMul's only use an Add of a constant holding one value per column
(``[N]``, ``[1, N]``, ``[1, 1, N]``... or one value). Its value is the unfused graph's up to f32 rounding (the
bias is added to the finished sum); where the kernel does not run, the lowering computes MatMul's lowering
and the Add one after the other.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hetero_sdk import Model, Node, Output, PartialShape, Type, opset
from hetero_sdk.plugin import (
    BOOL,
    OPS,
    Attr,
    ConsumerMap,
    Input,
    MatcherPass,
    OpDef,
    OutputSpec,
    constant_operand,
    constant_value,
    define,
    namespace,
    replace_node,
    widened,
)

from hetero_sdk_jax.lowering.kernels.gemm import MATMUL_BIAS, MIN_WEIGHT, faster_natively

__all__ = ["MATMUL_BIAS", "MATMUL_BIAS_OP", "MatMulBiasFusion", "column_bias", "matmul_bias"]


def matmul_bias(matmul: Node, bias: Output, name: str | None = None) -> Node:
    """``matmul + bias`` as one op, on the MatMul ``matmul``'s inputs and attributes; ``bias`` f32 ``[N]``."""
    attrs = {key: matmul.attrs[key] for key in ("transpose_a", "transpose_b")}
    return Node(MATMUL_BIAS_OP, [matmul.input_value(0), matmul.input_value(1), bias], attrs, name)


def _infer(node: Node) -> list[OutputSpec]:
    specs = list(OPS.get("MatMul").infer(node))
    out, bias = PartialShape(specs[0][1]), node.input_value(2).partial_shape
    if not out.rank_is_static or out.rank < 2 or bias.rank != 1 or bias[0] not in (-1, out[out.rank - 1]):
        raise node.error(f"bias {bias} must be one value per column of the product {out} (shape [N])")
    return specs


def _definition(node: Node, a: Any, b: Any, bias: Any) -> Any:
    """MatMul's meaning (the reference's kernel, array API), plus the bias."""
    xp = namespace(a)
    if node.attrs["transpose_a"]:
        a = xp.swapaxes(a, -1, -2)
    if node.attrs["transpose_b"]:
        b = xp.swapaxes(b, -1, -2)
    return xp.matmul(widened(a), widened(b)) + widened(bias)


MATMUL_BIAS_OP = define(
    OpDef(
        MATMUL_BIAS,
        "linear_algebra",
        _infer,
        inputs=(
            Input("a", frozenset({Type.f32}), doc="[..., M, K]"),
            Input("b", frozenset({Type.f32}), doc="[K, N], or [N, K] with transpose_b"),
            Input("bias", frozenset({Type.f32}), doc="[N], added to each row of the product"),
        ),
        attrs=(
            Attr("transpose_a", BOOL, False, doc="as MatMul's"),
            Attr("transpose_b", BOOL, False, doc="as MatMul's"),
        ),
        version="xla",
        evaluate=_definition,
        doc="MatMul(a, b) + bias (one value per column) in one kernel.",
    )
)


def column_bias(value: np.ndarray, columns: int) -> np.ndarray | None:
    """``value`` as one f32 value per column ``[columns]`` when it is constant along every axis but the last
    (all of them 1) and its last axis is ``columns`` or 1; None otherwise."""
    if value.ndim and any(d != 1 for d in value.shape[:-1]):
        return None
    last = value.shape[-1] if value.ndim else 1
    if last not in (1, columns):
        return None
    return np.ascontiguousarray(np.broadcast_to(value.reshape(-1), (columns,)), np.float32)


def _kernel_columns(matmul: Node) -> int | None:
    """``N`` when the MatMul ``matmul`` is an f32 product of ``A`` (not transposed, rank 2 or more) by an f32
    Constant ``B`` of rank 2 that may be in the native GEMM kernel's class: in it where ``A``'s shape is
    static, of a ``B`` large enough where it is not (the lowering decides at the shapes it compiles for);
    None otherwise."""
    a, b = matmul.input_value(0), matmul.input_value(1)
    if matmul.output(0).element_type != Type.f32 or a.element_type != Type.f32 or matmul.attrs["transpose_a"]:
        return None
    w = constant_value(b)
    if w is None or w.ndim != 2 or w.dtype != np.float32 or not a.partial_shape.rank_is_static:
        return None
    depth, columns = w.shape[::-1] if matmul.attrs["transpose_b"] else w.shape
    if a.partial_shape.rank < 2 or a.partial_shape[a.partial_shape.rank - 1] not in (-1, depth):
        return None
    if not a.partial_shape.is_static:
        return columns if depth * columns >= MIN_WEIGHT else None
    shape = [int(d) for d in a.partial_shape.to_shape()]
    return columns if faster_natively(math.prod(shape[:-1]), depth, columns) else None


class MatMulBiasFusion(MatcherPass):
    """Fuses ``MatMul(A, constant B) -> Add(constant per-column bias)`` into :data:`MATMUL_BIAS_OP` where the
    native GEMM kernel may run (the module's docstring says when). The MatMul's output must have one use,
    the Add."""

    name = "XlaMatMulBiasFusion"
    anchors = ("MatMul",)

    def apply(self, model: Model, node: Node, users: ConsumerMap) -> bool:
        uses = users.of(node.output(0))
        columns = _kernel_columns(node)
        if len(uses) != 1 or uses[0][0].type_name != "Add" or columns is None:
            return False
        add = uses[0][0]
        found = constant_operand(add)
        if found is None or found[0] != node.output(0) or add.output(0).element_type != Type.f32:
            return False
        bias = column_bias(np.asarray(found[1]), columns)
        if bias is None:
            return False
        fused = matmul_bias(node, opset.constant(bias, Type.f32).output(0), add.friendly_name)
        replace_node(model, add, fused, fused=[node], consumers=users)
        return True
