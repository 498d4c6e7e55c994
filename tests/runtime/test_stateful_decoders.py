"""Real decoders (tests/data/decoders: Llama, Qwen2 and GPT-2 exported by torch.onnx.export) made
stateful with make_stateful: greedy tokens equal ONNX Runtime's run of the exported explicit-cache model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hetero_sdk as hs
from template_plugin import TemplatePlugin

ort = pytest.importorskip("onnxruntime")
hetero_sdk_jax = pytest.importorskip("hetero_sdk_jax", reason="the XLA plugin (plugins/jax) is not installed")

DECODERS = Path(__file__).resolve().parents[1] / "data" / "decoders"
PROMPT = [5, 17, 300, 42, 7, 111, 256, 9]


def ort_greedy(path: Path, prompt: list[int], count: int) -> list[int]:
    """Greedy tokens of the exported model run by ONNX Runtime, its cache fed back by hand."""
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds: dict[str, np.ndarray] = {
        i.name: np.zeros((1, i.shape[1], 0, i.shape[3]), np.float32)
        for i in session.get_inputs()
        if i.name.startswith("past_key_values.")
    }
    names = [o.name for o in session.get_outputs()]
    ids, total, tokens = np.array([prompt]), len(prompt), []
    for _ in range(count):
        feeds |= {"input_ids": ids, "attention_mask": np.ones((1, total), np.int64)}
        outputs = dict(zip(names, session.run(None, feeds)))
        tokens.append(int(outputs["logits"][0, -1].argmax()))
        feeds |= {n.replace("present", "past_key_values"): v for n, v in outputs.items() if n.startswith("present.")}
        ids, total = np.array([[tokens[-1]]]), total + 1
    return tokens


def stateful_greedy(request: hs.InferRequest, prompt: list[int], count: int) -> list[int]:
    """Greedy tokens of a stateful decoder: only the new ids and the attention mask are fed."""
    request.reset_state()
    ids, total, tokens = np.array([prompt]), len(prompt), []
    for _ in range(count):
        logits = request.infer({"input_ids": ids, "attention_mask": np.ones((1, total), np.int64)})["logits"]
        tokens.append(int(logits[0, -1].argmax()))
        ids, total = np.array([[tokens[-1]]]), total + 1
    return tokens


@pytest.fixture(scope="module")
def core() -> hs.Core:
    return hs.Core(plugins={"TEMPLATE": TemplatePlugin, "XLA": hetero_sdk_jax.XlaPlugin}, autoload=False)


@pytest.mark.parametrize("name", ["llama", "qwen2", "gpt2"])
def test_greedy_tokens_of_a_stateful_decoder_equal_onnxruntime_s_on_template(core: hs.Core, name: str) -> None:
    path = DECODERS / f"{name}.onnx"
    model = hs.make_stateful(core.read_model(path))
    assert [p.any_name for p in model.inputs] == ["input_ids", "attention_mask"]
    assert [p.any_name for p in model.outputs] == ["logits"]
    request = core.compile_model(model, "TEMPLATE").create_infer_request()
    assert stateful_greedy(request, PROMPT, 32) == ort_greedy(path, PROMPT, 32)
    assert all(s.state.shape[2] == len(PROMPT) + 31 for s in request.query_state())


def test_greedy_tokens_on_xla_a_short_run(core: hs.Core) -> None:
    path = DECODERS / "llama.onnx"
    request = core.compile_model(hs.make_stateful(core.read_model(path)), "XLA").create_infer_request()
    assert stateful_greedy(request, PROMPT, 4) == ort_greedy(path, PROMPT, 4)
