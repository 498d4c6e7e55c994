"""A random Llama written by onnxruntime-genai's model builder at int4 (tests/data/README.md says how):
MatMulNBits, GroupQueryAttention (packed QKV, rotary, past length from the attention mask),
SkipSimplifiedLayerNormalization and SimplifiedLayerNormalization (in the default domain), a prompt and
a decoding step on TEMPLATE, XLA and HETERO against ONNX Runtime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from ms_models import DEVICES, run_ort, run_sdk

MODEL = Path(__file__).parent / "data" / "llama_int4_genai.onnx"
LAYERS, KV_HEADS, HEAD_SIZE, VOCABULARY = 2, 2, 16, 128


def _accuracy_level_0(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with its MatMulNBits at accuracy_level 0: the builder writes 4, where ONNX Runtime also
    quantizes the activations to int8; the op's meaning (and the SDK's result) is f32 activations."""
    exact = onnx.ModelProto()
    exact.CopyFrom(model)
    for node in exact.graph.node:
        for attribute in node.attribute:
            if node.op_type == "MatMulNBits" and attribute.name == "accuracy_level":
                attribute.i = 0
    return exact


def _feeds(rng: np.random.Generator, tokens: int, past: list[np.ndarray] | None) -> dict[str, np.ndarray]:
    """input_ids, the attention mask over past and new tokens, and the caches (empty for a prompt)."""
    past_length = 0 if past is None else past[0].shape[2]
    feeds = {"input_ids": rng.integers(0, VOCABULARY, (1, tokens)).astype(np.int64),
             "attention_mask": np.ones((1, past_length + tokens), np.int64)}  # fmt: skip
    for layer in range(LAYERS):
        for kind, offset in (("key", 0), ("value", LAYERS)):
            cache = np.zeros((1, KV_HEADS, 0, HEAD_SIZE), np.float32) if past is None else past[offset + layer]
            feeds[f"past_key_values.{layer}.{kind}"] = cache
    return feeds


def test_genai_llama_prompt_and_decoding_step_match_onnx_runtime() -> None:
    original = onnx.load(MODEL)
    assert {"MatMulNBits", "GroupQueryAttention", "SkipSimplifiedLayerNormalization"} <= {
        n.op_type for n in original.graph.node if n.domain == "com.microsoft"
    }
    model, reference = original, _accuracy_level_0(original)
    rng = np.random.default_rng(0)
    prompt = _feeds(rng, 5, None)
    want = run_ort(reference, prompt)
    step = _feeds(rng, 1, want[1:])  # present.{0,1}.key, then present.{0,1}.value
    want_step = run_ort(reference, step)
    for device in DEVICES:
        for feeds, expected in ((prompt, want), (step, want_step)):
            for index, (got, wanted) in enumerate(zip(run_sdk(model, feeds, device), expected)):
                np.testing.assert_allclose(got, wanted, rtol=1e-4, atol=1e-4, err_msg=f"{device} output {index}")


def test_genai_llama_reads_as_written() -> None:
    model = onnx.load(MODEL)
    rng = np.random.default_rng(1)
    feeds = _feeds(rng, 3, None)
    want = run_ort(_accuracy_level_0(model), feeds)[0]
    np.testing.assert_allclose(run_sdk(model, feeds, "TEMPLATE")[0], want, rtol=1e-4, atol=1e-4)
