"""LLMPipeline on TEMPLATE with a real decoder exported by torch: greedy tokens are ONNX Runtime's,
batches give each prompt its own tokens, sampling is seeded, stop tokens and the streamer stop."""

from __future__ import annotations

import enum

import numpy as np
import pytest
from decoders import PATHS, ort_greedy

import hetero_sdk as hs
from hetero_sdk.genai import EncodedResults, GenerationConfig, LLMPipeline, StreamerBase

LLAMA = PATHS["llama"]

PROMPT = [1, 17, 42, 99, 256, 7]
OTHER = [5, 300, 11]
SAME_LENGTH = [9, 8, 7, 6, 5, 4]


@pytest.fixture(scope="module")
def reference() -> dict[tuple[int, ...], list[int]]:
    """ONNX Runtime's 48 greedy tokens for each prompt of these tests."""
    return {tuple(p): ort_greedy(LLAMA, p, 48) for p in (PROMPT, OTHER, SAME_LENGTH)}


def test_greedy_tokens_are_onnx_runtimes(llama_pipeline: LLMPipeline, reference: dict) -> None:
    assert llama_pipeline.generate(PROMPT, max_new_tokens=48) == reference[tuple(PROMPT)]


@pytest.mark.parametrize("arch", ["qwen2", "gpt2"])
def test_greedy_tokens_of_other_architectures_are_onnx_runtimes(template_core: hs.Core, arch: str) -> None:
    pipeline = LLMPipeline(PATHS[arch], "TEMPLATE", core=template_core)
    assert pipeline.generate(PROMPT, max_new_tokens=40) == ort_greedy(PATHS[arch], PROMPT, 40)


def test_an_array_prompt_gives_the_same_tokens(llama_pipeline: LLMPipeline, reference: dict) -> None:
    assert llama_pipeline.generate(np.array(PROMPT), max_new_tokens=8) == reference[tuple(PROMPT)][:8]


def test_a_batch_of_different_lengths_gives_each_prompt_its_own_tokens(
    llama_pipeline: LLMPipeline, reference: dict
) -> None:
    tokens = llama_pipeline.generate([PROMPT, OTHER, SAME_LENGTH], max_new_tokens=32)
    assert tokens == [reference[tuple(p)][:32] for p in (PROMPT, OTHER, SAME_LENGTH)]


def test_a_batch_of_one_length_runs_in_one_request(llama_pipeline: LLMPipeline, reference: dict) -> None:
    calls: list[tuple[int, ...]] = []
    session = llama_pipeline.session
    original = session.prefill

    def counted(ids: np.ndarray, rows: int | None = None) -> np.ndarray:
        calls.append((*ids.shape, rows))
        return original(ids, rows)

    session.prefill = counted  # type: ignore[method-assign]
    try:
        tokens = llama_pipeline.generate(np.array([PROMPT, SAME_LENGTH]), max_new_tokens=16)
    finally:
        del session.prefill
    assert calls == [(2, 6, 6 + 16)]  # one request, told the rows the sequences will need
    assert tokens == [reference[tuple(PROMPT)][:16], reference[tuple(SAME_LENGTH)][:16]]


def test_sampling_is_reproducible_with_a_seed_and_differs_with_another(llama_pipeline: LLMPipeline) -> None:
    config = GenerationConfig(max_new_tokens=24, do_sample=True, temperature=1.5, top_k=50, top_p=0.95, rng_seed=7)
    first = llama_pipeline.generate(PROMPT, config)
    assert llama_pipeline.generate(PROMPT, config) == first
    assert llama_pipeline.generate(PROMPT, config.updated(rng_seed=8)) != first
    assert len(first) == 24 and all(0 <= t < 512 for t in first)


def test_sampling_with_top_k_one_is_greedy(llama_pipeline: LLMPipeline, reference: dict) -> None:
    config = GenerationConfig(max_new_tokens=12, do_sample=True, temperature=3.0, top_k=1, rng_seed=1)
    assert llama_pipeline.generate(PROMPT, config) == reference[tuple(PROMPT)][:12]


