"""A stateful decoder split by layers over four XLA devices with PIPELINE_PARALLEL: each stage holds its
layers' weights and caches, the cuts carry the hidden state (never a cache), and greedy tokens are ONNX
Runtime's. JAX shows four CPU devices only when XLA_FLAGS asks before it initialises, so the case runs
in a fresh interpreter; it compiles four stages, hence marked slow."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("hetero_sdk_jax", reason="the XLA plugin (plugins/jax) is not installed")
pytest.importorskip("onnxruntime", reason="ONNX Runtime is the reference of the tokens")

TESTS = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent(
    """
    import re, sys, threading
    import numpy as np
    import hetero_sdk as hs
    from hetero_sdk.genai import GenerationConfig, LLMPipeline
    from hetero_sdk.hetero.plugin import HeteroPlugin
    from hetero_sdk_jax import XlaPlugin
    from template_plugin import TemplatePlugin
    sys.path.insert(0, TESTS)
    from decoders import PATHS, ort_greedy

    core = hs.Core(plugins={"XLA": XlaPlugin(), "TEMPLATE": TemplatePlugin(), "HETERO": HeteroPlugin()}, autoload=False)
    devices = [f"XLA.{i}" for i in range(4)]
    # llama.onnx: 4 layers of 147,584 bytes of weights, embedding and lm_head 131,072 each: the ends hold
    # a layer and the embedding or the head, the middle devices one layer (not one and a half)
    budgets = dict(zip(devices, (300_000, 170_000, 170_000, 300_000)))
    config = {"MODEL_DISTRIBUTION_POLICY": {"PIPELINE_PARALLEL"},
              "DEVICE_PROPERTIES": {d: {"DEVICE_TOTAL_MEM_SIZE": b} for d, b in budgets.items()}}
    prompt, n = [5, 17, 300, 42, 7, 111, 256, 9], 64
    expected = ort_greedy(PATHS["llama"], prompt, n)

    pipe = LLMPipeline(PATHS["llama"], "HETERO:" + ",".join(devices), config=config, core=core)
    compiled = pipe.session.compiled
    assert compiled.get_property("HETERO_NUMBER_OF_SUBMODELS") == 4
    assert compiled.get_property("EXECUTION_DEVICES") == devices
    runtime = compiled.get_runtime_model()   # the explicit form as HETERO runs it: an affinity per op
    placed = {op.friendly_name: op.get_rt_info().get("affinity") for op in runtime.get_ops()}
    users = runtime.consumers()
    parameters = {p.friendly_name: p for p in runtime.get_parameters()}
    results = {name: r for r in runtime.get_results() for name in r.input_value(0).names}
    for layer in range(4):
        for kind in ("key", "value"):
            read, write = parameters[f"past_key_values.{layer}.{kind}"], results[f"present.{layer}.{kind}"]
            readers = {placed[u.friendly_name] for u, _ in users[read.output(0)]}
            assert readers == {devices[layer]}, (read.friendly_name, readers)
            assert placed[write.input_value(0).node.friendly_name] == devices[layer], write.friendly_name
    report = compiled.placement_report()
    for cut in report.cuts:
        assert not re.search(r"ScatterElementsUpdate|past_key_values|present", cut.tensor), cut
    hidden = [c for c in report.cuts if c.shape.endswith(",64]") and c.element_type == "f32"]
    assert [(c.producer, c.consumers) for c in hidden] == [(0, (1,)), (1, (2,)), (2, (3,))], report.cuts

    got = list(pipe.generate(prompt, GenerationConfig(max_new_tokens=n)))
    assert got == expected, (got, expected)

    # two sequences in flight on two requests of the stateful model, one thread each: each keeps its state
    model = hs.make_stateful(core.read_model(PATHS["llama"]))
    stateful = core.compile_model(model, "HETERO:" + ",".join(devices), config)
    prompts = [prompt, [3, 1, 4, 1, 5, 9, 2, 6]]
    tokens = {}

    def decode(i):
        request = stateful.create_infer_request()
        ids, total, out = np.array([prompts[i]]), len(prompts[i]), []
        for _ in range(16):
            logits = request.infer({"input_ids": ids, "attention_mask": np.ones((1, total), np.int64)})["logits"]
            out.append(int(logits[0, -1].argmax()))
            ids, total = np.array([[out[-1]]]), total + 1
        tokens[i] = out

    threads = [threading.Thread(target=decode, args=(i,)) for i in range(2)]
    for t in threads: t.start()
    for t in threads: t.join()
    assert tokens[0] == expected[:16], tokens
    assert tokens[1] == ort_greedy(PATHS["llama"], prompts[1], 16), tokens
    print("OK")
    """
)


@pytest.mark.slow
def test_stateful_decoder_split_by_layers_over_four_xla_devices_gives_onnx_runtime_tokens() -> None:
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu"}
    script = f"TESTS = {str(TESTS)!r}\n" + SCRIPT
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0 and done.stdout.strip().endswith("OK"), done.stderr[-3000:]
