"""Every bad input to LLMPipeline is a typed error naming the thing, raised before anything runs, and
the pipeline keeps generating the right tokens afterwards."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from decoders import PATHS, ort_greedy

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import HeteroSDKError, InferenceError, ModelValidationError, PropertyValueError
from hetero_sdk.genai import GenerationConfig, LLMPipeline
from hetero_sdk.genai.session import ExplicitCacheSession

LLAMA = PATHS["llama"]

PROMPT = [3, 1, 4, 1, 5]


@pytest.fixture(scope="module")
def expected() -> list[int]:
    return ort_greedy(LLAMA, PROMPT, 6)


@pytest.mark.parametrize(
    ("prompt", "kwargs", "error", "message"),
    [
        ([1, 512, 3], {}, InferenceError, r"prompt 0 holds token id 512 at position 1, outside .*\[0, 512\)"),
        ([[1, 2], [7, -1]], {}, InferenceError, r"prompt 1 holds token id -1 at position 1"),
        ([], {}, InferenceError, "prompt 0 is empty"),
        ([[1, 2], []], {}, InferenceError, "prompt 1 is empty"),
        ([1, 2.5], {}, InferenceError, r"prompt 0 holds 2.5 at position 1; token ids are integers"),
        ("some text", {}, InferenceError, "a text prompt needs a tokenizer"),
        (np.zeros((1, 2, 3), np.int64), {}, InferenceError, r"not shape \(1, 2, 3\)"),
        ([1, 2], {"max_new_tokens": 0}, PropertyValueError, "GenerationConfig.max_new_tokens is 0"),
        ([1, 2], {"do_sample": True, "temperature": 0}, PropertyValueError, "GenerationConfig.temperature"),
        ([1, 2], {"top_p": 2.0}, PropertyValueError, "GenerationConfig.top_p is 2.0"),
        ([[1], [2]], {"streamer": print}, InferenceError, "a streamer follows one sequence, and 2 prompts"),
    ],
)
def test_bad_input_is_a_typed_error_and_the_pipeline_stays_usable(
    llama_pipeline: LLMPipeline, expected: list[int], prompt: Any, kwargs: dict[str, Any], error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        llama_pipeline.generate(prompt, **kwargs)
    assert llama_pipeline.generate(PROMPT, max_new_tokens=6) == expected


def test_a_sequence_longer_than_the_cache_capacity_is_refused_before_it_runs(
    llama_pipeline: LLMPipeline, expected: list[int]
) -> None:
    session = llama_pipeline.session
    llama_pipeline.session = ExplicitCacheSession(session.compiled, capacity=10)
    try:
        with pytest.raises(InferenceError, match=r"prompt 0 \(5 tokens\) and max_new_tokens=6 need 11 tokens, .*10"):
            llama_pipeline.generate(PROMPT, max_new_tokens=6)
        assert llama_pipeline.generate(PROMPT, max_new_tokens=5) == expected[:5]
        with pytest.raises(InferenceError, match="11 tokens does not fit the cache's capacity of 10"):
            llama_pipeline.session.prefill(np.array([PROMPT + [1] * 6]))
    finally:
        llama_pipeline.session = session


def test_a_model_without_a_cache_is_refused_naming_its_inputs(template_core: hs.Core) -> None:
    ids = opset.parameter([1, -1], hs.Type.i64, name="input_ids")
    table = opset.constant(np.ones((8, 4), np.float32), name="embedding")
    logits = opset.gather(table, ids, opset.constant(np.int64(0)), name="logits")
    model = hs.Model([logits], [ids], name="no_cache")
    with pytest.raises(ModelValidationError, match=r"model 'no_cache' keeps no cache.*inputs: input_ids"):
        LLMPipeline(model, "TEMPLATE", core=template_core)


def test_a_missing_model_file_is_an_error_naming_it(template_core: hs.Core, tmp_path: Any) -> None:
    with pytest.raises((HeteroSDKError, OSError), match=r"absent\.onnx"):
        LLMPipeline(tmp_path / "absent.onnx", "TEMPLATE", core=template_core)


def test_a_sampling_config_set_as_default_is_checked(llama_pipeline: LLMPipeline) -> None:
    with pytest.raises(PropertyValueError, match=r"GenerationConfig\.top_k"):
        llama_pipeline.set_generation_config(GenerationConfig(top_k=-2))
