"""com.microsoft Attention (the transformer optimizer's fused BERT and GPT-2 attention) against ONNX
Runtime and numpy written here, on TEMPLATE, XLA and HETERO."""

from __future__ import annotations

import numpy as np
import pytest
from ms_models import check, ms_model

BATCH, SEQUENCE, HIDDEN, HEADS, PAST = 2, 4, 12, 3, 3


def _reference(x: np.ndarray, weights: np.ndarray, bias: np.ndarray | None, mask: np.ndarray | None = None,
               past: np.ndarray | None = None, causal: bool = False, attention_bias: np.ndarray | None = None,
               masked_value: float = -10000.0) -> list[np.ndarray]:  # fmt: skip
    """Head by head, query by query; masks add ``masked_value`` once per reason, as ONNX Runtime does."""
    qkv = x.astype(np.float64) @ weights + (0 if bias is None else bias)
    size = HIDDEN // HEADS
    q, k, v = (qkv[..., i * HIDDEN : (i + 1) * HIDDEN].reshape(BATCH, SEQUENCE, HEADS, size).transpose(0, 2, 1, 3)
               for i in range(3))  # fmt: skip
    past_length = 0 if past is None else past.shape[3]
    if past is not None:
        k, v = np.concatenate([past[0], k], axis=2), np.concatenate([past[1], v], axis=2)
    total = past_length + SEQUENCE
    out = np.zeros((BATCH, HEADS, SEQUENCE, size))
    for b in range(BATCH):
        for h in range(HEADS):
            for i in range(SEQUENCE):
                scores = np.array([q[b, h, i] @ k[b, h, j] / np.sqrt(size) for j in range(total)])
                for j in range(total):
                    if mask is not None and mask.ndim == 1 and j >= mask[b]:
                        scores[j] += masked_value
                    if mask is not None and mask.ndim == 2 and mask[b, j] == 0:
                        scores[j] += masked_value
                    if mask is not None and mask.ndim == 3 and mask[b, i, j] == 0:
                        scores[j] += masked_value
                    if causal and j > past_length + i:
                        scores[j] += masked_value
                    if attention_bias is not None:
                        scores[j] += attention_bias[0, h, i, j]
                weights_ = np.exp(scores - scores.max())
                out[b, h, i] = weights_ / weights_.sum() @ v[b, h]
    return [out.transpose(0, 2, 1, 3).reshape(BATCH, SEQUENCE, HIDDEN), np.stack([k, v])]


