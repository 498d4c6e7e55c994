"""The logits processing of hetero_sdk.genai, against numpy written here: greedy is the first maximum,
top-k keeps exactly k of the largest, top-p the smallest set reaching p, and a draw never picks a
token of probability 0 and follows the probabilities."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from hetero_sdk.genai import GenerationConfig
from hetero_sdk.genai.logits import (
    greedy,
    next_tokens,
    sample,
    scale_by_temperature,
    softmax,
    top_k_filter,
    top_p_filter,
)

VOCAB = st.integers(2, 40)


def logit_rows(vocab: int, rows: int = 3) -> st.SearchStrategy[np.ndarray]:
    """Rows of logits with repeated values (ties) as often as distinct ones."""
    values = st.sampled_from([-3.0, -1.0, 0.0, 0.5, 2.0]) | st.floats(-20, 20, width=32)
    return hnp.arrays(np.float32, (rows, vocab), elements=values)


@given(VOCAB.flatmap(logit_rows))
def test_greedy_takes_the_first_maximum_of_each_row(logits: np.ndarray) -> None:
    expected = [next(i for i, v in enumerate(row) if v == row.max()) for row in logits]
    assert greedy(logits).tolist() == expected


def test_temperature_divides_the_logits() -> None:
    logits = np.array([[1.0, -2.0, 4.0]], np.float32)
    np.testing.assert_allclose(scale_by_temperature(logits, 0.5), [[2.0, -4.0, 8.0]])
    np.testing.assert_allclose(scale_by_temperature(logits, 2.0), [[0.5, -1.0, 2.0]])


def test_softmax_matches_the_closed_form_and_gives_minus_infinity_zero() -> None:
    logits = np.array([[0.0, np.log(3.0), -np.inf]])
    np.testing.assert_allclose(softmax(logits), [[0.25, 0.75, 0.0]])


@given(VOCAB.flatmap(lambda v: st.tuples(logit_rows(v), st.integers(1, v))))
def test_top_k_keeps_exactly_k_of_the_largest_logits_unchanged(case: tuple[np.ndarray, int]) -> None:
    logits, k = case
    out = top_k_filter(logits, k)
    for row, filtered in zip(logits, out):
        kept = np.isfinite(filtered)
        assert kept.sum() == k
        np.testing.assert_array_equal(filtered[kept], row[kept])
        if k < len(row):
            assert row[kept].min() >= row[~kept].max()
            # among equal logits at the boundary the lower ids stay
            boundary = row[kept].min()
            tied = np.flatnonzero(row == boundary)
            assert np.all(np.diff(kept[tied].astype(int)) <= 0)


def test_top_k_of_zero_or_more_than_the_vocabulary_keeps_all() -> None:
    logits = np.array([[0.1, 0.7, -0.2]])
    np.testing.assert_array_equal(top_k_filter(logits, 0), logits)
    np.testing.assert_array_equal(top_k_filter(logits, 5), logits)
    np.testing.assert_array_equal(top_k_filter(logits, 2), [[0.1, 0.7, -np.inf]])


@given(VOCAB.flatmap(lambda v: st.tuples(logit_rows(v), st.floats(0.01, 1.0))))
@settings(max_examples=200)
def test_top_p_keeps_the_smallest_set_of_most_likely_tokens_reaching_p(case: tuple[np.ndarray, float]) -> None:
    logits, p = case
    out = top_p_filter(logits, p)
    for row, filtered in zip(logits, out):
        weights = np.exp(row.astype(np.float64) - row.max())
        probabilities = weights / weights.sum()
        kept = np.isfinite(filtered)
        if p == 1.0:
            assert kept.all()
            continue
        np.testing.assert_array_equal(filtered[kept], row[kept])
        mass = probabilities[kept].sum()
        assert mass >= p - 1e-9  # reaches p
        if kept.sum() < len(row):
            assert probabilities[kept].min() >= probabilities[~kept].max()  # the most likely ones
        # smallest: without its least likely token the set falls short of p
        assert mass - probabilities[kept].min() < p + 1e-9 or kept.sum() == 1


def test_top_p_worked_example() -> None:
    # probabilities 0.5, 0.3, 0.15, 0.05: p = 0.8 keeps the first two (0.8), p = 0.81 three
    logits = np.log(np.array([[0.3, 0.05, 0.5, 0.15]]))
    assert np.isfinite(top_p_filter(logits, 0.79)).tolist() == [[True, False, True, False]]
    assert np.isfinite(top_p_filter(logits, 0.81)).tolist() == [[True, False, True, True]]
    assert np.isfinite(top_p_filter(logits, 0.4)).tolist() == [[False, False, True, False]]
    np.testing.assert_array_equal(top_p_filter(logits, 1.0), logits)


@given(st.integers(0, 2**32 - 1), hnp.arrays(np.float64, (4, 6), elements=st.sampled_from([0.0, 0.0, 1.0, 2.5])))
def test_a_draw_never_picks_a_token_of_probability_zero(seed: int, weights: np.ndarray) -> None:
    weights[:, 3] += 1.0  # every row has some mass
    probabilities = weights / weights.sum(axis=-1, keepdims=True)
    drawn = sample(probabilities, np.random.default_rng(seed))
    assert all(probabilities[row, token] > 0 for row, token in enumerate(drawn))


def test_draws_follow_the_probabilities() -> None:
    probabilities = np.tile([0.1, 0.0, 0.6, 0.3], (20_000, 1))
    counts = np.bincount(sample(probabilities, np.random.default_rng(3)), minlength=4) / 20_000
    np.testing.assert_allclose(counts, [0.1, 0.0, 0.6, 0.3], atol=0.01)


def test_a_draw_inverts_the_cumulative_probabilities_with_one_uniform_per_row() -> None:
    probabilities = np.array([[0.2, 0.5, 0.3], [0.6, 0.0, 0.4]])
    uniforms = np.random.default_rng(11).random(2)
    expected = [int(np.searchsorted(np.cumsum(p), u, side="right")) for p, u in zip(probabilities, uniforms)]
    assert sample(probabilities, np.random.default_rng(11)).tolist() == expected


@given(VOCAB.flatmap(logit_rows), st.floats(0.1, 5.0), st.integers(0, 1000))
def test_sampling_with_top_k_one_is_greedy(logits: np.ndarray, temperature: float, seed: int) -> None:
    config = GenerationConfig(do_sample=True, temperature=temperature, top_k=1)
    assert next_tokens(logits, config, np.random.default_rng(seed)).tolist() == greedy(logits).tolist()


def test_greedy_config_ignores_the_generator() -> None:
    logits = np.array([[0.0, 3.0, 1.0]])
    assert next_tokens(logits, GenerationConfig(), np.random.default_rng(0)).tolist() == [1]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sampling_applies_temperature_then_top_k_then_top_p(seed: int) -> None:
    logits = np.array([[2.0, 1.0, 0.0, -1.0, 0.5]])
    config = GenerationConfig(do_sample=True, temperature=0.5, top_k=3, top_p=0.9, rng_seed=seed)
    scaled = logits / 0.5  # [4, 2, 0, -2, 1]: top-3 keeps ids 0, 1, 4
    kept = np.exp(scaled[0, [0, 1, 4]] - 4.0) / np.exp(scaled[0, [0, 1, 4]] - 4.0).sum()
    assert kept[0] < 0.9 <= kept[0] + kept[1]  # so top-p keeps ids 0 and 1
    probabilities = np.zeros(5)
    probabilities[[0, 1]] = kept[:2] / kept[:2].sum()
    u = np.random.default_rng(seed).random()
    expected = int(np.searchsorted(np.cumsum(probabilities), u * np.cumsum(probabilities)[-1], side="right"))
    assert next_tokens(logits, config, np.random.default_rng(seed)).tolist() == [expected]
