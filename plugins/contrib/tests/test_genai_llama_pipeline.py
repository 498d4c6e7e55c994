"""onnxruntime-genai's int4 Llama (GroupQueryAttention reads the past length from the attention mask,
not from the cache's shape) made stateful and generating with ``hetero_sdk.genai.LLMPipeline``: its
greedy tokens are ONNX Runtime's, run with the explicit cache. GroupQueryAttention declares its caches
written in place (``OpDef.caches``), so on XLA the caches live in fixed-capacity buffers: a generation
compiles one executable for the prompt and one for the steps."""

from __future__ import annotations

import json
from collections.abc import Sequence

import hetero_sdk as hs
import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from hetero_sdk.cli import cli
from hetero_sdk.errors import InferenceError
from hetero_sdk.genai import LLMPipeline
from hetero_sdk.genai.session import ExplicitCacheSession, open_session
from hetero_sdk.runtime.fixed_capacity import FixedCapacityCompiledModel
from hetero_sdk.transformations import find_kv_cache_pairs
from hetero_sdk.transformations.fixed_capacity_cache import PAST_LENGTH, with_fixed_capacity_cache
from ms_models import DEVICES, core, ort, run_ort
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


def _ort_steps(model: onnx.ModelProto, ids: Sequence[Sequence[int]]) -> list[dict[str, np.ndarray]]:
    """ONNX Runtime's outputs, by name, for each of ``ids`` fed in turn with the cache grown."""
    cache = {
        f"past_key_values.{layer}.{kind}": np.zeros((1, KV_HEADS, 0, HEAD_SIZE), np.float32)
        for layer in range(LAYERS)
        for kind in ("key", "value")
    }
    total, steps = 0, []
    for step in ids:
        total += len(step)
        feeds: dict[str, np.ndarray] = {"input_ids": np.asarray([step], np.int64), **cache}
        feeds["attention_mask"] = np.ones((1, total), np.int64)
        out = dict(zip([o.name for o in model.graph.output], run_ort(model, feeds), strict=True))
        steps.append(out)
        cache = {name: out["present" + name[len("past_key_values") :]] for name in cache}
    return steps


@pytest.mark.parametrize("device", DEVICES)
def test_fixed_capacity_buffers_give_onnx_runtimes_logits_and_caches(device: str) -> None:
    """The explicit model rewritten for fixed-capacity buffers, fed buffers of 16 rows whose unfilled rows
    hold noise: GroupQueryAttention's outputs are the buffers (no scatter added), and each step's logits
    and filled rows are ONNX Runtime's with the cache grown by each step."""
    onnx_model = onnx.load(MODEL)
    model = core().read_model(onnx_model)
    pairs = find_kv_cache_pairs(model)
    fixed = with_fixed_capacity_cache(model, pairs)
    assert fixed.axes == dict.fromkeys(pairs, 2) and fixed.padded_inputs == ["attention_mask"]
    assert "ScatterElementsUpdate" not in {n.type_name for n in fixed.model.get_ops()}
    steps = [PROMPT, [7], [90], [33]]
    want = _ort_steps(_accuracy_level_0(onnx_model), steps)
    compiled = core().compile_model(fixed.model, device)
    capacity, filled = 16, 0
    rng = np.random.default_rng(3)
    buffers = {name: rng.standard_normal((1, KV_HEADS, capacity, HEAD_SIZE)).astype(np.float32) for name in pairs}
    for ids, expected in zip(steps, want):
        mask = np.zeros((1, capacity), np.int64)
        mask[:, : filled + len(ids)] = 1
        feeds = {"input_ids": np.asarray([ids], np.int64), "attention_mask": mask, PAST_LENGTH: np.int64(filled)}
        got = compiled({**feeds, **buffers})
        np.testing.assert_allclose(got["logits"], expected["logits"], rtol=1e-4, atol=1e-4, err_msg=device)
        filled += len(ids)
        for past, present in pairs.items():
            buffers[past] = np.asarray(got[present])
            assert buffers[past].shape == (1, KV_HEADS, capacity, HEAD_SIZE)
            np.testing.assert_allclose(buffers[past][:, :, :filled], expected[present], rtol=1e-4, atol=1e-4)


def _renamed(model: onnx.ModelProto, names: dict[str, str]) -> onnx.ModelProto:
    """``model`` with the graph inputs and outputs in ``names`` renamed (everywhere they are used)."""
    renamed = onnx.ModelProto()
    renamed.CopyFrom(model)
    graph = renamed.graph
    for value in (*graph.input, *graph.output):
        value.name = names.get(value.name, value.name)
    for node in graph.node:
        node.input[:] = [names.get(n, n) for n in node.input]
        node.output[:] = [names.get(n, n) for n in node.output]
    return renamed