def _inputs(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "x": rng.standard_normal((BATCH, SEQUENCE, HIDDEN)).astype(np.float32),
        "weights": (rng.standard_normal((HIDDEN, 3 * HIDDEN)) / 3).astype(np.float32),
        "bias": rng.standard_normal(3 * HIDDEN).astype(np.float32),
        "past": rng.standard_normal((2, BATCH, HEADS, PAST, HIDDEN // HEADS)).astype(np.float32),
        "attention_bias": rng.standard_normal((1, HEADS, SEQUENCE, SEQUENCE)).astype(np.float32),
    }


MASKS = {
    "none": None,
    "key lengths": np.array([2, 4], np.int32),
    "raw": np.array([[1, 1, 0, 1], [1, 1, 1, 1]], np.int32),
    "raw 3-D": np.array([[[1, 0, 1, 1]] * 4, [[1, 1, 0, 1]] * 4], np.int32),
}


@pytest.mark.parametrize("mask", list(MASKS))
@pytest.mark.parametrize("bias", [True, False])
def test_bert_attention_matches_onnx_runtime(mask: str, bias: bool) -> None:
    given = _inputs(len(mask))
    inputs = {"x": given["x"], "weights": given["weights"], "bias": given["bias"] if bias else None,
              "mask": MASKS[mask]}  # fmt: skip
    model, feeds = ms_model("Attention", inputs, constants=["weights"] + (["bias"] if bias else []), num_heads=HEADS)
    want = check(model, feeds, rtol=1e-4, atol=1e-5)
    expected = _reference(given["x"], given["weights"], inputs["bias"], MASKS[mask])
    np.testing.assert_allclose(want[0], expected[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mask", [True, False])
def test_gpt2_attention_with_past_matches_onnx_runtime(mask: bool) -> None:
    given = _inputs(7)
    raw = np.array([[1, 0, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1, 1]], np.int32) if mask else None
    inputs = {"x": given["x"], "weights": given["weights"], "bias": given["bias"], "mask": raw, "past": given["past"]}
    model, feeds = ms_model("Attention", inputs, ["y", "present"], constants=["weights", "bias"], num_heads=HEADS,
                            unidirectional=1)  # fmt: skip
    want = check(model, feeds, rtol=1e-4, atol=1e-5)
    expected = _reference(given["x"], given["weights"], given["bias"], raw, given["past"], causal=True)
    for got, reference in zip(want, expected):
        np.testing.assert_allclose(got, reference, rtol=1e-4, atol=1e-5)


def test_attention_bias_after_left_out_mask_and_past() -> None:
    given = _inputs(8)
    inputs = {"x": given["x"], "weights": given["weights"], "bias": given["bias"], "mask": None, "past": None,
              "attention_bias": given["attention_bias"]}  # fmt: skip
    model, feeds = ms_model("Attention", inputs, num_heads=HEADS, mask_filter_value=-5.0)
    want = check(model, feeds, rtol=1e-4, atol=1e-5)
    expected = _reference(given["x"], given["weights"], given["bias"], attention_bias=given["attention_bias"])
    np.testing.assert_allclose(want[0], expected[0], rtol=1e-4, atol=1e-5)


def test_attention_mask_filter_value_is_added_not_infinite() -> None:
    given = _inputs(9)
    raw = MASKS["raw"]
    inputs = {"x": given["x"], "weights": given["weights"], "bias": given["bias"], "mask": raw}
    model, feeds = ms_model("Attention", inputs, num_heads=HEADS, mask_filter_value=-2.0)
    want = check(model, feeds, rtol=1e-4, atol=1e-5)
    expected = _reference(given["x"], given["weights"], given["bias"], raw, masked_value=-2.0)
    np.testing.assert_allclose(want[0], expected[0], rtol=1e-4, atol=1e-5)


def _mha_reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, bias: np.ndarray | None = None,
                   mask: np.ndarray | None = None, attention_bias: np.ndarray | None = None,
                   past_k: np.ndarray | None = None, past_v: np.ndarray | None = None,
                   causal: bool = False) -> list[np.ndarray]:  # fmt: skip
    """MultiHeadAttention head by head, query by query; k and v (batch, keys, hidden) or already in heads."""
    batch, sequence, hidden = q.shape
    size = hidden // HEADS
    q = q.astype(np.float64) + (0 if bias is None else bias[:hidden])
    if k.ndim == 3:
        k = k + (0 if bias is None else bias[hidden : 2 * hidden])
        v = v + (0 if bias is None else bias[2 * hidden :])
        k, v = (t.reshape(batch, -1, HEADS, size).transpose(0, 2, 1, 3) for t in (k, v))
    q = q.reshape(batch, sequence, HEADS, size).transpose(0, 2, 1, 3)
    past_length = 0
    if past_k is not None and past_v is not None:
        past_length = past_k.shape[2]
        k, v = np.concatenate([past_k, k], axis=2), np.concatenate([past_v, v], axis=2)
    out = np.zeros((batch, HEADS, sequence, size))
    for b in range(batch):
        for h in range(HEADS):
            for i in range(sequence):
                scores = k[b, h] @ q[b, h, i] / np.sqrt(size)
                for j in range(k.shape[2]):
                    if mask is not None and (j >= mask[b] if mask.ndim == 1 else mask[b, j] == 0):
                        scores[j] -= 10000.0
                    if causal and j > past_length + i:
                        scores[j] -= 10000.0
                    if attention_bias is not None:
                        scores[j] += attention_bias[0, h, i, j]
                weights_ = np.exp(scores - scores.max())
                out[b, h, i] = weights_ / weights_.sum() @ v[b, h]
    return [out.transpose(0, 2, 1, 3).reshape(batch, sequence, hidden), k, v]


def _mha_inputs(seed: int, keys: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "q": rng.standard_normal((BATCH, SEQUENCE, HIDDEN)).astype(np.float32),
        "k": rng.standard_normal((BATCH, keys, HIDDEN)).astype(np.float32),
        "v": rng.standard_normal((BATCH, keys, HIDDEN)).astype(np.float32),
        "bias": rng.standard_normal(3 * HIDDEN).astype(np.float32),
        "past_k": rng.standard_normal((BATCH, HEADS, PAST, HIDDEN // HEADS)).astype(np.float32),
        "past_v": rng.standard_normal((BATCH, HEADS, PAST, HIDDEN // HEADS)).astype(np.float32),
        "attention_bias": rng.standard_normal((1, HEADS, SEQUENCE, 6)).astype(np.float32),
    }


MHA_CASES = ["cross", "cross with bias", "key lengths", "raw mask", "attention bias", "cached cross keys",
             "self with past, causal", "self with past"]  # fmt: skip


@pytest.mark.parametrize("case", MHA_CASES)
def test_multi_head_attention_matches_onnx_runtime(case: str) -> None:
    keys = SEQUENCE if "self" in case else 6
    given = _mha_inputs(len(case), keys)
    q, k, v = given["q"], given["k"], given["v"]
    inputs: dict[str, np.ndarray | None] = {"q": q, "k": k, "v": v}
    reference: dict[str, object] = {}
    if "bias" in case or "cached" in case or "causal" in case:
        inputs["bias"] = reference["bias"] = given["bias"]
    if case == "key lengths":
        inputs["mask"] = reference["mask"] = np.array([2, 6], np.int32)
    if case == "raw mask":
        inputs["mask"] = reference["mask"] = np.array([[1, 0, 1, 1, 0, 1], [1, 1, 1, 1, 1, 0]], np.int32)
    if case == "attention bias":
        inputs["attention_bias"] = reference["attention_bias"] = given["attention_bias"]
    if case == "cached cross keys":
        size = HIDDEN // HEADS
        inputs["k"] = np.ascontiguousarray(k.reshape(BATCH, keys, HEADS, size).transpose(0, 2, 1, 3))
        inputs["v"] = np.ascontiguousarray(v.reshape(BATCH, keys, HEADS, size).transpose(0, 2, 1, 3))
    if "past" in case:
        inputs["past_k"], inputs["past_v"] = reference["past_k"], reference["past_v"] = given["past_k"], given["past_v"]
    for name in ("bias", "mask", "attention_bias", "past_k", "past_v"):
        inputs.setdefault(name, None)
    inputs = {name: inputs[name] for name in ("q", "k", "v", "bias", "mask", "attention_bias", "past_k", "past_v")}
    outputs = ["y", "present_k", "present_v"] if "past" in case else ["y"]
    causal = "causal" in case
    model, feeds = ms_model("MultiHeadAttention", inputs, outputs, num_heads=HEADS, unidirectional=int(causal))
    want = check(model, feeds, rtol=1e-4, atol=1e-5)
    expected = _mha_reference(inputs["q"], inputs["k"], inputs["v"], causal=causal, **reference)  # type: ignore[arg-type]
    for got, ref in zip(want, expected):
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
