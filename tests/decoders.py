"""The tiny decoders with a KV cache committed under ``tests/data/decoders`` (made by
``tools/export_decoders.py``), their shapes as their ONNX inputs declare them, and greedy decoding with
an explicit cache: on ONNX Runtime (the test reference) or over any step function, so that tests drive
the SDK's devices with the same loop."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import onnx

DATA = Path(__file__).parent / "data" / "decoders"
ARCHS = ("llama", "qwen2", "gpt2")
PATHS = {arch: DATA / f"{arch}.onnx" for arch in ARCHS}
TOKENIZER = DATA / "tokenizer.json"

StepFn = Callable[[dict[str, np.ndarray]], Any]
"""One decode step: feeds by input name -> outputs indexable by output name (``logits``,
``present.N.key|value``): a dict, or the SDK's ``InferResults``."""


@dataclass(frozen=True)
class DecoderConfig:
    """What a decoder's interface says about it: layers, key/value heads, head size, vocabulary."""

    layers: int
    kv_heads: int
    head_dim: int
    vocab: int

    def cache_names(self) -> list[tuple[str, str]]:
        """``(past_key_values.N.key|value, present.N.key|value)`` pairs, layer by layer."""
        return [(f"past_key_values.{i}.{k}", f"present.{i}.{k}") for i in range(self.layers) for k in ("key", "value")]

    def empty_cache(self, batch: int = 1) -> dict[str, np.ndarray]:
        """The past tensors of a first step: ``[batch, kv_heads, 0, head_dim]`` each."""
        shape = (batch, self.kv_heads, 0, self.head_dim)
        return {past: np.zeros(shape, np.float32) for past, _ in self.cache_names()}


@cache
def decoder_config(path: Path) -> DecoderConfig:
    """The config of the decoder at ``path``, read from its graph's inputs and outputs (weights not loaded)."""
    graph = onnx.load(str(path), load_external_data=False).graph

    def dims(values: Sequence[onnx.ValueInfoProto], name: str) -> list[int | str]:
        value = next(v for v in values if v.name == name)
        return [d.dim_value or d.dim_param for d in value.type.tensor_type.shape.dim]

    pasts = [v.name for v in graph.input if v.name.startswith("past_key_values.") and v.name.endswith(".key")]
    _, kv_heads, _, head_dim = dims(graph.input, "past_key_values.0.key")
    vocab = dims(graph.output, "logits")[-1]
    assert isinstance(kv_heads, int) and isinstance(head_dim, int) and isinstance(vocab, int), path
    return DecoderConfig(layers=len(pasts), kv_heads=kv_heads, head_dim=head_dim, vocab=vocab)


def greedy_with(run_step: StepFn, config: DecoderConfig, prompt_ids: Sequence[int], n_tokens: int) -> list[int]:
    """``n_tokens`` greedy tokens after ``prompt_ids`` (batch 1): the whole prompt with an empty cache, then
    one token at a time with the attention mask of the total length, each step's ``present`` as its next
    ``past``."""
    feeds: dict[str, np.ndarray] = {"input_ids": np.asarray([prompt_ids], np.int64), **config.empty_cache()}
    total, tokens = 0, list[int]()
    while len(tokens) < n_tokens:
        total += feeds["input_ids"].shape[1]
        feeds["attention_mask"] = np.ones((1, total), np.int64)
        out = run_step(feeds)
        tokens.append(int(np.argmax(np.asarray(out["logits"])[0, -1])))
        feeds = {"input_ids": np.asarray([[tokens[-1]]], np.int64)}
        feeds |= {past: np.asarray(out[present]) for past, present in config.cache_names()}
    return tokens


def ort_greedy(path: Path, prompt_ids: Sequence[int], n_tokens: int) -> list[int]:
    """ONNX Runtime's greedy tokens (one thread): the reference of the devices' tokens."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]

    def step(feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return dict(zip(names, session.run(names, feeds), strict=True))

    return greedy_with(step, decoder_config(path), prompt_ids, n_tokens)
