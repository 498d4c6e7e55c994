"""TEMPLATE skips outputs nobody reads: MaxPool without a consumer of its indices computes values only."""

from __future__ import annotations

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset


def _windows_max(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2x2 stride-2 windows of an [N, C, 4, 4] input: the max and its flat index in the N*C*H*W tensor."""
    n, c = x.shape[:2]
    blocks = x.reshape(n, c, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, 2, 2, 4)
    tap = blocks.argmax(-1)
    rows = np.arange(2)[:, None] * 2 + tap // 2
    cols = np.arange(2)[None, :] * 2 + tap % 2
    base = (np.arange(n)[:, None] * c + np.arange(c)[None, :])[:, :, None, None] * 16
    return blocks.max(-1), base + rows * 4 + cols


@pytest.mark.parametrize("read_indices", [False, True])
def test_max_pool_values_and_indices_match_numpy_whether_or_not_indices_are_read(read_indices: bool) -> None:
    x = opset.parameter([2, 3, 4, 4], name="x")
    pool = opset.max_pool(x, strides=[2, 2], dilations=[1, 1], pads_begin=[0, 0], pads_end=[0, 0], kernel_shape=[2, 2])
    outputs = [pool.output(0), pool.output(1)] if read_indices else [pool.output(0)]
    compiled = hs.Core().compile_model(hs.Model(outputs, [x]), "TEMPLATE")
    value = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float32)
    results = compiled(value)
    values, indices = _windows_max(value)
    np.testing.assert_array_equal(results[0], values)
    if read_indices:
        np.testing.assert_array_equal(results[1], indices)
    steps = [s for s in compiled._plan.steps if s.node.type_name == "MaxPool"]
    assert len(steps[0].kernel(steps[0].node, value)) == (2 if read_indices else 1)


@pytest.mark.parametrize("read_indices", [False, True])
def test_nan_never_wins_a_max_pool_window_and_an_all_nan_window_gives_the_lowest_value(read_indices: bool) -> None:
    x = opset.parameter([1, 1, 2, 4], name="x")
    pool = opset.max_pool(x, strides=[2, 2], dilations=[1, 1], pads_begin=[0, 0], pads_end=[0, 0], kernel_shape=[2, 2])
    outputs = [pool.output(0), pool.output(1)] if read_indices else [pool.output(0)]
    compiled = hs.Core().compile_model(hs.Model(outputs, [x]), "TEMPLATE")
    nan = np.nan
    value = np.float32([[[[nan, 1, nan, nan], [-2, nan, nan, nan]]]])
    expected = np.float32([[[[1, np.finfo(np.float32).min]]]])
    np.testing.assert_array_equal(compiled(value)[0], expected)
