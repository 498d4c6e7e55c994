"""Write the bench's medium Llama at int4 with onnxruntime-genai's model builder (the format ONNX Runtime
GenAI runs: MatMulNBits, GroupQueryAttention, SkipSimplifiedLayerNormalization).

Needs torch, transformers 5, tokenizers and onnxruntime-genai, which the project itself never needs: run it
in a separate environment, e.g.::

    /work/export-venv/bin/python tools/export_int4_decoder.py --out ~/.cache/hetero-sdk/decoders

The Llama is ``tools/export_decoders.py``'s medium one (same config and seed: 8 layers, hidden 512,
vocabulary 32,000), saved as a transformers folder with a word-level tokenizer (the builder copies one;
any will do), then ``python -m onnxruntime_genai.models.builder -i HF -o OUT -p int4 -e cpu``: every
linear layer and the LM head as MatMulNBits (4 bits, block 32, ``accuracy_level=4``). The result is
``OUT/llama_int4_medium.onnx`` with its weights in ``llama_int4_medium.onnx.data``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from export_decoders import SEED, _config

NAME = "llama_int4_medium.onnx"


def export_int4(out_dir: Path) -> Path:
    """The medium Llama written by the builder at int4 into ``out_dir``; its path."""
    import torch
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    torch.manual_seed(SEED)
    config = _config("llama", "medium")
    with tempfile.TemporaryDirectory() as work:
        hf, built = Path(work) / "hf", Path(work) / "out"
        transformers.LlamaForCausalLM(config).eval().save_pretrained(hf)
        words = Tokenizer(models.WordLevel({f"t{i}": i for i in range(config.vocab_size)}, unk_token="t0"))
        words.pre_tokenizer = pre_tokenizers.Whitespace()
        tokenizer = transformers.PreTrainedTokenizerFast(
            tokenizer_object=words, unk_token="t0", bos_token="t0", eos_token="t0"
        )
        tokenizer.save_pretrained(hf)
        command = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(hf), "-o", str(built)]
        subprocess.run([*command, "-p", "int4", "-e", "cpu", "-c", str(Path(work) / "cache")], check=True)
        out_dir.mkdir(parents=True, exist_ok=True)
        target = out_dir / NAME
        data = target.with_name(NAME + ".data")
        import onnx

        model = onnx.load(str(built / "model.onnx"))
        onnx.save(model, str(target), save_as_external_data=True, location=data.name, all_tensors_to_one_file=True)
        shutil.copy(built / "genai_config.json", out_dir / "llama_int4_medium.genai_config.json")
    return target


def main(argv: list[str] | None = None) -> None:
    """Command line: write the int4 medium Llama to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    print(export_int4(parser.parse_args(argv).out.expanduser()))


if __name__ == "__main__":
    main()
