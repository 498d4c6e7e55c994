"""MatMul: numpy matmul semantics with 1-D promotion, transposes and batch broadcasting."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate

FAST = settings(max_examples=50, deadline=None)


def run(node: hs.Node, params: list[hs.Node], *arrays: np.ndarray) -> list[np.ndarray]:
    """Evaluates every output of ``node`` with the reference kernels."""
    return evaluate(hs.Model(node.outputs(), params), list(arrays))


def expected_matmul(a: np.ndarray, b: np.ndarray, transpose_a: bool, transpose_b: bool) -> np.ndarray:
    """Products summed by broadcasting, after the spec's 1-D promotion and transposes."""
    a2 = a[np.newaxis, :] if a.ndim == 1 else (np.swapaxes(a, -1, -2) if transpose_a else a)
    b2 = b[:, np.newaxis] if b.ndim == 1 else (np.swapaxes(b, -1, -2) if transpose_b else b)
    product = (a2.astype(np.float64)[..., :, :, np.newaxis] * b2.astype(np.float64)[..., np.newaxis, :, :]).sum(-2)
    if a.ndim == 1:
        product = product[..., 0, :]
    if b.ndim == 1:
        product = product[..., 0]
    return product


@pytest.mark.parametrize(
    ("a", "b", "transpose_a", "transpose_b", "expected"),
    [
        ([2, 3], [3, 4], False, False, [2, 4]),
        ([3, 2], [4, 3], True, True, [2, 4]),
        ([3], [3, 4], True, False, [4]),  # a 1-D input ignores its transpose flag
        ([2, 3], [3], False, True, [2]),
        ([3], [3], False, False, []),
        ([5, 1, 2, 3], [4, 3, 2], True, True, [5, 4, 3, 3]),
        ([7, 2, 3], [3, 4], False, False, [7, 2, 4]),
        ([3], [6, 3, 4], False, False, [6, 4]),
        ([-1, 3], [-1], False, False, [-1]),
        ([2, -1, 4], [-1, 4, 5], False, False, [2, -1, 5]),
        ([-1, 2, 3], [1, 3, -1], False, False, [-1, 2, -1]),
    ],
)
def test_matmul_output_shape(a, b, transpose_a: bool, transpose_b: bool, expected) -> None:
    node = opset.matmul(opset.parameter(a), opset.parameter(b), transpose_a, transpose_b)
    assert node.get_output_partial_shape(0) == expected
    assert node.get_output_element_type(0) is hs.Type.f32


@st.composite
def matmul_cases(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, bool, bool]:
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), max_size=3))
    a_batch = [d if draw(st.booleans()) else 1 for d in batch][draw(st.integers(0, len(batch))) :]
    b_batch = [d if draw(st.booleans()) else 1 for d in batch][draw(st.integers(0, len(batch))) :]
    transpose_a, transpose_b = draw(st.booleans()), draw(st.booleans())
    a_shape = [k] if draw(st.integers(0, 4)) == 0 else [*a_batch, *((k, m) if transpose_a else (m, k))]
    b_shape = [k] if draw(st.integers(0, 4)) == 0 else [*b_batch, *((n, k) if transpose_b else (k, n))]
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    return rng.standard_normal(a_shape), rng.standard_normal(b_shape), transpose_a, transpose_b


@FAST
@given(matmul_cases(), st.sampled_from([np.float32, np.float64, np.float16]))
def test_matmul_matches_broadcast_products(case: tuple, dtype: type) -> None:
    a, b, transpose_a, transpose_b = case
    a, b = a.astype(dtype), b.astype(dtype)
    pa, pb = opset.parameter(a.shape, dtype), opset.parameter(b.shape, dtype)
    node = opset.matmul(pa, pb, transpose_a, transpose_b)
    (got,) = run(node, [pa, pb], a, b)
    expected = expected_matmul(a, b, transpose_a, transpose_b)
    assert got.dtype == np.dtype(dtype)
    assert got.shape == node.get_output_shape(0) == expected.shape
    tolerance = 1e-2 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=tolerance, atol=tolerance)


def test_matmul_with_a_dynamic_batch_runs_on_any_batch() -> None:
    x = opset.parameter([-1, 3])
    node = opset.matmul(x, np.float32([[1, 0], [0, 1], [1, 1]]))
    assert node.get_output_partial_shape(0) == [-1, 2]
    (got,) = run(node, [x], np.float32([[1, 2, 3], [4, 5, 6], [0, 0, 1]]))
    np.testing.assert_array_equal(got, [[4, 5], [10, 11], [1, 1]])


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, ml_dtypes.bfloat16])
def test_matmul_keeps_integer_and_bf16_types(dtype: type) -> None:
    a = np.array([[1, 2], [3, 4]]).astype(dtype)
    (got,) = run(opset.matmul(a, a, transpose_b=True), [])
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.astype(np.int64), [[5, 11], [11, 25]])


