"""The committed tiny decoders and ONNX Runtime's greedy tokens for them: the reference of the
pipeline's tokens (the model run step by step with its own cache)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

DECODERS = Path(__file__).parents[1] / "data" / "decoders"
PATHS = {arch: DECODERS / f"{arch}.onnx" for arch in ("llama", "qwen2", "gpt2")}
LLAMA = PATHS["llama"]
TOKENIZER = DECODERS / "tokenizer.json"


def ort_greedy(path: Path, prompt: list[int], count: int) -> list[int]:
    """ONNX Runtime's greedy tokens for ``prompt``: the model run step by step with its own cache."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    inputs = {i.name: i for i in session.get_inputs()}
    names = [o.name for o in session.get_outputs()]
    past = {
        name: np.zeros((1, port.shape[1], 0, port.shape[3]), np.float32)
        for name, port in inputs.items()
        if name.startswith("past_key_values.")
    }
    ids, length, tokens = np.array([prompt], np.int64), 0, []
    for _ in range(count):
        feed = {"input_ids": ids, "attention_mask": np.ones((1, length + ids.shape[1]), np.int64), **past}
        if "position_ids" in inputs:
            feed["position_ids"] = np.arange(length, length + ids.shape[1], dtype=np.int64)[None]
        outputs = dict(zip(names, session.run(None, feed)))
        length += ids.shape[1]
        tokens.append(int(np.argmax(outputs["logits"][0, -1])))
        past = {"past_key_values" + n[len("present") :]: v for n, v in outputs.items() if n.startswith("present")}
        ids = np.array([[tokens[-1]]], np.int64)
    return tokens
