"""Real decoders from the real exporter (Llama and Qwen2 with grouped-query attention, GPT-2; see
``tests/data/decoders/README.md``) read, and decode greedily with an explicit KV cache to the tokens of
ONNX Runtime."""

from __future__ import annotations

import json

import pytest
from decoders import ARCHS, PATHS, TOKENIZER, decoder_config, greedy_with, ort_greedy

import hetero_sdk as hs
from hetero_sdk import rt_info
from hetero_sdk.hetero.plugin import HeteroPlugin
from template_plugin import TemplatePlugin

pytest.importorskip("onnxruntime")

PROMPT = [5, 17, 300, 42, 7, 111, 256, 9]
NEW_TOKENS = 64
XLA_NEW_TOKENS = 6
"""On XLA every step compiles anew today (the past length, a shape, changes each token: seconds a token);
raise to NEW_TOKENS once a fixed-capacity cache keeps the shapes (issue 28, item 2)."""


@pytest.fixture(scope="module")
def core() -> hs.Core:
    plugins: dict[str, object] = {"TEMPLATE": TemplatePlugin(), "HETERO": HeteroPlugin()}
    try:
        import hetero_sdk_jax
    except ImportError:
        pass
    else:
        plugins["XLA"] = hetero_sdk_jax.XlaPlugin()
    return hs.Core(plugins=plugins, autoload=False)


def _greedy(core: hs.Core, arch: str, device: str, n_tokens: int, model: hs.Model | None = None) -> list[int]:
    model = model or core.read_model(PATHS[arch])
    request = core.compile_model(model, device).create_infer_request()
    return greedy_with(request.infer, decoder_config(PATHS[arch]), PROMPT, n_tokens)


def _needs_xla(core: hs.Core) -> None:
    if "XLA" not in core.available_devices:
        pytest.skip("the XLA plugin (plugins/jax) is not installed")


@pytest.mark.parametrize("arch", ARCHS)
def test_reads_with_the_cache_interface_the_exporter_declared(core: hs.Core, arch: str) -> None:
    config = decoder_config(PATHS[arch])
    model = core.read_model(PATHS[arch])
    cache = f"[?,{config.kv_heads},?,{config.head_dim}]"
    pasts = [past for past, _ in config.cache_names()]
    presents = [present for _, present in config.cache_names()]
    assert {i.any_name: (str(i.partial_shape), str(i.element_type)) for i in model.inputs} == {
        "input_ids": ("[?,?]", "i64"), "attention_mask": ("[?,?]", "i64"),
    } | {name: (cache, "f32") for name in pasts}  # fmt: skip
    assert {o.any_name: str(o.partial_shape) for o in model.outputs} == {
        "logits": f"[?,?,{config.vocab}]",
    } | {name: cache for name in presents}  # fmt: skip


def test_the_tokenizer_covers_each_decoders_vocabulary_exactly() -> None:
    tokenizer = json.loads(TOKENIZER.read_text(encoding="utf-8"))
    ids = set(tokenizer["model"]["vocab"].values()) | {t["id"] for t in tokenizer["added_tokens"]}
    assert tokenizer["model"]["type"] == "BPE"
    assert {t["content"]: t["id"] for t in tokenizer["added_tokens"]} == {"<|endoftext|>": 0}
    for arch in ARCHS:
        assert ids == set(range(decoder_config(PATHS[arch]).vocab)), arch


@pytest.mark.parametrize("arch", ARCHS)
def test_greedy_tokens_on_template_equal_onnx_runtime(core: hs.Core, arch: str) -> None:
    expected = ort_greedy(PATHS[arch], PROMPT, NEW_TOKENS)
    assert _greedy(core, arch, "TEMPLATE", NEW_TOKENS) == expected


@pytest.mark.parametrize("arch", ["gpt2"])
def test_greedy_tokens_on_hetero_xla_template_equal_onnx_runtime(core: hs.Core, arch: str) -> None:
    """XLA runs every node of these decoders, so HETERO places them all there. The explicit cache grows
    every step, so XLA compiles each step anew: one architecture, a few tokens (the stateful form's 64
    tokens over HETERO, in fixed-capacity buffers: tests/runtime/test_stateful_decoders.py)."""
    _needs_xla(core)
    expected = ort_greedy(PATHS[arch], PROMPT, XLA_NEW_TOKENS)
    assert _greedy(core, arch, "HETERO:XLA,TEMPLATE", XLA_NEW_TOKENS) == expected


def test_greedy_tokens_of_llama_split_over_xla_and_template_equal_onnx_runtime(core: hs.Core) -> None:
    """The first half of the nodes (the masks, positions and first layers) on XLA, the rest on TEMPLATE:
    the cache and the mask cross from one device to the other at every step."""
    _needs_xla(core)
    model = core.read_model(PATHS["llama"])
    ops = model.get_ordered_ops()
    for index, node in enumerate(ops):
        node.get_rt_info()[rt_info.AFFINITY] = "XLA" if index < len(ops) // 2 else "TEMPLATE"
    expected = ort_greedy(PATHS["llama"], PROMPT, XLA_NEW_TOKENS)
    assert _greedy(core, "llama", "HETERO:XLA,TEMPLATE", XLA_NEW_TOKENS, model) == expected
