"""``com.microsoft`` ``FusedMatMul``: ``alpha * op(A) @ op(B)``, op a transpose of the last two axes
when ``transpose_a``/``transpose_b`` say so (ONNX Runtime's transformer optimizer writes it)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hetero_sdk import Node
from hetero_sdk.extensions import REFERENCE, OnnxRule
from hetero_sdk.plugin import BOOL, FLOAT, REAL_TYPES, Attr, Input, OpDef, OutputSpec, matmul_shape

from hetero_sdk_contrib.constants import DOMAIN, VERSION

__all__ = ["FUSED_MATMUL", "KERNELS", "ONNX_RULES", "OPS", "RECIPES", "operands"]


def _infer(node: Node) -> list[OutputSpec]:
    a, b = node.input_value(0), node.input_value(1)
    if a.element_type != b.element_type:
        raise node.error(f"inputs have element types {a.element_type.value} and {b.element_type.value}; they "
                         "must match")  # fmt: skip
    shape = matmul_shape(node, a.partial_shape, b.partial_shape, node.attrs["transpose_a"], node.attrs["transpose_b"])
    return [(a.element_type, shape)]


FUSED_MATMUL = OpDef(
    "FusedMatMul",
    "contrib",
    _infer,
    (Input("a", REAL_TYPES), Input("b", REAL_TYPES)),
    (
        Attr("alpha", FLOAT, 1.0, doc="the product's scale"),
        Attr("transpose_a", BOOL, False, doc="transpose the last two axes of a first"),
        Attr("transpose_b", BOOL, False, doc="transpose the last two axes of b first"),
    ),
    version=VERSION,
    doc="`alpha * matmul(a, b)` with optional transposes (com.microsoft `FusedMatMul`).",
)
OPS = [FUSED_MATMUL]


def operands(node: Node, a: Any, b: Any) -> tuple[Any, Any]:
    """``a`` and ``b`` transposed as the node's attributes say (numpy or ``jax.numpy`` arrays)."""
    if node.attrs["transpose_a"] and a.ndim > 1:
        a = a.swapaxes(-1, -2)
    if node.attrs["transpose_b"] and b.ndim > 1:
        b = b.swapaxes(-1, -2)
    return a, b


def _reference(node: Node, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = operands(node, a.astype(np.float64), b.astype(np.float64))
    return node.attrs["alpha"] * np.matmul(a, b)


KERNELS = {REFERENCE: {"FusedMatMul": _reference}, "XLA": {"FusedMatMul": "hetero_sdk_contrib.xla_matmul:fused_matmul"}}


def _rule(ctx: Any) -> list[Any]:
    for batch in ("transBatchA", "transBatchB"):
        if ctx.attr(batch, 0):
            raise ctx.unsupported(f"{batch}=1 (transposed batch axes)")
    attrs = {
        "alpha": float(ctx.attr("alpha", 1.0)),
        "transpose_a": bool(ctx.attr("transA", 0)),
        "transpose_b": bool(ctx.attr("transB", 0)),
    }
    return [Node(FUSED_MATMUL, [ctx.input(0), ctx.input(1)], attrs).output(0)]


ONNX_RULES = [OnnxRule(DOMAIN, "FusedMatMul", _rule, makes=("FusedMatMul",))]


def _fused_matmul_case(b: Any, op_type: str) -> Any:
    """A conformance-kit case: batched ``a`` times ``b``, each maybe transposed, scaled by ``alpha``."""
    dtype = b.pick([np.float32, np.float16])
    m, k, n = b.integer(1, 4), b.integer(1, 5), b.integer(1, 4)
    ta, tb, alpha = b.flag(), b.flag(), b.pick([1.0, 0.5, -2.0])
    batch = b.shape(0, 2, 1, 3)
    a = b.input(b.values([*batch, *([k, m] if ta else [m, k])], dtype, -2, 2), "a")
    w = b.operand(b.values([n, k] if tb else [k, n], dtype, -2, 2), "b")
    attrs = {"alpha": alpha, "transpose_a": ta, "transpose_b": tb}
    return b.case(op_type, Node(FUSED_MATMUL, [a.output(0), w.output(0)], attrs, "op"), "accumulate", k, **attrs)


RECIPES = {"FusedMatMul": _fused_matmul_case}