@pytest.mark.parametrize(
    ("a", "b", "kwargs", "message"),
    [
        ([], [3], {}, "scalars are not matrices"),
        ([2, 3], [4, 5], {}, "inner dimensions of [2,3] and [4,5]"),
        ([2, 3], [2, 5], {"transpose_a": True, "transpose_b": True}, "inner dimensions"),
        ([2, 2, 3], [3, 3, 4], {}, "batch dimensions of [2,2,3] and [3,3,4] do not broadcast"),
        ([2, 3], [3, 4], {"transpose_a": "yes"}, "transpose_a='yes' must be a bool"),
    ],
)
def test_bad_matmul_names_the_node(a, b, kwargs: dict, message: str) -> None:
    with pytest.raises(ModelValidationError, match=r"MatMul 'mm': .*" + message.replace("[", r"\[")):
        opset.matmul(opset.parameter(a), opset.parameter(b), name="mm", **kwargs)


def test_matmul_rejects_mixed_and_boolean_types() -> None:
    with pytest.raises(ModelValidationError, match=r"MatMul 'mm'.*share one element type"):
        opset.matmul(opset.parameter([2, 2]), opset.parameter([2, 2], hs.Type.i32), name="mm")
    boolean = opset.parameter([2, 2], hs.Type.boolean)
    with pytest.raises(ModelValidationError, match=r"MatMul 'mm'.*element type boolean"):
        opset.matmul(boolean, boolean, name="mm")


# -- Einsum ----------------------------------------------------------------------------------------

EQUATIONS = {
    # equation: the operands' shapes, by label sizes i=2, j=3, k=4, b=5
    "ij,jk->ik": ([2, 3], [3, 4]),
    "bij,bjk->bik": ([5, 2, 3], [5, 3, 4]),
    "ii->i": ([3, 3],),
    "ii": ([3, 3],),
    "ij->ji": ([2, 3],),
    "ij->": ([2, 3],),
    "i,i": ([3], [3]),
    "i,j->ij": ([2], [3]),
    "ji,jk": ([3, 2], [3, 4]),
    "...ij,...jk->...ik": ([5, 2, 3], [1, 3, 4]),
    "...i->i...": ([5, 4, 2],),
    "ij,jk,kb->ib": ([2, 3], [3, 4], [4, 5]),
    "i j , j k -> i k": ([2, 3], [3, 4]),
}


@FAST
@given(st.sampled_from(sorted(EQUATIONS)), st.sampled_from([np.float32, np.float64, np.int32]), st.data())
def test_einsum_matches_numpy(equation: str, dtype: type, data: st.DataObject) -> None:
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    arrays = [rng.integers(-4, 5, shape).astype(dtype) for shape in EQUATIONS[equation]]
    params = [opset.parameter(a.shape, a.dtype, name=f"in{i}") for i, a in enumerate(arrays)]
    node = opset.einsum(params, equation)
    (out,) = run(node, params, *arrays)
    want = np.einsum(equation.replace(" ", ""), *arrays)
    assert out.dtype == want.dtype and node.get_output_partial_shape(0) == list(want.shape)
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_einsum_infers_dynamic_and_broadcast_dimensions() -> None:
    a = opset.parameter([-1, 3], np.float32)
    b = opset.parameter([1, 4], np.float32)
    assert opset.einsum([a, b], "ij,jk->ik").get_output_partial_shape(0) == [-1, 4]
    c = opset.parameter([3, 2, 3], np.float32)
    d = opset.parameter([5, 1, 3, 4], np.float32)
    assert opset.einsum([c, d], "...ij,...jk->...ik").get_output_partial_shape(0) == [5, 3, 2, 4]


@pytest.mark.parametrize(
    ("equation", "shapes", "message"),
    [
        ("ij,jk->ik", [[2, 3], [4, 5]], "label 'j' has two sizes"),
        ("ij,jk->ik", [[2, 3]], "2 input terms for 1 inputs"),
        ("ijk->i", [[2, 3]], "does not fit input 0"),
        ("ij->iz", [[2, 3]], "output labels"),
        ("i1->i", [[2, 3]], "is not letters"),
    ],
)
def test_malformed_einsum_names_the_node(equation: str, shapes: list[list[int]], message: str) -> None:
    params = [opset.parameter(s, np.float32) for s in shapes]
    with pytest.raises(ModelValidationError, match=f"contraction.*{message}"):
        opset.einsum(params, equation, name="contraction")


# -- Det -------------------------------------------------------------------------------------------


@FAST
@given(
    st.lists(st.integers(1, 3), max_size=2),
    st.integers(1, 4),
    st.sampled_from([np.float32, np.float64]),
    st.integers(0, 2**32 - 1),
)
def test_det_matches_numpy_per_matrix(batch: list[int], size: int, dtype: type, seed: int) -> None:
    x = np.random.default_rng(seed).uniform(-2, 2, [*batch, size, size]).astype(dtype)
    data = opset.parameter(x.shape, x.dtype, name="x")
    node = opset.det(data)
    (out,) = run(node, [data], x)
    want = np.linalg.det(x.astype(np.float64))
    assert out.dtype == x.dtype and node.get_output_partial_shape(0) == batch
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


def test_det_of_non_square_matrices_names_the_node() -> None:
    with pytest.raises(ModelValidationError, match=r"determinant.*must be square"):
        opset.det(opset.parameter([2, 3, 4], np.float32), name="determinant")
    with pytest.raises(ModelValidationError, match=r"determinant.*rank 1"):
        opset.det(opset.parameter([3], np.float32), name="determinant")
