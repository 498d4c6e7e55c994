"""XLA gathers the rows of a one-hot matrix product (``Convert(Equal(ids, range(K))) @ W``, an embedding
lookup as exporters write it, magika's first layer): the MatMul is gone from the runtime model and the
values are the product's, computed in numpy here, ids outside ``[0, K)`` included (zero rows)."""

from __future__ import annotations

import numpy as np
import pytest
from hetero_sdk import Model, Type, opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, core


def _one_hot_model(
    ids: tuple[int, ...], table: np.ndarray, transpose_b: bool, swapped: bool, id_type: Type = Type.i32
) -> Model:
    """``ids`` ``[..., 1]`` compared with ``range(K)`` ``[1, K]`` (or the other way round), converted to
    the table's type, times the table (``[K, N]``; given as ``[N, K]`` with ``transpose_b``)."""
    x = opset.parameter(list(ids), id_type, name="ids")
    columns = opset.constant(np.arange(table.shape[0]).reshape(1, -1).astype(id_type.numpy))
    equal = opset.equal(columns, x) if swapped else opset.equal(x, columns)
    hot = opset.convert(equal, Type.f32)
    weight = np.ascontiguousarray(table.T) if transpose_b else table
    y = opset.matmul(hot, opset.constant(weight), transpose_b=transpose_b, name="y")
    return Model([y], [x], name="one_hot")


def _expected(ids: np.ndarray, table: np.ndarray) -> np.ndarray:
    """The one-hot product by its definition: a zero row for an id that matches no column."""
    rows = np.zeros((*ids.shape[:-1], table.shape[1]), np.float32)
    inside = (ids[..., 0] >= 0) & (ids[..., 0] < table.shape[0])
    rows[inside] = table[ids[..., 0][inside]]
    return rows


@OPS
@given(
    size=st.integers(1, 40),
    width=st.integers(1, 9),
    lead=st.lists(st.integers(1, 5), min_size=0, max_size=2),
    transpose_b=st.booleans(),
    swapped=st.booleans(),
    data=st.data(),
)
def test_a_one_hot_product_is_gathered_with_the_products_values(
    size: int, width: int, lead: list[int], transpose_b: bool, swapped: bool, data: st.DataObject
) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    table = rng.standard_normal((size, width)).astype(np.float32)
    shape = (*lead, data.draw(st.integers(1, 6)), 1)
    ids = rng.integers(-3, size + 3, shape).astype(np.int32)  # some outside [0, K)
    compiled = core().compile_model(_one_hot_model(shape, table, transpose_b, swapped), "XLA")
    assert "MatMul" not in {n.type_name for n in compiled.get_runtime_model().get_ops()}
    np.testing.assert_array_equal(np.asarray(compiled({"ids": ids})["y"]), _expected(ids, table))


@pytest.mark.parametrize("id_type", [Type.i64, Type.u8])
def test_other_integer_ids_are_gathered_too(id_type: Type) -> None:
    table = np.random.default_rng(0).standard_normal((200, 16)).astype(np.float32)  # ids past 199: no column
    ids = np.random.default_rng(1).integers(0, 256, (1, 64, 1)).astype(id_type.numpy)
    compiled = core().compile_model(_one_hot_model(ids.shape, table, False, False, id_type), "XLA")
    assert "MatMul" not in {n.type_name for n in compiled.get_runtime_model().get_ops()}
    np.testing.assert_array_equal(np.asarray(compiled({"ids": ids})["y"]), _expected(ids, table))


def test_a_table_with_an_infinity_keeps_the_product() -> None:
    """``0 * inf`` is NaN in every row of the product but the infinity's own: the gather would not give
    that, so it is not used."""
    table = np.ones((4, 3), np.float32)
    table[2, 1] = np.inf
    ids = np.array([[[0], [2], [7]]], np.int32)
    compiled = core().compile_model(_one_hot_model(ids.shape, table, False, False), "XLA")
    assert "MatMul" in {n.type_name for n in compiled.get_runtime_model().get_ops()}
    got = np.asarray(compiled({"ids": ids})["y"])
    np.testing.assert_array_equal(got[0, :, 1], [np.nan, np.inf, np.nan])
    np.testing.assert_array_equal(got[0, :, 0], [1, 1, 0])


def test_a_comparison_with_anything_but_a_range_keeps_the_product() -> None:
    x = opset.parameter([1, 5, 1], Type.i32, name="ids")
    columns = opset.constant(np.array([[0, 1, 3, 2]], np.int32))  # not range(4)
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = opset.matmul(opset.convert(opset.equal(x, columns), Type.f32), opset.constant(table), name="y")
    compiled = core().compile_model(Model([y], [x], name="not_one_hot"), "XLA")
    assert "MatMul" in {n.type_name for n in compiled.get_runtime_model().get_ops()}
    ids = np.array([[[0], [1], [2], [3], [4]]], np.int32)
    want = (ids == np.array([[0, 1, 3, 2]])).astype(np.float32) @ table
    np.testing.assert_array_equal(np.asarray(compiled({"ids": ids})["y"]), want)
