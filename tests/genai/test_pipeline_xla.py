"""LLMPipeline on XLA and HETERO:XLA,TEMPLATE: ONNX Runtime's greedy tokens, and the executables the
device compiled reported in the metrics. XLA compiles one executable per input shape, and a decode
step's past length changes every token, so these tests generate a few tokens only."""

from __future__ import annotations

import pytest
from decoders import PATHS, ort_greedy

import hetero_sdk as hs
from hetero_sdk.genai import LLMPipeline
from template_plugin import TemplatePlugin

LLAMA = PATHS["llama"]

jax_plugin = pytest.importorskip("hetero_sdk_jax")

PROMPT = [1, 17, 42, 99]


@pytest.fixture(scope="module")
def xla_core() -> hs.Core:
    return hs.Core(plugins={"XLA": jax_plugin.XlaPlugin, "TEMPLATE": TemplatePlugin}, autoload=False)


@pytest.mark.parametrize("device", ["XLA", "HETERO:XLA,TEMPLATE"])
def test_greedy_tokens_are_onnx_runtimes_and_compiles_are_counted(xla_core: hs.Core, device: str) -> None:
    if device.startswith("HETERO"):
        from hetero_sdk.hetero.plugin import HeteroPlugin

        xla_core.register_plugin(HeteroPlugin(), "HETERO")
    pipeline = LLMPipeline(LLAMA, device, core=xla_core)
    results = pipeline.generate(PROMPT, max_new_tokens=3, return_results=True)
    assert results.tokens == [ort_greedy(LLAMA, PROMPT, 3)]
    # one executable per input shape: the prompt, then past lengths 4 and 5
    assert results.perf_metrics.compile_count == 3
    again = pipeline.generate(PROMPT, max_new_tokens=3, return_results=True)
    assert again.tokens == results.tokens and again.perf_metrics.compile_count == 0


def test_a_stateful_decoder_on_xla_gives_onnx_runtimes_tokens(xla_core: hs.Core) -> None:
    model = hs.make_stateful(xla_core.read_model(LLAMA), beam_idx=True)
    pipeline = LLMPipeline(model, "XLA", core=xla_core)
    results = pipeline.generate(PROMPT, max_new_tokens=3, return_results=True)
    assert results.tokens == [ort_greedy(LLAMA, PROMPT, 3)]
    assert results.perf_metrics.compile_count == 3
