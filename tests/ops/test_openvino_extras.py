"""FakeQuantize, HardSigmoid, IsNaN and ScaledDotProductAttention: values equal to OpenVINO's (CPU, f32)
for drawn shapes and data, equal to ONNX Runtime's on their ONNX export, and typed shape errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ov_reference import run_openvino, run_ours

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.frontend.onnx_export import export_model
from hetero_sdk.reference import evaluate

FEW = settings(max_examples=12, deadline=None)


@FEW
@given(
    length=st.integers(1, 6),
    sources=st.integers(1, 6),
    causal=st.booleans(),
    masked=st.sampled_from(["none", "float", "bool"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_attention_matches_openvino(length: int, sources: int, causal: bool, masked: str, seed: int) -> None:
    ov_ops = pytest.importorskip("openvino.opset13")
    rng = np.random.default_rng(seed)
    arrays = [
        rng.standard_normal(s).astype(np.float32) for s in ((2, 3, length, 4), (2, 3, sources, 4), (2, 3, sources, 5))
    ]
    if masked == "float":
        arrays.append(rng.standard_normal((1, 1, length, sources)).astype(np.float32))
    elif masked == "bool":
        mask = rng.random((1, 1, length, sources)) < 0.7
        mask[..., 0] = True  # no row fully masked
        arrays.append(mask)

    def ours(*p: Any) -> Any:
        return opset.scaled_dot_product_attention(*p, causal=causal)

    def theirs(*p: Any) -> Any:
        return ov_ops.scaled_dot_product_attention(*p, causal=causal)

    np.testing.assert_allclose(run_ours(ours, arrays), run_openvino(theirs, arrays), rtol=1e-5, atol=1e-5)


@FEW
@given(levels=st.integers(2, 256), low=st.floats(-3, 0), width=st.floats(0.1, 4), seed=st.integers(0, 2**32 - 1))
def test_fake_quantize_matches_openvino(levels: int, low: float, width: float, seed: int) -> None:
    ov_ops = pytest.importorskip("openvino.opset13")
    x = (np.random.default_rng(seed).standard_normal((3, 8)) * 3).astype(np.float32)
    bounds = [np.float32(low), np.float32(low + width), np.float32(-1), np.float32(2)]
    got = run_ours(lambda p, *b: opset.fake_quantize(p, *b, levels), [x], bounds)
    want = run_openvino(lambda p, *b: ov_ops.fake_quantize(p, *b, levels), [x], bounds)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_hard_sigmoid_and_is_nan_match_closed_forms() -> None:
    x = np.array([-10.0, -2.5, 0.0, 1.0, 2.5, np.nan], np.float32)
    got = run_ours(lambda p, a, b: opset.hard_sigmoid(p, a, b), [x], [np.float32(0.2), np.float32(0.5)])
    np.testing.assert_allclose(got[:5], np.clip(0.2 * x[:5] + 0.5, 0, 1), rtol=1e-6)
    np.testing.assert_array_equal(run_ours(opset.is_nan, [x]), np.isnan(x))


def test_the_onnx_export_computes_what_the_evaluator_computes() -> None:
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(0)
    q, k, v = (
        opset.parameter(s, np.float32, name=n)
        for n, s in (("q", [1, 2, 5, 8]), ("k", [1, 2, 6, 8]), ("v", [1, 2, 6, 4]))
    )
    m = opset.parameter([1, 1, 5, 6], np.float32, name="m")
    b = opset.parameter([1, 1, 5, 6], np.bool_, name="b")
    x = opset.parameter([3, 4], np.float32, name="x")
    outputs = [
        opset.scaled_dot_product_attention(q, k, v, causal=True),
        opset.scaled_dot_product_attention(q, k, v, m),
        opset.scaled_dot_product_attention(q, k, v, b, np.float32(0.5)),
        opset.fake_quantize(x, np.float32(-1), np.float32(1.2), np.float32(-2), np.float32(2), 7),
        opset.hard_sigmoid(x, np.float32(0.2), np.float32(0.5)),
        opset.is_nan(x),
    ]
    model = hs.Model(outputs, [q, k, v, m, b, x])
    mask = rng.random((1, 1, 5, 6)) < 0.8
    mask[..., 0] = True
    feeds = {
        "q": rng.standard_normal((1, 2, 5, 8)).astype(np.float32),
        "k": rng.standard_normal((1, 2, 6, 8)).astype(np.float32),
        "v": rng.standard_normal((1, 2, 6, 4)).astype(np.float32),
        "m": rng.standard_normal((1, 1, 5, 6)).astype(np.float32),
        "b": mask,
        "x": (rng.standard_normal((3, 4)) * 2).astype(np.float32),
    }
    session = ort.InferenceSession(export_model(model).SerializeToString(), providers=["CPUExecutionProvider"])
    for ours, theirs in zip(evaluate(model, list(feeds.values())), session.run(None, feeds), strict=True):
        np.testing.assert_allclose(np.asarray(ours, float), np.asarray(theirs, float), rtol=1e-5, atol=1e-6)


def test_shape_errors_name_the_node() -> None:
    q = opset.parameter([2, 4], np.float32, name="q")
    with pytest.raises(ModelValidationError, match="rank 2"):
        opset.scaled_dot_product_attention(q, q, q, name="attention")
    x = opset.parameter([3], np.float32)
    with pytest.raises(ModelValidationError, match="levels is 1"):
        opset.fake_quantize(x, 0.0, 1.0, 0.0, 1.0, 1)
    with pytest.raises(ModelValidationError, match="input 1 must be a scalar"):
        opset.hard_sigmoid(x, np.ones(3, np.float32), np.float32(0.5))
