"""com.microsoft PagedAttention against numpy written here, token by token (ONNX Runtime has a CUDA kernel
only), on TEMPLATE, XLA and HETERO: the attention output and both updated caches."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hetero_sdk.errors import UnsupportedOperationError
from hypothesis import given, settings
from hypothesis import strategies as st
from ms_models import check, core, ms_model, typed_model

OUTPUTS = ("y", "key_cache_out", "value_cache_out")


def _rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, interleaved: bool) -> np.ndarray:
    """One head's ``x`` (size,) rotated pair by pair by the angles of ``cos``/``sin`` (size / 2,)."""
    out = x.copy()
    for i in range(len(cos)):
        a, b = (2 * i, 2 * i + 1) if interleaved else (i, i + len(cos))
        out[a] = x[a] * cos[i] - x[b] * sin[i]
        out[b] = x[b] * cos[i] + x[a] * sin[i]
    return out


def _reference(feeds: dict[str, np.ndarray], heads: int, kv_heads: int, **attrs: Any) -> list[np.ndarray]:
    """The op's meaning in loops: write each new token's key and value at its position through the block
    table, then attend each query causally to its sequence's positions."""
    cum, past, table = (feeds[n].astype(np.int64) for n in ("cum", "past", "table"))
    key_cache, value_cache = feeds["key_cache"].astype(np.float64), feeds["value_cache"].astype(np.float64)
    blocks, block_size, _, size = key_cache.shape
    tokens = feeds["query"].shape[0]
    q = feeds["query"].astype(np.float64).reshape(tokens, heads, size)
    k = feeds["key"].astype(np.float64).reshape(tokens, kv_heads, size)
    v = feeds["value"].astype(np.float64).reshape(tokens, kv_heads, size)
    scale = attrs.get("scale", 0.0) or 1 / np.sqrt(size)
    softcap, window = attrs.get("softcap", 0.0), attrs.get("local_window_size", -1)

    def block_of(b: int, p: int) -> int:
        page = p // block_size
        block = int(table[b, page]) if p >= 0 and page < table.shape[1] else -1
        return block if 0 <= block < blocks else -1

    where = [(b, i, int(past[b] + i - cum[b])) for b in range(len(past)) for i in range(cum[b], cum[b + 1])]
    for b, i, p in where:
        if attrs.get("do_rotary"):
            cos, sin = feeds["cos"][p].astype(np.float64), feeds["sin"][p].astype(np.float64)
            interleaved = bool(attrs.get("rotary_interleaved"))
            q[i] = [_rope(q[i, h], cos, sin, interleaved) for h in range(heads)]
            k[i] = [_rope(k[i, h], cos, sin, interleaved) for h in range(kv_heads)]
        if (block := block_of(b, p)) >= 0:
            key_cache[block, p % block_size], value_cache[block, p % block_size] = k[i], v[i]
    out = np.zeros((tokens, heads, size))
    for b, i, p in where:
        seen = [j for j in range(p + 1) if block_of(b, j) >= 0 and (window < 0 or j > p - window)]
        for h in range(heads):
            kv = h // (heads // kv_heads)
            keys = np.array([key_cache[block_of(b, j), j % block_size, kv] for j in seen]).reshape(-1, size)
            values = np.array([value_cache[block_of(b, j), j % block_size, kv] for j in seen]).reshape(-1, size)
            scores = keys @ q[i, h] * scale
            if softcap > 0:
                scores = softcap * np.tanh(scores / softcap)
            if len(seen):
                weights = np.exp(scores - scores.max())
                out[i, h] = weights @ values / weights.sum()
    dtype = feeds["query"].dtype
    return [out.reshape(tokens, heads * size).astype(dtype), key_cache.astype(dtype), value_cache.astype(dtype)]


