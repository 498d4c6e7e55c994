"""onnxruntime-genai's int4 Llama on XLA: its caches in fixed-capacity buffers against growing ones,
ms/token, time to first token and executables compiled per generation, one thread, beside ONNX Runtime.

Usage::

    python bench/bench_genai_cache.py                      # 32 tokens after a 16-token prompt, 9 rounds
    python bench/bench_genai_cache.py --tokens 48 --rounds 5 --cpu-time --json bench/results/genai_cache.json

Model: ``plugins/contrib/tests/data/llama_int4_genai.onnx``, a random Llama written by onnxruntime-genai's
model builder (int4 MatMulNBits, GroupQueryAttention; 2 layers, 2 key/value heads of 16, vocabulary 128, rotary
tables of 64 positions, so at most 48 tokens after the prompt; the contrib package's
``tests/data/README.md`` says how). GroupQueryAttention declares its caches written
in place (``OpDef.caches``), so the stateful decoder keeps them in fixed-capacity buffers on XLA.
Candidates:

- ``onnxruntime`` (the reference): the explicit cache, the model at ``accuracy_level=0`` (MatMulNBits'
  meaning, f32 activations, which the SDK computes; the builder writes 4);
- ``XLA fixed``: ``hs.make_stateful(model)`` compiled on XLA: one executable for the prompt and one for
  the steps (at 64 rows);
- ``XLA growing``: the same stateful decoder compiled in its plain explicit form, as XLA ran it before
  the declaration: an executable per cache length;
- ``TEMPLATE``: the stateful decoder on TEMPLATE.

The generations, the token check against ONNX Runtime, the probe of XLA candidates that compile per
token, the rounds and the table are ``bench_decoders.py``'s (its docstring says how they are measured).
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import bench_decoders  # noqa: E402
import onnx  # noqa: E402
from bench_decoders import Decoder, compile_counter, measure_generations, ort_candidate, rows_of, stateful  # noqa: E402
from timing import environment, print_table, write_report  # noqa: E402

import hetero_sdk as hs  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "plugins" / "contrib" / "tests" / "data" / "llama_int4_genai.onnx"
LAYERS, KV_HEADS, HEAD_DIM, VOCAB = 2, 2, 16, 128
POSITIONS = 64
"""The rows of the model's rotary tables: the longest sequence it takes."""


def decoder_at_accuracy_level_0(folder: Path) -> Decoder:
    """The genai Llama with its MatMulNBits at accuracy_level 0, written into ``folder``."""
    model = onnx.load(str(MODEL))
    for node in model.graph.node:
        for attribute in node.attribute:
            if node.op_type == "MatMulNBits" and attribute.name == "accuracy_level":
                attribute.i = 0
    path = folder / MODEL.name
    onnx.save(model, str(path))
    names = tuple((f"past_key_values.{i}.{k}", f"present.{i}.{k}") for i in range(LAYERS) for k in ("key", "value"))
    return Decoder("genai-llama-int4", path, names, KV_HEADS, HEAD_DIM, VOCAB)


def sdk_candidates(core: hs.Core, devices: list[str]) -> dict[str, bench_decoders.Generate | str]:
    """XLA with fixed-capacity and with growing caches, TEMPLATE: each the stateful decoder."""
    from hetero_sdk.runtime.fixed_capacity import FixedCapacityCompiledModel
    from hetero_sdk.runtime.stateful import StatefulCompiledModel
    from hetero_sdk.transformations import make_stateless

    model = hs.make_stateful(core.read_model(str(MODEL)))
    found: dict[str, bench_decoders.Generate | str] = {}
    if "XLA" in devices:
        fixed = core.compile_model(model, "XLA")
        if not isinstance(fixed, FixedCapacityCompiledModel):
            found["XLA fixed"] = "the stateful decoder is not compiled with fixed-capacity caches on XLA"
        else:
            found["XLA fixed"] = stateful(fixed.create_infer_request(), compile_counter(fixed))
        form = make_stateless(model)
        growing = StatefulCompiledModel(model.clone(), form, core.compile_model(form.model, "XLA"))
        found["XLA growing"] = stateful(growing.create_infer_request(), compile_counter(growing))
    if "TEMPLATE" in devices:
        compiled = core.compile_model(model, "TEMPLATE", bench_decoders.ONE_THREAD)
        found["TEMPLATE"] = stateful(compiled.create_infer_request())
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=32, help="new tokens per generation")
    parser.add_argument("--rounds", type=int, default=9, help="interleaved timed generations per candidate")
    parser.add_argument("--devices", nargs="+", default=["XLA", "TEMPLATE"], help="our devices to measure")
    parser.add_argument(
        "--xla-probe-tokens", type=int, default=4, help="tokens XLA first generates, to see if it compiles per token"
    )
    parser.add_argument("--cpu-time", action="store_true", help="time by the process's CPU time, not wall time")
    parser.add_argument("--all-cpus", action="store_true", help="do not pin the process to one CPU")
    parser.add_argument("--json", help="also write the rows as JSON to this file")
    args = parser.parse_args()
    if bench_decoders.PROMPT_LENGTH + args.tokens > POSITIONS:
        parser.error(f"--tokens {args.tokens}: the model takes {POSITIONS - bench_decoders.PROMPT_LENGTH} at most")
    bench_decoders.CLOCK = time.process_time if args.cpu_time else time.perf_counter
    if not args.all_cpus:
        bench_decoders.pin_to_one_cpu()  # before JAX starts its CPU backend
    with tempfile.TemporaryDirectory() as folder:
        decoder = decoder_at_accuracy_level_0(Path(folder))
        candidates: dict[str, bench_decoders.Generate | str] = {bench_decoders.REFERENCE: ort_candidate(decoder)}
        candidates |= sdk_candidates(hs.Core(), args.devices)
        probed = [name for name in candidates if name.startswith("XLA")]
        prompt = decoder.prompt()
        measured = measure_generations(candidates, prompt, args.tokens, args.rounds, args.xla_probe_tokens, probed)
    rows = rows_of(decoder.name, measured)
    columns = [
        ("runtime", "runtime"), ("tokens", "tokens"), ("ms_per_token", "ms/token"), ("token_vs_ort", "x ORT"),
        ("ttft_ms", "TTFT ms"), ("first_ms_per_token", "1st gen ms/token"), ("compiles", "compiles"),
        ("note", "note"),
    ]  # fmt: skip
    print(f"{MODEL.name}: {args.tokens} tokens after {len(prompt)}, {args.rounds} rounds, "
          f"{'CPU' if args.cpu_time else 'wall'} time")  # fmt: skip
    print_table(columns, rows)
    write_report(args.json, args, environment(), rows=rows)


if __name__ == "__main__":
    main()
