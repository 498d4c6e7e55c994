"""com.microsoft Gelu, FastGelu and BiasAdd against ONNX Runtime (numpy written here for BiasAdd, which
ONNX Runtime computes on CUDA only), on TEMPLATE and XLA."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hetero_sdk.errors import HeteroSDKError
from hypothesis import given, settings
from hypothesis import strategies as st
from ms_models import check, ms_model, run_sdk
from onnx import helper

FEW = settings(max_examples=6, deadline=None)


def _normal(rng: np.random.Generator, *shape: int, dtype: type = np.float32) -> np.ndarray:
    return (rng.standard_normal(shape) * 3).astype(dtype)


def test_gelu_is_the_exact_gelu() -> None:
    x = _normal(np.random.default_rng(0), 2, 3, 7)
    model, feeds = ms_model("Gelu", {"x": x})
    want = check(model, feeds)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(want[0], 0.5 * x * (1 + erf(x / math.sqrt(2))), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("bias", [True, False])
def test_fast_gelu_matches_onnx_runtime(bias: bool) -> None:
    rng = np.random.default_rng(1)
    x = _normal(rng, 2, 4, 9)
    b = _normal(rng, 9) if bias else None
    model, feeds = ms_model("FastGelu", {"x": x, "bias": b})
    want = check(model, feeds)
    v = (x + (b if bias else 0)).astype(np.float64)
    tanh_form = 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))
    np.testing.assert_allclose(want[0], tanh_form, rtol=1e-5, atol=1e-5)


@FEW
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=4), seed=st.integers(0, 2**16))
def test_fast_gelu_any_rank(shape: list[int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    inputs = {"x": _normal(rng, *shape), "bias": _normal(rng, shape[-1])}
    check(*ms_model("FastGelu", inputs), devices=("TEMPLATE",))


def test_bias_add_adds_bias_along_channels_and_skip() -> None:
    rng = np.random.default_rng(2)
    x, bias, skip = _normal(rng, 2, 3, 5), _normal(rng, 5), _normal(rng, 2, 3, 5)
    model, feeds = ms_model("BiasAdd", {"x": x, "bias": bias, "skip": skip})
    check(model, feeds, expected=[x + bias + skip])


def test_bias_add_wrong_bias_size_is_named() -> None:
    rng = np.random.default_rng(3)
    model, feeds = ms_model(
        "BiasAdd", {"x": _normal(rng, 2, 3, 5), "bias": _normal(rng, 4), "skip": _normal(rng, 2, 3, 5)}
    )
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", 1, [2, 3, 5]))
    with pytest.raises(HeteroSDKError, match="bias"):
        run_sdk(model, feeds, "TEMPLATE")
