"""onnxruntime-genai's int4 Llama (GroupQueryAttention reads the past length from the attention mask,
not from the cache's shape) made stateful and generating with ``hetero_sdk.genai.LLMPipeline``: its
greedy tokens are ONNX Runtime's, run with the explicit cache. GroupQueryAttention declares its caches
written in place (``OpDef.caches``), so on XLA the caches live in fixed-capacity buffers: a generation
compiles one executable for the prompt and one for the steps."""

from __future__ import annotations

from collections.abc import Sequence

import hetero_sdk as hs
import numpy as np
import onnx
import pytest
from hetero_sdk.genai import LLMPipeline
from hetero_sdk.runtime.fixed_capacity import FixedCapacityCompiledModel
from ms_models import core, ort
from test_ops_genai_llama import MODEL, _accuracy_level_0

LAYERS, KV_HEADS, HEAD_SIZE = 2, 2, 16
PROMPT = [5, 17, 99, 3, 64, 12]
TOKENS = 16


def _ort_greedy(model: onnx.ModelProto, prompt: Sequence[int], count: int) -> list[int]:
    """Greedy tokens from ONNX Runtime (no graph optimizations), the cache fed back as inputs and the
    attention mask over the whole sequence, as onnxruntime-genai feeds it."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    cache = {
        f"past_key_values.{layer}.{kind}": np.zeros((1, KV_HEADS, 0, HEAD_SIZE), np.float32)
        for layer in range(LAYERS)
        for kind in ("key", "value")
    }
    ids, tokens = list(prompt), list[int]()
    total = 0
    while len(tokens) < count:
        total += len(ids)
        feeds = {"input_ids": np.asarray([ids], np.int64), "attention_mask": np.ones((1, total), np.int64), **cache}
        out = dict(zip(names, session.run(names, feeds), strict=True))
        tokens.append(int(np.argmax(out["logits"][0, -1])))
        ids = [tokens[-1]]
        cache = {name: out["present" + name[len("past_key_values") :]] for name in cache}
    return tokens


def test_make_stateful_finds_the_builders_cache_names() -> None:
    model = hs.make_stateful(core().read_model(onnx.load(MODEL)))
    variables = sorted(v.variable_id for v in model.get_variables())
    assert variables == sorted(f"past_key_values.{i}.{k}" for i in range(LAYERS) for k in ("key", "value"))
    assert {p.any_name for p in model.inputs} == {"input_ids", "attention_mask"}
    assert [p.any_name for p in model.outputs] == ["logits"]


@pytest.mark.parametrize("device", ["TEMPLATE", "XLA", "HETERO:XLA,TEMPLATE"])
def test_genai_llama_generates_onnx_runtimes_greedy_tokens(device: str) -> None:
    model = onnx.load(MODEL)
    want = _ort_greedy(_accuracy_level_0(model), PROMPT, TOKENS)
    pipe = LLMPipeline(core().read_model(model), device, core=core())
    results = pipe.generate(PROMPT, max_new_tokens=TOKENS, return_results=True)
    assert results.tokens == [want]
    assert len(set(want)) > 1  # not a degenerate sequence that any decoder could match
    if device != "TEMPLATE":  # fixed-capacity buffers of 6 + 16 rows (64): the prompt's executable, the steps'
        assert isinstance(pipe.session.compiled, FixedCapacityCompiledModel)
        assert results.perf_metrics.compile_count == 2
        again = pipe.generate(PROMPT, max_new_tokens=TOKENS, return_results=True)
        assert again.tokens == [want] and again.perf_metrics.compile_count == 0
