"""Real decoders (tests/data/decoders: Llama, Qwen2 and GPT-2 exported by torch.onnx.export) made
stateful with make_stateful: greedy tokens equal ONNX Runtime's run of the exported explicit-cache model,
on TEMPLATE (the cache grows) and on XLA (the cache in fixed-capacity buffers, a bounded number of
executables per generation)."""

from __future__ import annotations

import numpy as np
import pytest
from decoders import PATHS, ort_greedy

import hetero_sdk as hs
from hetero_sdk.hetero.plugin import HeteroPlugin
from hetero_sdk.runtime.fixed_capacity import INITIAL_CAPACITY, FixedCapacityCompiledModel
from template_plugin import TemplatePlugin

ort = pytest.importorskip("onnxruntime")
hetero_sdk_jax = pytest.importorskip("hetero_sdk_jax", reason="the XLA plugin (plugins/jax) is not installed")

PROMPT = [5, 17, 300, 42, 7, 111, 256, 9]
LONG = 64  # 8 + 64 rows: the buffers grow once past INITIAL_CAPACITY


def stateful_greedy(request: hs.InferRequest, prompt: list[int], count: int) -> list[int]:
    """Greedy tokens of a stateful decoder: only the new ids and the attention mask are fed."""
    request.reset_state()
    ids, total, tokens = np.array([prompt]), len(prompt), []
    for _ in range(count):
        logits = request.infer({"input_ids": ids, "attention_mask": np.ones((1, total), np.int64)})["logits"]
        tokens.append(int(logits[0, -1].argmax()))
        ids, total = np.array([[tokens[-1]]]), total + 1
    return tokens


def ort_present(name: str, prompt: list[int]) -> dict[str, np.ndarray]:
    """The cache ONNX Runtime's explicit-cache model returns after the prompt."""
    session = ort.InferenceSession(str(PATHS[name]), providers=["CPUExecutionProvider"])
    feeds = {
        i.name: np.zeros((1, i.shape[1], 0, i.shape[3]), np.float32)
        for i in session.get_inputs()
        if i.name.startswith("past_key_values.")
    }
    feeds |= {"input_ids": np.array([prompt]), "attention_mask": np.ones((1, len(prompt)), np.int64)}
    names = [o.name for o in session.get_outputs()]
    outputs = dict(zip(names, session.run(None, feeds)))
    return {n.replace("present", "past_key_values"): v for n, v in outputs.items() if n.startswith("present.")}


@pytest.fixture(scope="module")
def core() -> hs.Core:
    return hs.Core(plugins={"TEMPLATE": TemplatePlugin, "XLA": hetero_sdk_jax.XlaPlugin}, autoload=False)


@pytest.fixture(scope="module")
def xla_llama(core: hs.Core) -> FixedCapacityCompiledModel:
    compiled = core.compile_model(hs.make_stateful(core.read_model(PATHS["llama"])), "XLA")
    assert isinstance(compiled, FixedCapacityCompiledModel)
    return compiled


@pytest.mark.parametrize("name", ["llama", "qwen2", "gpt2"])
def test_greedy_tokens_of_a_stateful_decoder_equal_onnxruntime_s_on_template(core: hs.Core, name: str) -> None:
    model = hs.make_stateful(core.read_model(PATHS[name]))
    assert [p.any_name for p in model.inputs] == ["input_ids", "attention_mask"]
    assert [p.any_name for p in model.outputs] == ["logits"]
    request = core.compile_model(model, "TEMPLATE").create_infer_request()
    assert stateful_greedy(request, PROMPT, 32) == ort_greedy(PATHS[name], PROMPT, 32)
    assert all(s.state.shape[2] == len(PROMPT) + 31 for s in request.query_state())


def test_xla_decodes_64_tokens_with_three_executables(xla_llama: FixedCapacityCompiledModel) -> None:
    """One executable for the prompt, one per capacity for the steps (64 rows, then 128)."""
    request = xla_llama.create_infer_request()
    assert stateful_greedy(request, PROMPT, LONG) == ort_greedy(PATHS["llama"], PROMPT, LONG)
    shapes = xla_llama.compiled.cached_shapes
    assert sorted({s[2][2] for s in shapes}) == [INITIAL_CAPACITY, 2 * INITIAL_CAPACITY]
    assert len(shapes) == 3
    assert stateful_greedy(request, PROMPT, LONG) == ort_greedy(PATHS["llama"], PROMPT, LONG)
    assert len(xla_llama.compiled.cached_shapes) == 3  # a second generation compiles nothing


