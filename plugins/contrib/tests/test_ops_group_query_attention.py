"""com.microsoft GroupQueryAttention against ONNX Runtime and a loop-by-loop numpy reference written here:
prompts (padded), decoding over fixed-capacity and growing caches, packed QKV, rotary, local window,
softcap; on TEMPLATE, XLA and HETERO."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ms_models import check, ms_model

HEADS, KV_HEADS, SIZE = 4, 2, 16


def _rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, interleaved: bool) -> np.ndarray:
    out = x.copy()
    half = cos.shape[-1]
    for i in range(half):
        j, k = (2 * i, 2 * i + 1) if interleaved else (i, i + half)
        out[..., j] = x[..., j] * cos[..., i] - x[..., k] * sin[..., i]
        out[..., k] = x[..., k] * cos[..., i] + x[..., j] * sin[..., i]
    return out


@dataclass
class Case:
    batch: int
    sequence: int
    past: int
    seqlens: list[int]
    total: int
    window: int = -1
    softcap: float = 0.0
    rotary: bool = False
    interleaved: bool = False
    packed: bool = False


Array = np.ndarray


def _reference(case: Case, q: Array, k: Array, v: Array, past_k: Array | None, past_v: Array | None,
               cos: Array | None, sin: Array | None) -> list[Array]:  # fmt: skip
    """One sequence, one head, one query at a time."""
    b_, s_ = case.batch, case.sequence
    q = q.reshape(b_, s_, HEADS, SIZE).transpose(0, 2, 1, 3).astype(np.float64)
    k = k.reshape(b_, s_, KV_HEADS, SIZE).transpose(0, 2, 1, 3).astype(np.float64)
    v = v.reshape(b_, s_, KV_HEADS, SIZE).transpose(0, 2, 1, 3).astype(np.float64)
    length = max(case.past, case.total)
    present_k, present_v = np.zeros((b_, KV_HEADS, length, SIZE)), np.zeros((b_, KV_HEADS, length, SIZE))
    out = np.zeros((b_, HEADS, s_, SIZE))
    for b in range(b_):
        valid = case.seqlens[b] + 1
        start = 0 if s_ == case.total else valid - s_
        positions = start + np.arange(s_)
        qb, kb = q[b], k[b]
        if cos is not None and sin is not None:
            qb = _rope(qb, cos[positions][None], sin[positions][None], case.interleaved)
            kb = _rope(kb, cos[positions][None], sin[positions][None], case.interleaved)
        if past_k is not None and past_v is not None:
            present_k[b, :, :start], present_v[b, :, :start] = past_k[b, :, :start], past_v[b, :, :start]
        present_k[b, :, start : start + s_], present_v[b, :, start : start + s_] = kb, v[b]
        for h in range(HEADS):
            g = h // (HEADS // KV_HEADS)
            for i, at in enumerate(positions):
                keys = [
                    j for j in range(length) if j <= at and j < valid and (case.window <= 0 or j > at - case.window)
                ]
                scores = np.array([qb[h, i] @ present_k[b, g, j] / np.sqrt(SIZE) for j in keys])
                if case.softcap > 0:
                    scores = case.softcap * np.tanh(scores / case.softcap)
                weights = np.exp(scores - scores.max())
                out[b, h, i] = (weights / weights.sum()) @ present_v[b, g, keys]
    return [out.transpose(0, 2, 1, 3).reshape(b_, s_, HEADS * SIZE), present_k, present_v]


CASES = {
    "prompt": Case(2, 5, 0, [4, 4], 5),
    "padded prompt": Case(2, 5, 0, [2, 4], 5),
    "decode, fixed capacity": Case(2, 1, 10, [6, 3], 7),
    "decode, growing cache": Case(2, 1, 6, [6, 3], 7),
    "chunk after a prompt": Case(1, 3, 6, [8], 9),
    "local window prompt": Case(2, 5, 0, [4, 4], 5, window=2),
    "local window decode": Case(2, 1, 6, [6, 3], 7, window=3),
    "softcap": Case(2, 5, 0, [4, 4], 5, softcap=2.0),
    "rotary prompt": Case(2, 5, 0, [2, 4], 5, rotary=True),
    "rotary interleaved": Case(2, 5, 0, [4, 4], 5, rotary=True, interleaved=True),
    "rotary decode": Case(2, 1, 6, [6, 3], 7, rotary=True),
    "packed": Case(2, 5, 0, [4, 4], 5, packed=True),
    "packed rotary decode": Case(2, 1, 6, [6, 3], 7, rotary=True, packed=True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_group_query_attention_matches_onnx_runtime(name: str) -> None:
    case = CASES[name]
    rng = np.random.default_rng(len(name))
    shape = (case.batch, case.sequence)
    q = rng.standard_normal((*shape, HEADS * SIZE)).astype(np.float32)
    k, v = (rng.standard_normal((*shape, KV_HEADS * SIZE)).astype(np.float32) for _ in range(2))
    cache = (case.batch, KV_HEADS, case.past, SIZE)
    past_k, past_v = (rng.standard_normal(cache).astype(np.float32) if case.past else None for _ in range(2))
    cos = sin = None
    if case.rotary:
        angles = rng.random((32, SIZE // 2)) * 6
        cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    inputs = {
        "q": np.concatenate([q, k, v], axis=-1) if case.packed else q,
        "k": None if case.packed else k,
        "v": None if case.packed else v,
        "past_k": past_k,
        "past_v": past_v,
        "seqlens_k": np.array(case.seqlens, np.int32),
        "total": np.array(case.total, np.int32),
        "cos": cos,
        "sin": sin,
    }
    constants = ["total"] + (["cos", "sin"] if case.rotary else [])
    model, feeds = ms_model(
        "GroupQueryAttention", inputs, ["y", "present_k", "present_v"], constants=constants, num_heads=HEADS,
        kv_num_heads=KV_HEADS, local_window_size=case.window, softcap=case.softcap, do_rotary=int(case.rotary),
        rotary_interleaved=int(case.interleaved),
    )  # fmt: skip
    want = check(model, feeds, rtol=1e-4, atol=1e-5)
    expected = _reference(case, q, k, v, past_k, past_v, cos, sin)
    for got, reference in zip(want, expected):
        np.testing.assert_allclose(got, reference, rtol=1e-4, atol=1e-5)


@settings(max_examples=8, deadline=None)
@given(
    batch=st.integers(1, 3), past=st.integers(0, 6), new=st.integers(1, 3), window=st.sampled_from([-1, 1, 3]),
    softcap=st.sampled_from([0.0, 1.5]), rotary=st.booleans(), seed=st.integers(0, 2**16), data=st.data(),
)  # fmt: skip
def test_group_query_attention_decoding_any_fill(batch: int, past: int, new: int, window: int, softcap: float,
                                                 rotary: bool, seed: int, data: st.DataObject) -> None:  # fmt: skip
    """Decoding steps over a fixed-capacity cache, each sequence filled to its own length, against the
    loop reference (TEMPLATE: ONNX Runtime takes one new token per sequence with a past only in batch 1)."""
    capacity = past + new + 2
    filled = data.draw(st.lists(st.integers(0, past), min_size=batch, max_size=batch))
    case = Case(batch, new, capacity, [f + new - 1 for f in filled], capacity, window=window, softcap=softcap,
                rotary=rotary)  # fmt: skip
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((batch, new, HEADS * SIZE)).astype(np.float32)
    k, v = (rng.standard_normal((batch, new, KV_HEADS * SIZE)).astype(np.float32) for _ in range(2))
    past_k, past_v = (rng.standard_normal((batch, KV_HEADS, capacity, SIZE)).astype(np.float32) for _ in range(2))
    cos = sin = None
    if rotary:
        angles = rng.random((32, SIZE // 2)) * 6
        cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    inputs = {"q": q, "k": k, "v": v, "past_k": past_k, "past_v": past_v,
              "seqlens_k": np.array(case.seqlens, np.int32), "total": np.array(capacity, np.int32), "cos": cos,
              "sin": sin}  # fmt: skip
    model, feeds = ms_model(
        "GroupQueryAttention", inputs, ["y", "present_k", "present_v"], constants=["total", "cos", "sin"] if rotary
        else ["total"], num_heads=HEADS, kv_num_heads=KV_HEADS, local_window_size=window, softcap=softcap,
        do_rotary=int(rotary),
    )  # fmt: skip
    expected = _reference(case, q, k, v, past_k, past_v, cos, sin)
    check(model, feeds, expected=[e.astype(np.float32) for e in expected], devices=("TEMPLATE",), rtol=1e-4, atol=1e-5)
