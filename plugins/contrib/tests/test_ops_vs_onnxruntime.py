"""The proof ops of the package (BiasGelu, QuickGelu, FusedMatMul) read from single-op ``com.microsoft``
ONNX models and run on TEMPLATE, XLA and HETERO, against ONNX Runtime."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run_devices, run_onnxruntime, single_op_model
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

pytest.importorskip("onnxruntime")

_FLOATS = st.floats(-6, 6, width=32)


def _check(model: bytes, inputs: dict[str, np.ndarray], rtol: float = 1e-5, atol: float = 1e-5) -> None:
    expected = run_onnxruntime(model, inputs)
    results = run_devices(model, inputs)
    assert "TEMPLATE" in results
    for device, outputs in results.items():
        for got, want in zip(outputs, expected, strict=True):
            assert got.dtype == want.dtype, device
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=device)


@settings(max_examples=10, deadline=None)
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=5))
def test_bias_gelu_matches_onnxruntime(data: st.DataObject, shape: tuple[int, ...]) -> None:
    a = data.draw(hnp.arrays(np.float32, shape, elements=_FLOATS))
    b = data.draw(hnp.arrays(np.float32, shape[-1:], elements=_FLOATS))
    _check(single_op_model("BiasGelu", {"a": a, "b": b}, a.shape), {"a": a, "b": b})


@settings(max_examples=10, deadline=None)
@given(x=hnp.arrays(np.float32, hnp.array_shapes(max_dims=3, max_side=5), elements=_FLOATS),
       alpha=st.sampled_from([1.702, 1.0, 0.5]))  # fmt: skip
def test_quick_gelu_matches_onnxruntime(x: np.ndarray, alpha: float) -> None:
    _check(single_op_model("QuickGelu", {"x": x}, x.shape, alpha=alpha), {"x": x})


def test_quick_gelu_closed_form_at_known_points() -> None:
    x = np.array([-1.0, 0.0, 2.0], np.float32)
    expected = x / (1 + np.exp(-1.702 * x.astype(np.float64)))
    for device, outputs in run_devices(single_op_model("QuickGelu", {"x": x}, x.shape), {"x": x}).items():
        np.testing.assert_allclose(outputs[0], expected, rtol=1e-6, err_msg=device)


@settings(max_examples=10, deadline=None)
@given(data=st.data(), m=st.integers(1, 4), k=st.integers(1, 4), n=st.integers(1, 4), batch=st.integers(1, 3),
       trans_a=st.booleans(), trans_b=st.booleans(), alpha=st.sampled_from([1.0, 0.125, -2.0]))  # fmt: skip
def test_fused_matmul_matches_onnxruntime(
    data: st.DataObject, m: int, k: int, n: int, batch: int, trans_a: bool, trans_b: bool, alpha: float
) -> None:
    a = data.draw(hnp.arrays(np.float32, (batch, k, m) if trans_a else (batch, m, k), elements=_FLOATS))
    b = data.draw(hnp.arrays(np.float32, (n, k) if trans_b else (k, n), elements=_FLOATS))
    attrs = {"alpha": alpha, "transA": int(trans_a), "transB": int(trans_b)}
    model = single_op_model("FusedMatMul", {"a": a, "b": b}, (batch, m, n), **attrs)
    _check(model, {"a": a, "b": b}, rtol=1e-5, atol=1e-4)


def test_fused_matmul_with_transposed_batch_is_refused_naming_the_attribute() -> None:
    import hetero_sdk as hs
    from hetero_sdk.errors import UnsupportedOperationError

    a, b = np.ones((2, 3, 4), np.float32), np.ones((4, 5), np.float32)
    model = single_op_model("FusedMatMul", {"a": a, "b": b}, (2, 3, 5), transBatchA=1)
    with pytest.raises(UnsupportedOperationError, match="transBatchA"):
        hs.Core(autoload=False).read_model(model)
