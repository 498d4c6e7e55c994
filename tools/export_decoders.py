"""Export decoders with a KV cache from ``transformers`` (random weights, fixed seed) to ONNX.

Needs torch, transformers 5, onnxscript, onnx and tokenizers, which the project itself never needs: run it
in a separate environment, e.g. (the files the tests use, committed under ``tests/data/decoders/``)::

    /work/export-venv/bin/python tools/export_decoders.py --size tiny --out tests/data/decoders

and the bench's medium Llama (~60M parameters, weights in external data)::

    /work/export-venv/bin/python tools/export_decoders.py --arch llama --size medium --out DIR

Each decoder is exported by ``torch.onnx.export(..., dynamo=True, opset_version=18)`` through a wrapper
that flattens ``DynamicCache``: inputs ``input_ids``, ``attention_mask``, ``past_key_values.N.key|value``
([batch, kv_heads, past, head_dim]); outputs ``logits``, ``present.N.key|value``. ``--tokenizer`` (on
by default for ``tiny``) also trains a byte-level BPE ``tokenizer.json`` of 512 tokens, offline, on text
generated here, so that the tiny decoders' vocabulary matches it.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Any

ARCHS = ("llama", "qwen2", "gpt2")
SIZES: dict[str, dict[str, int]] = {
    "tiny": dict(layers=4, hidden=64, intermediate=128, heads=4, kv_heads=2, vocab=512, positions=256),
    "medium": dict(layers=8, hidden=512, intermediate=1376, heads=8, kv_heads=4, vocab=32000, positions=1024),
}
INIT_RANGE = {"tiny": 0.4, "medium": 0.02}
"""The weights' standard deviation: transformers' 0.02 makes a tiny decoder nearly repeat its input; at 0.4
its greedy tokens vary and the best logit leads the next by more than 1e-3 (f32 noise cannot flip them)."""
SEED = 0
TOKENIZER_VOCAB = 512
EOS_ID = 0
"""``<|endoftext|>``, the tokenizer's first token: the decoders' bos/eos id."""


def _config(arch: str, size: str) -> Any:
    """The transformers config of ``arch`` at ``size`` (GPT-2 has as many key/value heads as heads)."""
    from transformers import GPT2Config, LlamaConfig, Qwen2Config

    s = SIZES[size]
    common = dict(initializer_range=INIT_RANGE[size], bos_token_id=EOS_ID, eos_token_id=EOS_ID)
    if arch == "gpt2":  # input and output embeddings tied, as GPT-2's
        return GPT2Config(
            vocab_size=s["vocab"], n_embd=s["hidden"], n_inner=s["intermediate"], n_layer=s["layers"],
            n_head=s["heads"], n_positions=s["positions"], **common,
        )  # fmt: skip
    cls = {"llama": LlamaConfig, "qwen2": Qwen2Config}[arch]
    return cls(
        vocab_size=s["vocab"], hidden_size=s["hidden"], intermediate_size=s["intermediate"],
        num_hidden_layers=s["layers"], num_attention_heads=s["heads"], num_key_value_heads=s["kv_heads"],
        max_position_embeddings=s["positions"], tie_word_embeddings=False, **common,
    )  # fmt: skip


def export_decoder(arch: str, size: str, out_dir: Path | str) -> Path:
    """Export ``arch`` (llama, qwen2, gpt2) at ``size`` (tiny, medium) to ``out_dir/ARCH.onnx``; its path."""
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.cache_utils import DynamicCache

    if arch not in ARCHS or size not in SIZES:
        raise ValueError(f"arch must be one of {ARCHS} and size one of {tuple(SIZES)}, got {arch!r}, {size!r}")
    out = Path(out_dir) / (f"{arch}.onnx" if size == "tiny" else f"{arch}_{size}.onnx")
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(SEED)
    cfg = _config(arch, size)
    model = AutoModelForCausalLM.from_config(cfg).eval()
    layers = cfg.num_hidden_layers
    kv = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
    head_dim = cfg.hidden_size // cfg.num_attention_heads

    class WithCache(torch.nn.Module):
        """The model with its cache as flat tensors: (ids, mask, k0, v0, k1, ...) -> (logits, k0, v0, ...)."""

        def __init__(self, m: torch.nn.Module) -> None:
            super().__init__()
            self.m = m

        def forward(self, input_ids: Any, attention_mask: Any, *past: Any) -> tuple[Any, ...]:
            cache = DynamicCache()
            for i in range(layers):
                cache.update(past[2 * i], past[2 * i + 1], i)
            res = self.m(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache, use_cache=True)
            flat = []
            for layer in res.past_key_values.layers:
                flat += [layer.keys, layer.values]
            return (res.logits, *flat)

    ids = torch.randint(0, cfg.vocab_size, (1, 3))
    mask = torch.ones(1, 8, dtype=torch.int64)  # past 5 + new 3
    past = [torch.randn(1, kv, 5, head_dim) for _ in range(2 * layers)]
    batch, seq = torch.export.Dim("batch", max=64), torch.export.Dim("seq", max=512)
    total, past_len = torch.export.Dim("total", max=1024), torch.export.Dim("past", max=1024)
    names = [f"{i}.{k}" for i in range(layers) for k in ("key", "value")]
    with torch.no_grad():
        torch.onnx.export(
            WithCache(model), (ids, mask, *past), str(out),
            input_names=["input_ids", "attention_mask"] + [f"past_key_values.{n}" for n in names],
            output_names=["logits"] + [f"present.{n}" for n in names],
            dynamic_shapes=({0: batch, 1: seq}, {0: batch, 1: total}, tuple({0: batch, 2: past_len} for _ in past)),
            dynamo=True, opset_version=18,
        )  # fmt: skip
    return out


def _training_text(lines: int = 4000) -> list[str]:
    """Deterministic English-like text to train the tokenizer on (no download)."""
    rng = random.Random(SEED)
    words = _WORDS.split()
    return [" ".join(rng.choice(words) for _ in range(rng.randint(4, 16))) + rng.choice(".!?,;") for _ in range(lines)]


_WORDS = (
    "the a one model token layer cache key value past present attention head query graph node device "
    "tensor shape runs reads writes decodes generates small large fast slow every each first last "
    "and or but with without from into over under before after while because if then is are was be "
    "hello world python numpy kernel plugin hetero template xla compile step loop greedy sample"
)


def train_tokenizer(out_dir: Path | str, vocab_size: int = TOKENIZER_VOCAB) -> Path:
    """Train a byte-level BPE tokenizer of ``vocab_size`` tokens on generated text; ``out_dir/tokenizer.json``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )  # fmt: skip
    tok.train_from_iterator(_training_text(), trainer=trainer)
    out = Path(out_dir) / "tokenizer.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    tok.save(str(out))
    return out


def main(argv: list[str] | None = None) -> None:
    """Command line: export the chosen decoders (and the tokenizer) to ``--out``."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", choices=ARCHS, action="append", help="repeatable; default: all three")
    p.add_argument("--size", choices=tuple(SIZES), default="tiny")
    p.add_argument("--out", type=Path, required=True, help="output folder")
    p.add_argument("--tokenizer", action=argparse.BooleanOptionalAction, default=None,
                   help="train tokenizer.json too (default: with --size tiny)")  # fmt: skip
    args = p.parse_args(argv)
    for arch in args.arch or ARCHS:
        print(export_decoder(arch, args.size, args.out))
    if args.tokenizer or (args.tokenizer is None and args.size == "tiny"):
        print(train_tokenizer(args.out))


if __name__ == "__main__":
    main()
