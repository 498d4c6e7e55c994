"""ReduceSum, ReduceMean, ReduceProd, ReduceMax and ReduceMin on XLA match the reference."""

from __future__ import annotations

import numpy as np
from hetero_sdk import opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, check_against_reference, floats, ints, many_ops, param, run_xla, shapes, single_op

REDUCTIONS = ["reduce_sum", "reduce_mean", "reduce_prod", "reduce_max", "reduce_min"]


@OPS
@given(
    data=st.data(),
    shape=shapes(min_dims=0, max_dims=4, min_side=0, max_side=4),
    keep_dims=st.booleans(),
    dtype=st.sampled_from([np.float32, np.int32, np.int8, np.uint8, np.float16]),
)
def test_reductions(data: st.DataObject, shape: tuple[int, ...], keep_dims: bool, dtype: type) -> None:
    if np.dtype(dtype).kind == "f":
        x = data.draw(floats(shape, dtype, -2, 2))
    else:
        x = data.draw(ints(shape, dtype, *((-100, 100) if dtype != np.uint8 else (0, 255))))
    rank = max(len(shape), 1)
    axes = data.draw(st.lists(st.integers(-rank, rank - 1), max_size=rank)) if shape else []
    px = param(x)
    nodes = [getattr(opset, f)(px, axes, keep_dims, name=f) for f in REDUCTIONS]
    rtol, atol = (3e-3, 3e-2) if dtype == np.float16 else (1e-5, 1e-5)
    check_against_reference(many_ops(nodes, [px]), [x], rtol=rtol, atol=atol)


def test_integer_mean_truncates_toward_zero_without_overflow() -> None:
    x = np.array([[100, 100, 101], [-7, -8, 0]], np.int8)
    px = param(x)
    got = run_xla(single_op(opset.reduce_mean(px, [1]), [px]), [x])[0]
    np.testing.assert_array_equal(got, [100, -5])


def test_empty_reductions_give_identities() -> None:
    x = np.zeros((2, 0), np.float32)
    px = param(x)
    nodes = [getattr(opset, f)(px, [1], name=f) for f in REDUCTIONS]
    got = run_xla(many_ops(nodes, [px]), [x])
    lowest, highest = np.finfo(np.float32).min, np.finfo(np.float32).max
    for value, expected in zip(got, [0, 0, 1, lowest, highest]):
        np.testing.assert_array_equal(value, [expected, expected])


def test_max_and_min_of_infinities_stay_infinite() -> None:
    x = np.array([[-np.inf, -np.inf], [1.0, -np.inf], [np.inf, np.inf]], np.float32)
    px = param(x)
    model = many_ops([opset.reduce_max(px, [1], name="max"), opset.reduce_min(px, [1], name="min")], [px])
    high, low = run_xla(model, [x])
    np.testing.assert_array_equal(high, [-np.inf, 1.0, np.inf])
    np.testing.assert_array_equal(low, [-np.inf, -np.inf, np.inf])
