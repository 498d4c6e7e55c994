"""The decoder sessions: the explicit-cache one feeds the cache back itself, the stateful one drives a
request that keeps it; both give ONNX Runtime's tokens, and the vocabulary is found in the embedding
when the logits do not say it."""

from __future__ import annotations

import numpy as np
import pytest
from decoders import PATHS, ort_greedy

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.genai import LLMPipeline
from hetero_sdk.genai.session import ExplicitCacheSession, StatefulSession, open_session
from hetero_sdk.runtime import StatefulInferRequest

LLAMA = PATHS["llama"]


@pytest.fixture(scope="module")
def explicit(template_core: hs.Core) -> hs.CompiledModel:
    """The explicit-cache decoder compiled as exported (its requests keep no state)."""
    return template_core.compile_model(template_core.read_model(LLAMA), "TEMPLATE")


def test_the_session_is_chosen_by_the_model(llama_pipeline: LLMPipeline, explicit: hs.CompiledModel) -> None:
    assert isinstance(open_session(explicit), ExplicitCacheSession)
    # the pipeline runs an explicit-cache decoder made stateful (a copy), as OpenVINO GenAI runs optimum's
    assert isinstance(llama_pipeline.session, StatefulSession)
    assert [p.any_name for p in llama_pipeline.session.compiled.inputs] == ["input_ids", "attention_mask"]


def test_the_explicit_cache_session_gives_onnx_runtimes_tokens(
    llama_pipeline: LLMPipeline, explicit: hs.CompiledModel
) -> None:
    pipeline = LLMPipeline.__new__(LLMPipeline)
    pipeline.tokenizer = None
    pipeline.generation_config = llama_pipeline.generation_config
    pipeline.session = ExplicitCacheSession(explicit)
    prompt = [2, 7, 1, 8, 2, 8]
    assert pipeline.generate(prompt, max_new_tokens=24) == ort_greedy(LLAMA, prompt, 24)
    assert pipeline.generate([prompt, prompt], max_new_tokens=4) == [ort_greedy(LLAMA, prompt, 4)] * 2


def test_a_request_without_state_cannot_back_a_stateful_session(explicit: hs.CompiledModel) -> None:
    with pytest.raises(ModelValidationError, match="its requests keep no state"):
        StatefulSession(explicit)


def test_the_vocabulary_comes_from_the_embedding_when_the_logits_do_not_say_it(template_core: hs.Core) -> None:
    ids = opset.parameter([-1, -1], hs.Type.i64, name="input_ids")
    past = opset.parameter([-1, 2, -1, 4], hs.Type.f32, name="past_key_values.0.key")
    unembed = opset.parameter([4, -1], hs.Type.f32, name="unembed")
    table = opset.constant(np.ones((11, 4), np.float32), name="embedding")
    hidden = opset.gather(table, opset.convert(ids, hs.Type.i32), opset.constant(np.int64(0)), name="embed")
    logits = opset.matmul(hidden, unembed, name="logits")
    present = opset.concat([past, past], axis=2, name="present.0.key")
    model = hs.Model([logits, present], [ids, past, unembed], name="dynamic_vocab")
    session = ExplicitCacheSession(template_core.compile_model(model, "TEMPLATE"))
    assert session.vocab_size == 11
    assert session.pairs == {"past_key_values.0.key": "present.0.key"}


@pytest.mark.parametrize("beam_idx", [False, True])
def test_a_decoder_made_stateful_gives_onnx_runtimes_tokens(template_core: hs.Core, beam_idx: bool) -> None:
    model = hs.make_stateful(template_core.read_model(LLAMA), beam_idx=beam_idx)
    pipeline = LLMPipeline(model, "TEMPLATE", core=template_core)
    assert isinstance(pipeline.session, StatefulSession)
    prompt, other = [4, 8, 15, 16, 23, 42], [42, 23, 16, 15, 8, 4]
    assert pipeline.generate(prompt, max_new_tokens=32) == ort_greedy(LLAMA, prompt, 32)
    # the next generation starts from a reset state; a batch of one length shares one request
    assert pipeline.generate([prompt, other, [7, 7]], max_new_tokens=8) == [
        ort_greedy(LLAMA, p, 8) for p in (prompt, other, [7, 7])
    ]


def counting_decoder() -> hs.Model:
    """A decoder whose next token is a closed form of what the session feeds it: the position
    (``position_ids``), plus the attention mask's length, plus the past's length, modulo 64; its
    one-layer cache keeps the ids it was given (``[batch, 1, length, 1]``)."""
    ids = opset.parameter([-1, -1], hs.Type.i64, name="input_ids")
    mask = opset.parameter([-1, -1], hs.Type.i64, name="attention_mask")
    positions = opset.parameter([-1, -1], hs.Type.i64, name="position_ids")
    past = opset.parameter([-1, 1, -1, 1], hs.Type.f32, name="past_key_values.0.key")

    def dim(node: hs.Node, axis: int) -> hs.Node:
        return opset.gather(opset.shape_of(node), opset.constant(np.int64(axis)), opset.constant(np.int64(0)))

    target = opset.floor_mod(opset.add(opset.add(positions, dim(mask, 1)), dim(past, 2)), opset.constant(np.int64(64)))
    column = opset.unsqueeze(opset.convert(target, hs.Type.f32), opset.constant(np.int64(2)))
    vocabulary = opset.constant(np.arange(64, dtype=np.float32))
    logits = opset.negative(opset.abs(opset.subtract(vocabulary, column)), name="logits")
    given = opset.unsqueeze(opset.convert(ids, hs.Type.f32), opset.constant(np.array([1, 3], np.int64)))
    present = opset.concat([past, given], axis=2, name="present.0.key")
    return hs.Model([logits, present], [ids, mask, positions, past], name="counting")


def test_the_explicit_cache_session_feeds_positions_mask_and_past_as_the_model_expects(
    template_core: hs.Core,
) -> None:
    pipeline = LLMPipeline(counting_decoder(), "TEMPLATE", core=template_core)
    assert pipeline.session.vocab_size == 64
    # prompt of 3: position 2, mask 3, past 0 -> 5; then step i: position 2+i, mask 3+i, past 2+i
    assert pipeline.generate([9, 9, 9], max_new_tokens=5) == [5, 10, 13, 16, 19]
    assert pipeline.generate([[1, 2], [3, 4]], max_new_tokens=3) == [[3, 7, 10]] * 2
    request = pipeline.session.request
    assert isinstance(request, StatefulInferRequest)  # the pipeline made the decoder stateful
    (cache,) = request.query_state()
    assert cache.state.data[:, 0, :, 0].tolist() == [
        [1, 2, 3, 7],
        [3, 4, 3, 7],
    ]  # the prompts, then the tokens fed back