def test_a_reserved_length_makes_the_buffers_that_large_at_once(core: hs.Core) -> None:
    """reserve_state(rows) after reset_state(): the 72 rows of an 8-token prompt and 64 tokens in buffers
    of 128 rows from the first step, so no step compiles for a larger capacity part way."""
    compiled = core.compile_model(hs.make_stateful(core.read_model(PATHS["gpt2"])), "XLA")
    assert isinstance(compiled, FixedCapacityCompiledModel)
    request = compiled.create_infer_request()
    request.reset_state()
    request.reserve_state(len(PROMPT) + LONG)
    ids, total, tokens = np.array([PROMPT]), len(PROMPT), []
    for _ in range(LONG):
        logits = request.infer({"input_ids": ids, "attention_mask": np.ones((1, total), np.int64)})["logits"]
        tokens.append(int(logits[0, -1].argmax()))
        ids, total = np.array([[tokens[-1]]]), total + 1
    assert tokens == ort_greedy(PATHS["gpt2"], PROMPT, LONG)
    shapes = compiled.compiled.cached_shapes
    assert {s[2][2] for s in shapes} == {2 * INITIAL_CAPACITY} and len(shapes) == 2  # the prompt, the steps


@pytest.mark.parametrize("name", ["qwen2"])  # (GPT-2 on XLA: the HETERO test below, where XLA runs it all)
def test_xla_gives_onnxruntime_s_tokens_for_every_architecture(core: hs.Core, name: str) -> None:
    request = core.compile_model(hs.make_stateful(core.read_model(PATHS[name])), "XLA").create_infer_request()
    assert stateful_greedy(request, PROMPT, 24) == ort_greedy(PATHS[name], PROMPT, 24)


def test_xla_state_reads_the_filled_rows_as_onnxruntime_s_cache(xla_llama: FixedCapacityCompiledModel) -> None:
    request = xla_llama.create_infer_request()
    request.infer({"input_ids": np.array([PROMPT]), "attention_mask": np.ones((1, len(PROMPT)), np.int64)})
    expected = ort_present("llama", PROMPT)
    states = {s.name: s.state for s in request.query_state()}
    assert set(states) == set(expected)
    for name, value in expected.items():
        assert states[name].shape == value.shape  # the filled rows, not the buffer's capacity
        np.testing.assert_allclose(states[name].data, value, rtol=1e-4, atol=1e-5)


def test_xla_continues_from_a_state_set_by_hand(xla_llama: FixedCapacityCompiledModel) -> None:
    """The cache of the prompt, computed by ONNX Runtime and set as the state, then one token at a time."""
    request = xla_llama.create_infer_request()
    for state in request.query_state():
        state.state = ort_present("llama", PROMPT)[state.name]
    expected = ort_greedy(PATHS["llama"], PROMPT, 6)
    ids, total, tokens = np.array([[expected[0]]]), len(PROMPT) + 1, [expected[0]]
    for _ in range(5):
        logits = request.infer({"input_ids": ids, "attention_mask": np.ones((1, total), np.int64)})["logits"]
        tokens.append(int(logits[0, -1].argmax()))
        ids, total = np.array([[tokens[-1]]]), total + 1
    assert tokens == expected


def test_two_xla_requests_decode_independently(xla_llama: FixedCapacityCompiledModel) -> None:
    first, second = xla_llama.create_infer_request(), xla_llama.create_infer_request()
    other = [3, 1, 4, 1, 5]
    first.infer({"input_ids": np.array([PROMPT]), "attention_mask": np.ones((1, len(PROMPT)), np.int64)})
    assert stateful_greedy(second, other, 5) == ort_greedy(PATHS["llama"], other, 5)
    assert first.query_state()[0].state.shape[2] == len(PROMPT)


def test_hetero_over_xla_and_template_keeps_fixed_capacity_caches() -> None:
    hetero = hs.Core(
        plugins={"TEMPLATE": TemplatePlugin, "XLA": hetero_sdk_jax.XlaPlugin, "HETERO": HeteroPlugin}, autoload=False
    )
    model = hs.make_stateful(hetero.read_model(PATHS["gpt2"]))
    compiled = hetero.compile_model(model, "HETERO:XLA,TEMPLATE")
    assert isinstance(compiled, FixedCapacityCompiledModel)
    request = compiled.create_infer_request()
    assert stateful_greedy(request, PROMPT, LONG) == ort_greedy(PATHS["gpt2"], PROMPT, LONG)


def test_an_exported_xla_decoder_imports_with_its_fixed_capacity_caches(
    core: hs.Core, xla_llama: FixedCapacityCompiledModel
) -> None:
    request = xla_llama.create_infer_request()
    stateful_greedy(request, PROMPT, 2)  # an executable for the prompt and one for a step are cached
    imported = core.import_model(xla_llama.export_model(), "XLA")
    assert isinstance(imported, FixedCapacityCompiledModel)
    assert stateful_greedy(imported.create_infer_request(), PROMPT, 6) == ort_greedy(PATHS["llama"], PROMPT, 6)
