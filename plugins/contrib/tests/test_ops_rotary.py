"""com.microsoft RotaryEmbedding against ONNX Runtime and numpy written here, on TEMPLATE, XLA and HETERO."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ms_models import check, ms_model

FEW = settings(max_examples=5, deadline=None)


def _rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, interleaved: bool) -> np.ndarray:
    """Rotates each (a, b) pair of ``x``'s last axis, element by element: x is (..., head_size), cos and
    sin (..., rotary_dim / 2)."""
    out = x.astype(np.float64).copy()
    half = cos.shape[-1]
    for i in range(half):
        j, k = (2 * i, 2 * i + 1) if interleaved else (i, i + half)
        a, b = x[..., j].astype(np.float64), x[..., k].astype(np.float64)
        out[..., j] = a * cos[..., i] - b * sin[..., i]
        out[..., k] = b * cos[..., i] + a * sin[..., i]
    return out


def _caches(rng: np.random.Generator, positions: int, half: int) -> tuple[np.ndarray, np.ndarray]:
    angles = rng.random((positions, half)) * 6
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("layout", ["3d", "4d"])
def test_rotary_matches_onnx_runtime(interleaved: int, layout: str) -> None:
    rng = np.random.default_rng(interleaved)
    batch, sequence, heads, size = 2, 3, 2, 8
    cos, sin = _caches(rng, 10, size // 2)
    positions = rng.integers(0, 10, (batch, sequence))
    x = rng.standard_normal((batch, heads, sequence, size)).astype(np.float32)
    expected = _rope(x, cos[positions][:, None], sin[positions][:, None], bool(interleaved))
    if layout == "3d":
        x = x.transpose(0, 2, 1, 3).reshape(batch, sequence, heads * size)
        expected = expected.transpose(0, 2, 1, 3).reshape(x.shape)
    inputs = {"x": x, "position_ids": positions, "cos": cos, "sin": sin}
    model, feeds = ms_model("RotaryEmbedding", inputs, constants=["cos", "sin"], interleaved=interleaved)
    want = check(model, feeds)
    np.testing.assert_allclose(want[0], expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotary_partial_rotary_dim_and_offset_position(interleaved: int) -> None:
    rng = np.random.default_rng(5)
    batch, sequence, heads, size, rotary = 2, 4, 3, 8, 4
    cos, sin = _caches(rng, 12, rotary // 2)
    x = rng.standard_normal((batch, sequence, heads * size)).astype(np.float32)
    inputs = {"x": x, "position_ids": np.array([5], np.int64), "cos": cos, "sin": sin}
    model, feeds = ms_model("RotaryEmbedding", inputs, interleaved=interleaved, num_heads=heads,
                            rotary_embedding_dim=rotary)  # fmt: skip
    want = check(model, feeds)
    where = 5 + np.arange(sequence)
    heads_view = x.reshape(batch, sequence, heads, size)
    expected = _rope(heads_view, cos[where][None, :, None], sin[where][None, :, None], bool(interleaved))
    np.testing.assert_allclose(want[0], expected.reshape(x.shape), rtol=1e-5, atol=1e-5)


@FEW
@given(batch=st.integers(1, 3), sequence=st.integers(1, 5), heads=st.integers(1, 3), half=st.integers(1, 4),
       interleaved=st.integers(0, 1), seed=st.integers(0, 2**16))  # fmt: skip
def test_rotary_shapes(batch: int, sequence: int, heads: int, half: int, interleaved: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    cos, sin = _caches(rng, sequence + 3, half)
    inputs = {
        "x": rng.standard_normal((batch, sequence, heads * 2 * half)).astype(np.float32),
        "position_ids": rng.integers(0, sequence + 3, (batch, sequence)),
        "cos": cos,
        "sin": sin,
    }
    check(*ms_model("RotaryEmbedding", inputs, interleaved=interleaved), devices=("TEMPLATE",))
