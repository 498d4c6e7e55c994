"""Case recipes of the linear-algebra family: MatMul, Einsum, Det and ScaledDotProductAttention, whose
operands' shapes must agree."""

from __future__ import annotations

import math

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import F32, FLOATS, Builder, OpCase, key_case, recipe
from hetero_sdk.ops.linear_algebra import einsum_terms


@recipe("MatMul")
def _matmul(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    m, k, n = b.integer(1, 5), b.integer(1, 6), b.integer(1, 5)
    ta, tb = b.flag(), b.flag()
    batch = b.shape(0, 2, 1, 3)
    batch_b = [1 if b.integer(0, 3) == 0 else d for d in batch[len(batch) - b.integer(0, len(batch)) :]]
    vector = b.integer(0, 5)
    a_shape = [k] if vector == 0 else [*batch, *([k, m] if ta else [m, k])]
    b_shape = [k] if vector == 1 else [*batch_b, *([n, k] if tb else [k, n])]
    x, y = b.values(a_shape, dtype, -2, 2), b.values(b_shape, dtype, -2, 2)
    node = opset.matmul(b.input(x, "a"), b.operand(y, "b"), transpose_a=ta, transpose_b=tb, name="op")
    return b.case(op_type, node, "accumulate", k, transpose_a=ta, transpose_b=tb)


@key_case("MatMul")
def _matmul_transposed_a_times_vector() -> OpCase:
    """A transposed A times a 1-D B (a wrong result here once passed the ci profile's drawn cases)."""
    b = Builder.fixed(1)
    a = b.input(b.values([2, 4, 3], F32, -2, 2), "a")  # [batch, k, m], transposed to [batch, m, k]
    node = opset.matmul(a, b.input(b.values([4], F32, -2, 2), "b"), transpose_a=True, name="op")
    return b.case("MatMul", node, "accumulate", 4, transpose_a=True, transpose_b=False)


@key_case("MatMul")
def _matmul_vector_times_transposed_b() -> OpCase:
    """A 1-D A times a transposed B: the mirror case."""
    b = Builder.fixed(2)
    a = b.input(b.values([4], F32, -2, 2), "a")
    node = opset.matmul(a, b.input(b.values([3, 4], F32, -2, 2), "b"), transpose_b=True, name="op")
    return b.case("MatMul", node, "accumulate", 4, transpose_a=False, transpose_b=True)


_EINSUM = (
    "ij,jk->ik", "bij,bjk->bik", "ii->i", "ij->ji", "ij->", "i,i", "i,j->ij", "...ij,...jk->...ik", "abc,cd,de->abe",
)  # fmt: skip


@recipe("Einsum")
def _einsum(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    equation = b.pick(_EINSUM)
    terms, output = einsum_terms(equation)
    sizes = {label: b.integer(1, 4) for label in sorted(set(equation) - set(",->."))}
    batch = b.shape(0, 2, 1, 3)
    operands = []
    for index, term in enumerate(terms):
        shape = [*(batch if "..." in term else []), *(sizes[c] for c in term.replace("...", ""))]
        values = b.values(shape, dtype, -2, 2)
        operands.append(b.input(values, "a") if index == 0 else b.operand(values, f"x{index}"))
    node = opset.einsum(operands, equation, name="op")
    summed = math.prod(sizes[c] for c in set(sizes) - set(output))
    return b.case(op_type, node, "accumulate", summed, equation=equation)


@recipe("Det")
def _det(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    size = b.integer(1, 4)
    shape = [*b.shape(0, 2, 1, 3), size, size]
    # diagonally dominant: well conditioned, so the determinant is not a cancellation of large terms
    x = (b.values(shape, F32, -1, 1) + 2 * size * np.eye(size, dtype=F32)).astype(dtype)
    return b.case(op_type, opset.det(b.input(x, "x"), name="op"), "accumulate", 2 * size**2)


@recipe("ScaledDotProductAttention")
def _attention(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    batch = b.shape(1, 2, 1, 2)
    length, sources, size, value_size = b.integer(1, 4), b.integer(1, 4), b.integer(1, 4), b.integer(1, 4)
    query = b.input(b.values([*batch, length, size], dtype, -2, 2), "q")
    key = b.operand(b.values([*batch, sources, size], dtype, -2, 2), "k")
    value = b.operand(b.values([*batch, sources, value_size], dtype, -2, 2), "v")
    causal = b.integer(0, 3) == 0
    masking = b.pick(("none", "additive", "boolean"))
    mask = None
    if masking == "additive":
        mask = b.operand(b.values([length, sources], dtype, -3, 0), "mask")
    elif masking == "boolean":
        keep = b.rng.random([length, sources]) < 0.6
        keep[np.arange(length), b.rng.integers(0, sources, length)] = True  # every query sees some key
        mask = b.operand(keep, "mask")
    scale = b.operand(np.array(b.pick((0.5, 1.0, 0.125)), dtype), "scale") if b.flag() else None
    node = opset.scaled_dot_product_attention(query, key, value, mask, scale, causal, name="op")
    return b.case(
        op_type, node, "transcendental", size + sources, causal=causal, mask=masking, scaled=scale is not None
    )
