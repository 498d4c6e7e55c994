"""TfIdfVectorizer on integer tokens: against n-gram counts made with a Python loop here, and ONNX Runtime,
on TEMPLATE and XLA, in each mode, with skips, 1-D and batched."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx_models import check, node_model

POOL = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7]  # 1-grams 2 3 5 4, 2-grams (5 6) (7 8) (6 7)
COUNTS = [0, 4]
INDEXES = [0, 1, 2, 3, 4, 5, 6]


def loop_counts(row: list[int], low: int, high: int, skips: int) -> np.ndarray:
    grams = [(g,) for g in POOL[:4]] + [tuple(POOL[i : i + 2]) for i in range(4, len(POOL), 2)]
    out = np.zeros(len(grams), np.float32)
    for j, gram in enumerate(grams):
        n = len(gram)
        if not low <= n <= high:
            continue
        for skip in range(skips + 1) if n > 1 else [0]:
            step = skip + 1
            for i in range(len(row) - (n - 1) * step):
                out[j] += tuple(row[i + k * step] for k in range(n)) == gram
    return out


@settings(max_examples=15, deadline=None)
@given(
    tokens=st.lists(st.integers(2, 8), min_size=3, max_size=12),
    low=st.integers(1, 2),
    skips=st.integers(0, 3),
    batched=st.booleans(),
)
def test_tf_counts_match_a_loop(tokens: list[int], low: int, skips: int, batched: bool) -> None:
    x = np.array([tokens, tokens[::-1]] if batched else tokens, np.int32)
    attrs = {"min_gram_length": low, "max_gram_length": 2, "max_skip_count": skips, "mode": "TF"}
    model, feeds = node_model("TfIdfVectorizer", {"x": x}, 9, pool_int64s=POOL, ngram_counts=COUNTS,
                              ngram_indexes=INDEXES, **attrs)  # fmt: skip
    rows = [list(r) for r in np.atleast_2d(x)]
    want = np.stack([loop_counts(r, low, 2, skips) for r in rows])
    check(model, feeds, ("TEMPLATE", "XLA"), expected=[want if batched else want[0]])


@pytest.mark.parametrize("mode", ["TF", "IDF", "TFIDF"])
def test_each_mode_with_weights_matches_onnx_runtime(mode: str) -> None:
    x = np.array([[2, 3, 5, 6, 7, 8, 6, 7, 5, 6], [5, 6, 5, 6, 2, 2, 3, 7, 8, 4]], np.int64)
    weights = [0.5, 1.0, 2.0, 0.25, 3.0, 1.5, 0.75]
    model, feeds = node_model(
        "TfIdfVectorizer", {"x": x}, 9, pool_int64s=POOL, ngram_counts=COUNTS, ngram_indexes=[6, 5, 4, 3, 2, 1, 0],
        weights=weights, min_gram_length=1, max_gram_length=2, max_skip_count=1, mode=mode,
    )  # fmt: skip
    check(model, feeds, ("TEMPLATE", "XLA"))
