"""GatherElements against numpy's take_along_axis, written here, on TEMPLATE and XLA."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError


@settings(max_examples=20, deadline=None)
@given(rank=st.integers(1, 3), axis_seed=st.integers(0, 100), seed=st.integers(0, 2**16))
def test_gather_elements_takes_one_element_per_index(rank: int, axis_seed: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = tuple(int(d) for d in rng.integers(1, 5, rank))
    axis = axis_seed % rank - (rank if axis_seed % 2 else 0)  # negative axes too
    taken = [int(rng.integers(1, 5)) if d == axis % rank else int(rng.integers(1, shape[d] + 1)) for d in range(rank)]
    indices = rng.integers(-shape[axis], shape[axis], taken)
    x = rng.standard_normal(shape).astype(np.float32)
    window = tuple(slice(None) if d == axis % rank else slice(0, n) for d, n in enumerate(taken))
    expected = np.take_along_axis(x[window], np.where(indices < 0, indices + shape[axis], indices), axis)
    px = opset.parameter(list(shape), hs.Type.f32, name="x")
    model = hs.Model([opset.gather_elements(px, indices, axis, name="y")], [px])
    for device in ("TEMPLATE", "XLA"):
        np.testing.assert_array_equal(hs.Core().compile_model(model, device)({"x": x})["y"], expected)


def test_constant_indices_out_of_range_are_named() -> None:
    px = opset.parameter([3, 2], hs.Type.f32, name="x")
    with pytest.raises(ModelValidationError, match=r"indices must lie in \[-3, 2\] along axis 0"):
        opset.gather_elements(px, np.array([[3, 0]]), 0)
    with pytest.raises(ModelValidationError, match="must have the rank of data"):
        opset.gather_elements(px, np.array([0, 1]), 0)
