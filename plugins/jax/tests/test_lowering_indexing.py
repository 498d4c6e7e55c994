"""The scatters on XLA fold repeated positions as the loops written here do (GatherND and ReverseSequence
trace their shared kernels; tests/ops/test_indexing.py checks all four on both devices)."""

from __future__ import annotations

import numpy as np
import pytest
from hetero_sdk import opset
from xla_helpers import param, run_xla, single_op

FOLDS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


@pytest.mark.parametrize("reduction", sorted(FOLDS))
def test_scatter_elements_folds_every_update_of_a_repeated_position(reduction: str) -> None:
    x = np.array([[1, 2], [3, 4]], np.int32)
    indices = np.array([[1, 1], [1, 0], [1, 1]])
    updates = np.array([[5, -6], [7, 8], [-9, 10]], np.int32)
    expected = x.copy()
    for i in range(3):
        for j in range(2):
            expected[indices[i, j], j] = FOLDS[reduction](expected[indices[i, j], j], updates[i, j])
    px, pu = param(x), param(updates, "u")
    node = opset.scatter_elements_update(px, indices, pu, 0, reduction)
    np.testing.assert_array_equal(run_xla(single_op(node, [px, pu]), [x, updates])[0], expected)


@pytest.mark.parametrize("reduction", sorted(FOLDS))
def test_scatter_nd_folds_every_slice_of_a_repeated_coordinate(reduction: str) -> None:
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    indices = np.array([[2], [-1], [0]])
    updates = np.array([[1.5, -2.0], [3.0, 0.5], [-1.0, 4.0]], np.float32)
    expected = x.copy()
    for row, update in zip((2, 2, 0), updates):
        expected[row] = FOLDS[reduction](expected[row], update)
    px, pu = param(x), param(updates, "u")
    node = opset.scatter_nd_update(px, indices, pu, reduction)
    np.testing.assert_array_equal(run_xla(single_op(node, [px, pu]), [x, updates])[0], expected)
