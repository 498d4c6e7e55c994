"""CumSum and CumProd against running sums and products written here, inclusive and exclusive, both
directions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError


def _running_sums(x: np.ndarray, axis: int, exclusive: bool, reverse: bool, product: bool = False) -> np.ndarray:
    moved = np.moveaxis(x, axis, 0)
    order = range(moved.shape[0] - 1, -1, -1) if reverse else range(moved.shape[0])
    out = np.zeros_like(moved)
    total = np.ones_like(moved[0]) if product else np.zeros_like(moved[0])
    for i in order:
        if exclusive:
            out[i] = total
        total = total * moved[i] if product else total + moved[i]
        if not exclusive:
            out[i] = total
    return np.moveaxis(out, 0, axis)


@settings(max_examples=20, deadline=None)
@given(rank=st.integers(1, 3), exclusive=st.booleans(), reverse=st.booleans(), seed=st.integers(0, 2**16))
def test_cum_sum_is_a_running_sum_along_the_axis(rank: int, exclusive: bool, reverse: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = [int(d) for d in rng.integers(1, 5, rank)]
    axis = int(rng.integers(-rank, rank))
    x = rng.integers(-9, 9, shape).astype(np.float32)
    px = opset.parameter(shape, hs.Type.f32, name="x")
    model = hs.Model([opset.cum_sum(px, axis, exclusive, reverse, name="y")], [px])
    expected = _running_sums(x, axis % rank, exclusive, reverse)
    for device in ("TEMPLATE", "XLA"):
        np.testing.assert_array_equal(hs.Core().compile_model(model, device)({"x": x})["y"], expected)


@settings(max_examples=20, deadline=None)
@given(rank=st.integers(1, 3), exclusive=st.booleans(), reverse=st.booleans(), seed=st.integers(0, 2**16))
def test_cum_prod_is_a_running_product_along_the_axis(rank: int, exclusive: bool, reverse: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = [int(d) for d in rng.integers(1, 5, rank)]
    axis = int(rng.integers(-rank, rank))
    x = rng.integers(-3, 4, shape).astype(np.int32)
    px = opset.parameter(shape, hs.Type.i32, name="x")
    model = hs.Model([opset.cum_prod(px, axis, exclusive, reverse, name="y")], [px])
    expected = _running_sums(x, axis % rank, exclusive, reverse, product=True)
    for device in ("TEMPLATE", "XLA"):
        np.testing.assert_array_equal(hs.Core().compile_model(model, device)({"x": x})["y"], expected)


def test_an_axis_out_of_range_is_named() -> None:
    px = opset.parameter([2, 3], hs.Type.f32, name="x")
    with pytest.raises(ModelValidationError, match="axis 2 is out of range for rank 2"):
        opset.cum_sum(px, 2)
    with pytest.raises(ModelValidationError, match=r"CumProd .*axis -3 is out of range for rank 2"):
        opset.cum_prod(px, -3)