def _feeds(
    rng: np.random.Generator,
    past: list[int],
    new: list[int],
    heads: int,
    kv_heads: int,
    size: int = 4,
    block_size: int = 2,
    dtype: Any = np.float32,
) -> dict[str, np.ndarray]:
    per_sequence = -(-max(p + n for p, n in zip(past, new)) // block_size)
    blocks = len(past) * per_sequence + 2
    table = rng.permutation(blocks)[: len(past) * per_sequence].reshape(len(past), per_sequence)
    tokens = sum(new)

    def values(*shape: int) -> np.ndarray:
        return rng.uniform(-1, 1, shape).astype(dtype)

    return {
        "query": values(tokens, heads * size),
        "key": values(tokens, kv_heads * size),
        "value": values(tokens, kv_heads * size),
        "key_cache": values(blocks, block_size, kv_heads, size),
        "value_cache": values(blocks, block_size, kv_heads, size),
        "cum": np.concatenate([[0], np.cumsum(new)]).astype(np.int32),
        "past": np.array(past, np.int32),
        "table": table.astype(np.int32),
    }


def _check(feeds: dict[str, np.ndarray], heads: int, kv_heads: int, rtol: float = 1e-5, **attrs: Any) -> None:
    inputs: dict[str, np.ndarray | None] = dict(feeds)  # in the op's order: cos and sin come last
    types = {o: feeds["query"].dtype for o in OUTPUTS}
    model, run_feeds = ms_model("PagedAttention", inputs, OUTPUTS, output_types=types, num_heads=heads,
                                kv_num_heads=kv_heads, **attrs)  # fmt: skip
    check(model, run_feeds, _reference(feeds, heads, kv_heads, **attrs), rtol=rtol, atol=rtol)


@pytest.mark.parametrize(("heads", "kv_heads"), [(2, 2), (4, 2), (3, 1)])
def test_paged_attention_prompt_and_decode_with_a_shuffled_block_table(heads: int, kv_heads: int) -> None:
    rng = np.random.default_rng(heads)
    _check(_feeds(rng, past=[3, 0, 5], new=[2, 3, 1], heads=heads, kv_heads=kv_heads), heads, kv_heads)


@pytest.mark.parametrize("attrs", [{"softcap": 2.0}, {"local_window_size": 2}, {"scale": 0.3}])
def test_paged_attention_softcap_window_and_scale(attrs: dict[str, Any]) -> None:
    rng = np.random.default_rng(7)
    _check(_feeds(rng, past=[4, 1], new=[3, 2], heads=4, kv_heads=2, block_size=3), 4, 2, **attrs)


@pytest.mark.parametrize("interleaved", [0, 1])
def test_paged_attention_rotates_queries_and_keys_at_their_positions(interleaved: int) -> None:
    rng = np.random.default_rng(11)
    feeds = _feeds(rng, past=[2, 3], new=[2, 1], heads=2, kv_heads=1, size=4)
    angles = rng.uniform(0, 6, (8, 2))
    feeds["cos"], feeds["sin"] = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    _check(feeds, 2, 1, do_rotary=1, rotary_interleaved=interleaved)


def test_paged_attention_reads_packed_qkv() -> None:
    rng = np.random.default_rng(3)
    feeds = _feeds(rng, past=[1, 2], new=[2, 2], heads=4, kv_heads=2)
    packed = np.concatenate([feeds["query"], feeds["key"], feeds["value"]], axis=1)
    inputs: dict[str, np.ndarray | None] = {"query": packed, "key": None, "value": None}
    inputs.update({k: feeds[k] for k in ("key_cache", "value_cache", "cum", "past", "table")})
    model, run_feeds = ms_model("PagedAttention", inputs, OUTPUTS, num_heads=4, kv_num_heads=2)
    check(model, run_feeds, _reference(feeds, 4, 2))


def test_unmapped_blocks_are_neither_written_nor_attended_and_a_lone_query_gives_zeros() -> None:
    rng = np.random.default_rng(5)
    feeds = _feeds(rng, past=[2, 0], new=[2, 2], heads=2, kv_heads=2)
    feeds["table"][1] = -1  # the second sequence has no blocks
    feeds["table"][0, -1] = -1  # the first loses its last page
    want = _reference(feeds, 2, 2)
    assert not want[0][2:].any()  # the second sequence's queries see nothing
    _check(feeds, 2, 2)


def test_paged_attention_in_f16() -> None:
    rng = np.random.default_rng(9)
    _check(_feeds(rng, past=[3, 1], new=[1, 2], heads=2, kv_heads=1, dtype=np.float16), 2, 1, rtol=2e-3)


@settings(max_examples=6, deadline=None)
@given(
    past=st.lists(st.integers(0, 5), min_size=1, max_size=3),
    data=st.data(),
)
def test_paged_attention_on_drawn_batches(past: list[int], data: st.DataObject) -> None:
    new = [data.draw(st.integers(1 if i == 0 else 0, 3)) for i in range(len(past))]
    kv_heads, group = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
    block_size = data.draw(st.integers(1, 4))
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    feeds = _feeds(rng, past, new, kv_heads * group, kv_heads, block_size=block_size)
    _check(feeds, kv_heads * group, kv_heads)


@pytest.mark.parametrize(
    ("extra", "attrs", "refusal"),
    [
        ({"slot_mapping": np.zeros(3, np.int32)}, {}, "slot_mapping"),
        ({}, {"is_causal": 0}, "is_causal=0"),
        ({}, {"kv_cache_layout": "LATENT"}, "LATENT"),
    ],
)
def test_what_the_sdk_does_not_compute_is_refused_with_a_typed_error(
    extra: dict[str, np.ndarray], attrs: dict[str, Any], refusal: str
) -> None:
    feeds = _feeds(np.random.default_rng(0), past=[1], new=[3], heads=2, kv_heads=2)
    inputs: dict[str, np.ndarray | None] = {**feeds, "cos": None, "sin": None, **extra}
    if not extra:
        inputs = dict(feeds)
    model, _ = ms_model("PagedAttention", inputs, OUTPUTS, num_heads=2, kv_num_heads=2, **attrs)
    typed = typed_model(model, _reference(feeds, 2, 2))
    with pytest.raises(UnsupportedOperationError, match=refusal):
        core().read_model(typed)
