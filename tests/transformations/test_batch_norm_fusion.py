"""ConvBatchNormFusion: a BatchNormInference after a convolution (and its bias) folds into the filters
and one Add, computing what the unfolded graph computes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.reference import evaluate
from hetero_sdk.transformations import ConvBatchNormFusion, fused_names


def _conv_bn(grouped: bool, with_bias: bool, seed: int) -> tuple[hs.Model, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = opset.parameter([2, 4, 6, 5], hs.Type.f32, name="x")
    if grouped:
        w = rng.standard_normal((2, 3, 2, 3, 3)).astype(np.float32)  # 2 groups, 3 outputs each
        y = opset.group_convolution(x, opset.constant(w), [1, 1], [1, 1], [1, 1], [1, 1], name="conv")
    else:
        w = rng.standard_normal((6, 4, 3, 3)).astype(np.float32)
        y = opset.convolution(x, opset.constant(w), [1, 1], [1, 1], [1, 1], [1, 1], name="conv")
    if with_bias:
        y = opset.add(y, opset.constant(rng.standard_normal((1, 6, 1, 1)).astype(np.float32)), name="bias")
    gamma, beta, mean = (rng.standard_normal(6).astype(np.float32) for _ in range(3))
    variance = rng.uniform(0.1, 2.0, 6).astype(np.float32)
    norm = opset.batch_norm_inference(y, gamma, beta, mean, variance, epsilon=1e-3, name="bn")
    model = hs.Model([opset.relu(norm, name="relu")], [x], name="conv_bn")
    return model, rng.standard_normal((2, 4, 6, 5)).astype(np.float32)


@settings(max_examples=12, deadline=None)
@given(grouped=st.booleans(), with_bias=st.booleans(), seed=st.integers(0, 2**16))
def test_folding_computes_what_the_unfolded_graph_computes(grouped: bool, with_bias: bool, seed: int) -> None:
    model, x = _conv_bn(grouped, with_bias, seed)
    expected = evaluate(model, [x])[0]
    folded = model.clone()
    assert ConvBatchNormFusion().run(folded)
    types = [n.type_name for n in folded.get_ops()]
    assert "BatchNormInference" not in types and types.count("Add") == 1
    np.testing.assert_allclose(evaluate(folded, [x])[0], expected, rtol=1e-4, atol=1e-4)
    norm_output = next(n for n in folded.get_ops() if n.type_name == "Add")
    assert "bn" in fused_names(norm_output) and norm_output.friendly_name == "bn"


def test_a_convolution_read_elsewhere_is_left_alone() -> None:
    x = opset.parameter([1, 2, 4, 4], hs.Type.f32, name="x")
    conv = opset.convolution(x, np.ones((2, 2, 1, 1), np.float32), [1, 1], [0, 0], [0, 0], [1, 1], name="conv")
    one, zero = np.ones(2, np.float32), np.zeros(2, np.float32)
    norm = opset.batch_norm_inference(conv, one, zero, zero, one, epsilon=0.0)
    model = hs.Model([norm, conv], [x])
    assert not ConvBatchNormFusion().run(model)


@pytest.mark.parametrize("device", ["TEMPLATE"])
def test_template_folds_batch_norm_when_compiling(device: str) -> None:
    model, x = _conv_bn(grouped=False, with_bias=True, seed=3)
    compiled = hs.Core().compile_model(model, device)
    types = {n.get_rt_info()["layerType"] for n in compiled.get_runtime_model().get_ops()}
    assert "BatchNormInference" not in types
    np.testing.assert_allclose(compiled({"x": x})["relu"], evaluate(model, [x])[0], rtol=1e-4, atol=1e-4)