@pytest.mark.parametrize("field", ["stop_token_ids", "eos_token_id"])
def test_a_stop_token_ends_the_sequence_and_is_left_out(
    llama_pipeline: LLMPipeline, reference: dict, field: str
) -> None:
    greedy = reference[tuple(PROMPT)]
    stop = greedy[10]
    value = {stop} if field == "stop_token_ids" else stop
    tokens = llama_pipeline.generate(PROMPT, GenerationConfig(max_new_tokens=48, **{field: value}))
    assert tokens == greedy[: greedy.index(stop)]


def test_a_stop_token_ends_one_sequence_of_a_batch_and_the_others_go_on(
    llama_pipeline: LLMPipeline, reference: dict
) -> None:
    first, second = reference[tuple(PROMPT)], reference[tuple(SAME_LENGTH)]
    stop = next(t for t in first[3:] if t not in second[:20])
    tokens = llama_pipeline.generate([PROMPT, SAME_LENGTH], max_new_tokens=20, stop_token_ids={stop})
    assert tokens == [first[: first.index(stop)], second[:20]]


def test_the_streamer_gets_every_token_in_order(llama_pipeline: LLMPipeline, reference: dict) -> None:
    streamed: list[int] = []
    tokens = llama_pipeline.generate(PROMPT, max_new_tokens=20, streamer=streamed.append)
    assert streamed == tokens == reference[tuple(PROMPT)][:20]


def test_a_streamer_returning_true_stops_the_generation(llama_pipeline: LLMPipeline, reference: dict) -> None:
    streamed: list[int] = []

    def three_then_stop(token: int) -> bool:
        streamed.append(token)
        return len(streamed) == 3

    tokens = llama_pipeline.generate(PROMPT, max_new_tokens=20, streamer=three_then_stop)
    assert streamed == tokens == reference[tuple(PROMPT)][:3]


def test_a_streamer_object_writes_each_token_and_ends(llama_pipeline: LLMPipeline, reference: dict) -> None:
    class Status(enum.Enum):  # OpenVINO GenAI's StreamingStatus
        RUNNING = 0
        STOP = 1

    class Collect(StreamerBase):
        def __init__(self) -> None:
            self.tokens: list[int] = []
            self.ended = 0

        def write(self, token: int) -> Status:
            self.tokens.append(token)
            return Status.STOP if len(self.tokens) == 4 else Status.RUNNING

        def end(self) -> None:
            self.ended += 1

    streamer = Collect()
    assert llama_pipeline.generate(PROMPT, max_new_tokens=20, streamer=streamer) == reference[tuple(PROMPT)][:4]
    assert (streamer.tokens, streamer.ended) == (reference[tuple(PROMPT)][:4], 1)


def test_only_true_stops_a_callable_streamer(llama_pipeline: LLMPipeline) -> None:
    assert len(llama_pipeline.generate(PROMPT, max_new_tokens=6, streamer=lambda token: 1)) == 6


def test_results_carry_the_performance_metrics(llama_pipeline: LLMPipeline, reference: dict) -> None:
    results = llama_pipeline.generate([PROMPT, OTHER], max_new_tokens=5, return_results=True)
    assert isinstance(results, EncodedResults)
    assert results.tokens == [reference[tuple(PROMPT)][:5], reference[tuple(OTHER)][:5]]
    metrics = results.perf_metrics
    assert (metrics.num_input_tokens, metrics.num_generated_tokens) == (9, 10)
    assert 0 < metrics.ttft_ms <= metrics.generate_duration_ms
    assert metrics.tpot_ms == pytest.approx((metrics.generate_duration_ms - metrics.ttft_ms) / 4)
    assert metrics.throughput == pytest.approx(2 * 1e3 / metrics.tpot_ms)  # two sequences a step
    assert metrics.compile_count is None  # TEMPLATE does not compile per shape, and says nothing


def test_the_default_config_is_used_and_can_be_set(llama_pipeline: LLMPipeline, reference: dict) -> None:
    before = llama_pipeline.get_generation_config()
    try:
        llama_pipeline.set_generation_config(GenerationConfig(max_new_tokens=4))
        assert llama_pipeline.generate(PROMPT) == reference[tuple(PROMPT)][:4]
    finally:
        llama_pipeline.set_generation_config(before)
