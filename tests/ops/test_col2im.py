"""Col2Im (OpenVINO opset 15) computes what OpenVINO computes: shapes and values, batched and unbatched,
with strides, dilations and asymmetric pads_begin and pads_end, on the reference evaluator and on
TEMPLATE and XLA; and its typed errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ov_reference import run_openvino, run_ours

from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError

F32, I64 = np.float32, np.int64


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    kernel = [draw(st.integers(1, 3)) for _ in range(2)]
    attrs = {
        "strides": [draw(st.integers(1, 3)) for _ in range(2)],
        "dilations": [draw(st.integers(1, 2)) for _ in range(2)],
        "pads_begin": [draw(st.integers(0, 2)) for _ in range(2)],
        "pads_end": [draw(st.integers(0, 2)) for _ in range(2)],
    }
    size = [draw(st.integers(d * (k - 1) + 1, 7)) for d, k in zip(attrs["dilations"], kernel)]
    rows = zip(size, attrs["pads_begin"], attrs["pads_end"], attrs["dilations"], kernel, attrs["strides"])
    counts = [(i + b + e - d * (k - 1) - 1) // s + 1 for i, b, e, d, k, s in rows]
    batch = [draw(st.integers(1, 2))] if draw(st.booleans()) else []
    rng = np.random.default_rng(draw(st.integers(0, 999)))
    x = rng.standard_normal((*batch, draw(st.integers(1, 3)) * math.prod(kernel), math.prod(counts))).astype(F32)
    return {"x": x, "size": np.array(size, I64), "kernel": np.array(kernel, I64), "attrs": attrs}


def ours(case: dict[str, Any], device: str = "") -> np.ndarray:
    return run_ours(lambda x, s, k: opset.col2im(x, s, k, **case["attrs"]), [case["x"]], [case["size"], case["kernel"]],
                    device=device)  # fmt: skip


def theirs(case: dict[str, Any]) -> np.ndarray:
    ops = pytest.importorskip("openvino.opset15")
    return run_openvino(
        lambda x, s, k: ops.col2im(x, s, k, **case["attrs"]), [case["x"]], [case["size"], case["kernel"]]
    )


@settings(max_examples=60, deadline=None)
@given(case=cases())
def test_matches_openvino(case: dict[str, Any]) -> None:
    want = theirs(case)
    got = ours(case)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", ["TEMPLATE", "XLA"])
@settings(max_examples=4, deadline=None)
@given(case=cases())
def test_matches_openvino_on_devices(device: str, case: dict[str, Any]) -> None:
    if device == "XLA":
        pytest.importorskip("hetero_sdk_jax")
    np.testing.assert_allclose(ours(case, device), theirs(case), rtol=1e-5, atol=1e-5)


def test_shape_is_batch_channels_and_the_image_or_channels_and_the_image_unbatched() -> None:
    size, kernel = np.array([3, 4], I64), np.array([2, 2], I64)
    assert opset.col2im(opset.parameter([2, 12, 6], F32), size, kernel).get_output_partial_shape(0) == [2, 3, 3, 4]
    assert opset.col2im(opset.parameter([12, 6], F32), size, kernel).get_output_partial_shape(0) == [3, 3, 4]
    unknown = opset.col2im(opset.parameter([2, 12, 6], F32), opset.parameter([2], I64), kernel)
    assert unknown.get_output_partial_shape(0) == [2, 3, -1, -1]


def test_a_block_count_that_does_not_fit_the_image_is_a_typed_error() -> None:
    with pytest.raises(ModelValidationError, match="blocks"):
        opset.col2im(opset.parameter([1, 4, 5], F32), np.array([3, 3], I64), np.array([2, 2], I64))


def test_an_image_of_other_than_two_dims_is_a_typed_error() -> None:
    with pytest.raises(ModelValidationError, match="2 values"):
        opset.col2im(opset.parameter([1, 8, 4], F32), np.array([3, 3, 3], I64), np.array([2, 2, 2], I64))
