"""Choosing the next token from the last position's logits, on the host: small pure functions on
``[batch, vocab]`` arrays, applied in Hugging Face's order (temperature, top-k, top-p, then a draw).

A token a filter drops gets the logit ``-inf``, so the softmax gives it probability 0 exactly. Ties
are broken by the lower token id everywhere, so each function has one answer.
"""

from __future__ import annotations

import numpy as np

from hetero_sdk.genai.config import GenerationConfig

__all__ = ["greedy", "next_tokens", "sample", "scale_by_temperature", "softmax", "top_k_filter", "top_p_filter"]


def greedy(logits: np.ndarray) -> np.ndarray:
    """The most likely token of each row (the lowest id among equal maxima), as int64 ``[batch]``."""
    return np.argmax(logits, axis=-1).astype(np.int64)


def scale_by_temperature(logits: np.ndarray, temperature: float) -> np.ndarray:
    """``logits / temperature`` in float64 (``temperature`` > 0)."""
    return np.asarray(logits, np.float64) / temperature


def softmax(logits: np.ndarray) -> np.ndarray:
    """The probabilities of each row, float64; ``-inf`` logits get 0."""
    shifted = np.asarray(logits, np.float64) - np.max(logits, axis=-1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=-1, keepdims=True)


def _descending(values: np.ndarray) -> np.ndarray:
    """The indices that sort each row from the largest value down, lower index first among ties."""
    return np.argsort(-np.asarray(values, np.float64), axis=-1, kind="stable")


def top_k_filter(logits: np.ndarray, k: int) -> np.ndarray:
    """Keeps the ``k`` largest logits of each row (exactly ``k``: among ties the lower ids) and sets the
    others to ``-inf``; ``k`` = 0 or >= the vocabulary keeps all."""
    out = np.array(logits, np.float64)
    if k <= 0 or k >= out.shape[-1]:
        return out
    dropped = _descending(out)[..., k:]
    np.put_along_axis(out, dropped, -np.inf, axis=-1)
    return out


def top_p_filter(logits: np.ndarray, p: float) -> np.ndarray:
    """Keeps, in each row, the smallest set of most likely tokens whose probability sums to at least
    ``p`` and sets the others to ``-inf`` (nucleus sampling); ``p`` = 1 keeps all."""
    out = np.array(logits, np.float64)
    if p >= 1:
        return out
    order = _descending(out)
    ordered = np.take_along_axis(softmax(out), order, axis=-1)
    # the set ends at the first token whose running total reaches p; rounding may leave the total of
    # every possible token just under p, and then all of those stay
    kept = np.sum(np.cumsum(ordered, axis=-1) < p, axis=-1, keepdims=True) + 1
    kept = np.minimum(kept, np.sum(ordered > 0, axis=-1, keepdims=True))
    dropped = np.empty(out.shape, bool)
    np.put_along_axis(dropped, order, np.arange(out.shape[-1]) >= kept, axis=-1)
    out[dropped] = -np.inf
    return out


def sample(probabilities: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One token per row drawn from ``probabilities`` (rows summing to 1) with one ``rng.random()``
    each: the first token whose cumulative probability exceeds the draw (never a token of probability 0)."""
    cumulative = np.cumsum(probabilities, axis=-1)
    draws = rng.random(cumulative.shape[:-1])[..., None] * cumulative[..., -1:]
    return np.sum(cumulative <= draws, axis=-1).astype(np.int64)


def next_tokens(logits: np.ndarray, config: GenerationConfig, rng: np.random.Generator) -> np.ndarray:
    """The next token of each row of ``logits`` (``[batch, vocab]``) under ``config``: greedy, or
    temperature, top-k, top-p and a draw from ``rng``."""
    if not config.do_sample:
        return greedy(logits)
    processed = top_k_filter(scale_by_temperature(logits, config.temperature), config.top_k)
    return sample(softmax(top_p_filter(processed, config.top_p)), rng)
