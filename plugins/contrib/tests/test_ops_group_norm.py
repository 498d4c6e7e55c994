"""com.microsoft GroupNorm (which ONNX Runtime computes on CUDA only) against numpy written here, on
TEMPLATE, XLA and HETERO."""

from __future__ import annotations

import numpy as np
import pytest
from ms_models import check, ms_model


def _group_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, groups: int, eps: float) -> np.ndarray:
    """Channels-first group normalization, one group at a time."""
    out = np.empty(x.shape, np.float64)
    size = x.shape[1] // groups
    for n in range(x.shape[0]):
        for g in range(groups):
            part = x[n, g * size : (g + 1) * size].astype(np.float64)
            out[n, g * size : (g + 1) * size] = (part - part.mean()) / np.sqrt(part.var() + eps)
    shape = [1, -1] + [1] * (x.ndim - 2)
    return out * gamma.reshape(shape) + beta.reshape(shape)


@pytest.mark.parametrize("channels_last", [1, 0])
@pytest.mark.parametrize("activation", [0, 1])
def test_group_norm(channels_last: int, activation: int) -> None:
    rng = np.random.default_rng(channels_last + 2 * activation)
    x = rng.standard_normal((2, 6, 3, 4)).astype(np.float32)  # channels first: 6 channels, 3 groups
    gamma, beta = rng.standard_normal(6).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    expected = _group_norm(x, gamma, beta, 3, 1e-5)
    if activation:
        expected = expected / (1 + np.exp(-expected))
    if channels_last:
        x, expected = np.ascontiguousarray(x.transpose(0, 2, 3, 1)), expected.transpose(0, 2, 3, 1)
    model, feeds = ms_model("GroupNorm", {"x": x, "gamma": gamma, "beta": beta}, constants=["gamma", "beta"],
                            groups=3, epsilon=1e-5, activation=activation, channels_last=channels_last)  # fmt: skip
    check(model, feeds, expected=[expected.astype(np.float32)], rtol=1e-4, atol=1e-5)