def test_make_stateful_finds_the_caches_group_query_attention_writes_whatever_their_names() -> None:
    """Inputs and outputs named neither past_key_values.N nor present.N: make_stateful pairs them through
    GroupQueryAttention's declaration (OpDef.caches), and the pipeline generates ONNX Runtime's tokens
    on XLA with two executables."""
    names = {
        f"{side}.{layer}.{kind}": f"kv_{'in' if side == 'past_key_values' else 'out'}_{layer}_{kind[0]}"
        for side in ("past_key_values", "present")
        for layer in range(LAYERS)
        for kind in ("key", "value")
    }
    onnx_model = onnx.load(MODEL)
    model = hs.make_stateful(core().read_model(_renamed(onnx_model, names)))
    want_ids = sorted(names[f"past_key_values.{i}.{k}"] for i in range(LAYERS) for k in ("key", "value"))
    assert sorted(v.variable_id for v in model.get_variables()) == want_ids
    assert [p.any_name for p in model.outputs] == ["logits"]
    pipe = LLMPipeline(model, "XLA", core=core())
    results = pipe.generate(PROMPT, max_new_tokens=8, return_results=True)
    assert results.tokens == [_ort_greedy(_accuracy_level_0(onnx_model), PROMPT, 8)]
    assert results.perf_metrics.compile_count == 2


def test_hetero_sdk_generate_runs_it_on_xla_with_two_executables() -> None:
    args = ["generate", "-m", str(MODEL), "-d", "XLA", "--prompt-ids", ",".join(map(str, PROMPT)), "-n", "8", "--json"]
    result = CliRunner().invoke(cli, args, obj={"core": core()})
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["generated_ids"] == _ort_greedy(_accuracy_level_0(onnx.load(MODEL)), PROMPT, 8)
    assert data["compile_count"] == 2


def test_an_explicit_cache_session_reads_the_head_size_the_builder_leaves_unnamed_from_the_outputs() -> None:
    """The cache inputs are [batch, 2, past_sequence_length, kv_cache_dim]: the session takes the head
    size from GroupQueryAttention's present outputs, and feeds the cache back step by step."""
    onnx_model = onnx.load(MODEL)
    model = core().read_model(onnx_model)
    assert model.input("past_key_values.0.key").partial_shape.dims[3] < 0
    session = open_session(core().compile_model(model, "TEMPLATE"))
    assert isinstance(session, ExplicitCacheSession)
    tokens = [int(np.argmax(session.prefill(np.asarray([PROMPT]))[0]))]
    while len(tokens) < 8:
        tokens.append(int(np.argmax(session.step(np.asarray([tokens[-1]]))[0])))
    assert tokens == _ort_greedy(_accuracy_level_0(onnx_model), PROMPT, 8)


def test_the_state_reads_the_filled_rows_and_an_exported_blob_keeps_the_fixed_capacity_path() -> None:
    """On XLA, each variable's state is the filled rows of its buffer, ONNX Runtime's present cache; the
    compiled model exported and imported runs the same steps."""
    onnx_model = onnx.load(MODEL)
    want = _ort_steps(_accuracy_level_0(onnx_model), [PROMPT, [7]])[-1]
    compiled = core().compile_model(hs.make_stateful(core().read_model(onnx_model)), "XLA")
    imported = core().import_model(compiled.export_model(), "XLA")
    for model in (compiled, imported):
        assert isinstance(model, FixedCapacityCompiledModel)
        request = model.create_infer_request()
        for ids, total in ((PROMPT, len(PROMPT)), ([7], len(PROMPT) + 1)):
            feeds = {"input_ids": np.asarray([ids], np.int64), "attention_mask": np.ones((1, total), np.int64)}
            logits = request.infer(feeds)["logits"]
        np.testing.assert_allclose(logits, want["logits"], rtol=1e-4, atol=1e-4)
        for state in request.query_state():
            present = "present" + state.name[len("past_key_values") :]
            assert state.state.shape == (1, KV_HEADS, len(PROMPT) + 1, HEAD_SIZE)
            np.testing.assert_allclose(state.state.data, want[present], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", ["TEMPLATE", "XLA"])
def test_a_sequence_past_the_rotary_tables_is_an_error_not_tokens(device: str) -> None:
    """The builder's rotary tables hold 64 positions: ONNX Runtime refuses a 65th, and so does the
    pipeline (the fixed-capacity buffers hold 128 rows; a traced gather would clamp the position)."""
    onnx_model = onnx.load(MODEL)
    with pytest.raises(Exception, match="cos_cache"):
        _ort_greedy(_accuracy_level_0(onnx_model), PROMPT, 64 - len(PROMPT) + 2)  # a step of 65 tokens
    pipe = LLMPipeline(core().read_model(onnx_model), device, core=core())
    with pytest.raises(InferenceError, match="NaN logits after 65 tokens"):
        pipe.generate(PROMPT, max_new_tokens=64)
    assert len(pipe.generate(PROMPT, max_new_tokens=64 - len(PROMPT) + 1)) == 64 - len(PROMPT) + 1


def test_a_batch_of_two_prompts_gives_each_its_own_tokens_on_xla() -> None:
    """Two prompts of one length run in one request (batch 2, GroupQueryAttention's seqlens_k per row):
    each gets the tokens ONNX Runtime gives it alone."""
    onnx_model = onnx.load(MODEL)
    other = [40, 2, 77, 31, 9, 120]
    reference = _accuracy_level_0(onnx_model)
    pipe = LLMPipeline(core().read_model(onnx_model), "XLA", core=core())
    results = pipe.generate([PROMPT, other], max_new_tokens=8, return_results=True)
    assert results.tokens == [_ort_greedy(reference, PROMPT, 8), _ort_greedy(reference, other, 8)]
    assert results.tokens[0] != results.tokens[1]
    assert results.perf_metrics.compile_count == 2
