"""LLMPipeline on XLA and HETERO:XLA,TEMPLATE: ONNX Runtime's greedy tokens over 64 tokens, and the
executables the device compiled reported in the metrics. XLA compiles one executable per input shape;
the pipeline runs the decoder stateful, its caches in fixed-capacity buffers made as large as the prompt
and max_new_tokens need, so a generation compiles one executable for the prompt and one for the steps."""

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
    results = pipeline.generate(PROMPT, max_new_tokens=64, return_results=True)
    assert results.tokens == [ort_greedy(LLAMA, PROMPT, 64)]
    # the pipeline reserves the 4 + 64 rows the generation needs: the prompt and the steps at 128 rows
    assert results.perf_metrics.compile_count == 2
    again = pipeline.generate(PROMPT, max_new_tokens=64, return_results=True)
    assert again.tokens == results.tokens and again.perf_metrics.compile_count == 0


def test_a_stateful_decoder_on_xla_gives_onnx_runtimes_tokens(xla_core: hs.Core) -> None:
    model = hs.make_stateful(xla_core.read_model(LLAMA), beam_idx=True)
    pipeline = LLMPipeline(model, "XLA", core=xla_core)
    results = pipeline.generate(PROMPT, max_new_tokens=8, return_results=True)
    assert results.tokens == [ort_greedy(LLAMA, PROMPT, 8)]
    assert results.perf_metrics.compile_count == 2  # the prompt and the steps, at 64 rows
