"""AveragePool's convolution path (dilated windows, and ceil_mode last windows ONNX drops) computes
what ONNX Runtime computes, with and without the padding counted."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_models import check, node_model

RNG = np.random.default_rng(6)


@pytest.mark.parametrize("count_include_pad", [0, 1])
@pytest.mark.parametrize("ceil_mode", [0, 1])
def test_dilated_average_pool(count_include_pad: int, ceil_mode: int) -> None:
    x = RNG.standard_normal((1, 2, 7, 8)).astype(np.float32)
    attributes = {"kernel_shape": [2, 3], "dilations": [2, 2], "strides": [2, 1], "pads": [1, 0, 1, 2]}
    model, feeds = node_model(
        "AveragePool", {"x": x}, 19, count_include_pad=count_include_pad, ceil_mode=ceil_mode, **attributes
    )
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-5, atol=1e-6)


def test_average_pool_drops_a_ceil_mode_window_that_starts_in_the_end_padding() -> None:
    x = RNG.standard_normal((1, 3, 2, 2)).astype(np.float32)
    attributes = {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [0, 0, 1, 1], "ceil_mode": 1}
    model, feeds = node_model("AveragePool", {"x": x}, 19, **attributes)
    want = check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-5, atol=1e-6)
    assert want[0].shape == (1, 3, 1, 1)


def test_max_pool_drops_a_ceil_mode_window_that_starts_in_the_end_padding() -> None:
    x = RNG.standard_normal((1, 2, 4, 5)).astype(np.float32)
    attributes = {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [0, 0, 1, 0], "ceil_mode": 1}
    model, feeds = node_model("MaxPool", {"x": x}, 12, outputs=2, output_types=[np.float32, np.int64], **attributes)
    want = check(model, feeds, ("TEMPLATE", "XLA"))
    assert want[0].shape == (1, 2, 2, 3)  # rows: the window at 4 starts in the padding
