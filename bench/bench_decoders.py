"""Decoders with a KV cache: ms/token, time to first token and compiles per generation, one thread.

Usage::

    python bench/bench_decoders.py                                   # tiny decoders + the medium Llama
    python bench/bench_decoders.py --models llama --rounds 9 --json bench/results/decoders.json
    python bench/bench_decoders.py --medium-dir ~/.cache/hetero-sdk/decoders
    python bench/bench_decoders.py --models llama-int4 llama-int4-medium --ways stateful genai --cpu-time

Models: the tiny Llama, Qwen2 and GPT-2 of ``tests/data/decoders`` (4 layers, hidden 64, vocabulary 512)
and the medium Llama (8 layers, hidden 512, vocabulary 32,000, ~56M parameters, 217 MB of f32 weights in
external data). The medium one is not committed: it is read from ``--medium-dir`` (default
``$HETERO_SDK_DECODERS`` or ``~/.cache/hetero-sdk/decoders``) and, when absent, exported there once by
``tools/export_decoders.py`` in a torch environment (``--export-python``, default
``$HETERO_SDK_EXPORT_PYTHON`` or ``/work/export-venv/bin/python``; torch, transformers 5, onnxscript)::

    /work/export-venv/bin/python tools/export_decoders.py --arch llama --size medium \\
        --out ~/.cache/hetero-sdk/decoders

Without that environment the medium model is skipped with this command as the reason.

The int4 decoders are written by onnxruntime-genai's model builder (MatMulNBits at 4 bits, block 32,
GroupQueryAttention, SkipSimplifiedLayerNormalization): ``llama-int4`` is the contrib tests' random Llama
(``plugins/contrib/tests/data/llama_int4_genai.onnx``: 2 layers, hidden 64, vocabulary 128) and
``llama-int4-medium`` the medium Llama above at int4 (``llama_int4_medium.onnx`` in ``--medium-dir``,
written there once by ``tools/export_int4_decoder.py`` in the same torch environment, which also needs
onnxruntime-genai). Their reference is ONNX Runtime at ``accuracy_level=0`` (the op's meaning: f32
activations, what the SDK computes); ``onnxruntime acc4`` runs the file as written (``accuracy_level=4``:
ONNX Runtime also quantizes the activations to int8), its tokens checked like any candidate's.

Each runtime decodes greedily after a 16-token prompt: the prompt with an empty cache (the time to first
token, TTFT, ends with its token), then one token at a time. Candidates:

- ``onnxruntime`` (the reference) and ``openvino`` (CPU, ``INFERENCE_PRECISION_HINT`` f32): the explicit
  cache, each step's ``present.N.*`` fed back as ``past_key_values.N.*``;
- ``TEMPLATE explicit``, ``XLA explicit``: the same explicit cache driven by the bench. XLA compiles an
  executable per past length there, so it is measured that way on the tiny models only;
- ``TEMPLATE stateful``, ``XLA stateful``: ``hs.make_stateful(model)``, then one request looping
  ``infer({"input_ids", "attention_mask"})`` (``reset_state()`` between generations), when the SDK has
  ``make_stateful``;
- ``XLA stateful f32 weight`` (and the other ways), with ``--xla-f32-weight``: XLA with
  ``XLA_NATIVE_KERNELS=False``, MatMulNBits as one product by an f32 weight dequantized at compile time
  instead of the native kernel on the packed bytes;
- ``TEMPLATE genai``, ``XLA genai``: ``hetero_sdk.genai.LLMPipeline(...).generate`` with a streamer
  timing the first token, when the SDK has it.

Honesty: every candidate's greedy tokens are checked equal to ONNX Runtime's before it is timed; a
candidate whose tokens differ is reported as a mismatch (the first differing step), never with a figure.

XLA candidates first generate ``--xla-probe-tokens`` tokens; one that compiles an executable per token
is reported from that one generation (its time mostly compiling, said in the note) instead of being timed
over rounds of the full length (seconds a token). With ``--xla-warm`` XLA keeps an executable per length
and is timed over rounds anyway: its figures are then the executables' run time once every length is
compiled (a fresh generation still compiles per token; said in the note).

Timing: ``--rounds`` interleaved rounds (the order rotates each round) of one whole generation per
candidate, after one untimed generation each. A generation gives its TTFT and its ms/token (the decode
steps' mean, TTFT excluded), in wall time or, with ``--cpu-time``, in the process's CPU time (on a busy
shared machine wall times also count the waits for a core); the table gives the medians over rounds and
the median over rounds of the ratio to ONNX Runtime's figure in the same round. ``1st gen ms/token`` is
the first (untimed) generation's, compiling included, and ``compiles`` the number of executables the
device compiled during it, where it tells (XLA's ``cached_shapes``), ``-`` elsewhere; the timed rounds
repeat the same prompt, so they reuse what the first generation compiled where the device keeps it.

Everything runs on one thread: BLAS variables, ONNX Runtime's and OpenVINO's pools, TEMPLATE's
``INFERENCE_NUM_THREADS``, and the process pinned to one CPU (XLA:CPU sizes its pool by the CPUs the
process may use) unless ``--all-cpus``.
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS

import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from timing import bench_arguments, environment, print_table, write_report  # noqa: E402

import hetero_sdk as hs  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TINY = {arch: ROOT / "tests" / "data" / "decoders" / f"{arch}.onnx" for arch in ("llama", "qwen2", "gpt2")}
MEDIUM = "llama-medium"
INT4 = "llama-int4"
INT4_MEDIUM = "llama-int4-medium"
INT4_TINY_PATH = ROOT / "plugins" / "contrib" / "tests" / "data" / "llama_int4_genai.onnx"
MODELS = (*TINY, MEDIUM, INT4, INT4_MEDIUM)
PROMPT_LENGTH = 16
ONE_THREAD = {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY"}
OPENVINO_F32 = {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "INFERENCE_PRECISION_HINT": "f32"}
REFERENCE = "onnxruntime"
CLOCK: Callable[[], float] = time.perf_counter
"""What generations are timed by: wall time, or the process's CPU time (``--cpu-time``)."""


# -- the models -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decoder:
    """A decoder file and what its interface says: the cache's (past, present) names, heads, head size."""

    name: str
    path: Path
    cache_names: tuple[tuple[str, str], ...]
    kv_heads: int
    head_dim: int
    vocab: int

    def empty_cache(self) -> dict[str, np.ndarray]:
        """The past tensors of a first step: ``[1, kv_heads, 0, head_dim]`` each."""
        shape = (1, self.kv_heads, 0, self.head_dim)
        return {past: np.zeros(shape, np.float32) for past, _ in self.cache_names}

    def prompt(self) -> list[int]:
        """:data:`PROMPT_LENGTH` token ids drawn in the vocabulary (seeded: the same in every run)."""
        return [int(i) for i in np.random.default_rng(0).integers(1, self.vocab, PROMPT_LENGTH)]


def read_decoder(name: str, path: Path) -> Decoder:
    """The decoder at ``path`` with its cache names and sizes read from its graph (weights not loaded)."""
    import onnx

    graph = onnx.load(str(path), load_external_data=False).graph

    def dims(values: Sequence[Any], wanted: str) -> list[int]:
        value = next(v for v in values if v.name == wanted)
        return [d.dim_value for d in value.type.tensor_type.shape.dim]

    layers = sum(1 for v in graph.input if v.name.startswith("past_key_values.") and v.name.endswith(".key"))
    names = tuple((f"past_key_values.{i}.{k}", f"present.{i}.{k}") for i in range(layers) for k in ("key", "value"))
    _, kv_heads, _, head_dim = dims(graph.input, "past_key_values.0.key")
    if not head_dim:  # onnxruntime-genai's builder leaves it symbolic: the hidden size over the heads
        attention = next(n for n in graph.node if n.op_type == "GroupQueryAttention")
        heads = next(a.i for a in attention.attribute if a.name == "num_heads")
        first = next(n for n in graph.node if n.op_type == "MatMulNBits")
        head_dim = next(a.i for a in first.attribute if a.name == "K") // heads
    return Decoder(name, path, names, kv_heads, head_dim, dims(graph.output, "logits")[-1])


def medium_path(folder: Path, export_python: str, int4: bool = False) -> tuple[Path | None, str]:
    """The medium Llama (``int4``: written by onnxruntime-genai's builder) in ``folder``, exported there
    first when absent and ``export_python`` exists; (None, why) when it cannot be had."""
    name = "llama_int4_medium.onnx" if int4 else "llama_medium.onnx"  # the names the tools give them
    path = folder / name
    if path.exists():
        return path, ""
    if int4:
        command = [export_python, str(ROOT / "tools" / "export_int4_decoder.py")]
    else:
        command = [export_python, str(ROOT / "tools" / "export_decoders.py"), "--arch", "llama", "--size", "medium"]
    command += ["--out", str(folder)]
    how = " ".join(command)
    if not Path(export_python).exists():
        return None, f"{path} is absent and {export_python} (a torch environment) is not there; make it with: {how}"
    print(f"  exporting the medium Llama (once): {how}", flush=True)
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0 or not path.exists():
        return None, f"exporting failed ({done.stderr.strip().splitlines()[-1:]}); make it with: {how}"
    return path, ""


# -- one generation ---------------------------------------------------------------------------------


@dataclass
class Generation:
    """One greedy generation's tokens, its time to first token and its decode steps' mean (seconds),
    and the executables compiled during it (None where the device does not tell)."""

    tokens: list[int]
    ttft: float
    per_token: float
    compiles: int | None = None


Generate = Callable[[list[int], int], Generation]
"""A candidate: (prompt ids, new tokens) -> one timed greedy generation."""


def explicit_cache(step: Callable[[dict[str, np.ndarray]], Any], decoder: Decoder, counter: Any = None) -> Generate:
    """Greedy generation with the cache in the feeds: ``step(feeds)`` returns outputs by name;
    ``counter()`` (optional) gives the number of executables compiled so far."""

    def generate(prompt: list[int], n: int) -> Generation:
        compiled_before = counter() if counter else None
        feeds: dict[str, np.ndarray] = {"input_ids": np.asarray([prompt], np.int64), **decoder.empty_cache()}
        total, tokens, ttft = 0, list[int](), 0.0
        start = CLOCK()
        while len(tokens) < n:
            total += feeds["input_ids"].shape[1]
            feeds["attention_mask"] = np.ones((1, total), np.int64)
            out = step(feeds)
            tokens.append(int(np.argmax(np.asarray(out["logits"])[0, -1])))
            if len(tokens) == 1:
                ttft = CLOCK() - start
            feeds = {"input_ids": np.asarray([[tokens[-1]]], np.int64)}
            feeds |= {past: out[present] for past, present in decoder.cache_names}
        decode = (CLOCK() - start - ttft) / max(n - 1, 1)
        return Generation(tokens, ttft, decode, None if counter is None else counter() - compiled_before)

    return generate


def stateful(request: Any, counter: Any = None) -> Generate:
    """Greedy generation on a stateful request: ids and mask in, the cache kept in the request's state
    (reset first); optimum-intel's ``beam_idx`` fed ``[0]`` when the model has it."""
    beam = any("beam_idx" in port.names for port in request.compiled_model.inputs)

    def generate(prompt: list[int], n: int) -> Generation:
        compiled_before = counter() if counter else None
        request.reset_state()
        ids, total, tokens, ttft = np.asarray([prompt], np.int64), 0, list[int](), 0.0
        start = CLOCK()
        while len(tokens) < n:
            total += ids.shape[1]
            feeds = {"input_ids": ids, "attention_mask": np.ones((1, total), np.int64)}
            if beam:
                feeds["beam_idx"] = np.zeros(1, np.int32)
            out = request.infer(feeds)
            tokens.append(int(np.argmax(np.asarray(out["logits"])[0, -1])))
            if len(tokens) == 1:
                ttft = CLOCK() - start
            ids = np.asarray([[tokens[-1]]], np.int64)
        decode = (CLOCK() - start - ttft) / max(n - 1, 1)
        return Generation(tokens, ttft, decode, None if counter is None else counter() - compiled_before)

    return generate


def pipeline(llm: Any, config_class: Any) -> Generate:
    """Greedy generation by ``LLMPipeline.generate`` (no stop token), the first token timed by its
    streamer, the compiles from its metrics."""

    def generate(prompt: list[int], n: int) -> Generation:
        first: list[float] = []
        config = config_class(max_new_tokens=n, do_sample=False, stop_token_ids=set(), eos_token_id=None)

        def streamer(_: Any) -> bool:
            if not first:
                first.append(CLOCK())
            return False

        start = CLOCK()
        results = llm.generate(prompt, config, streamer, return_results=True)
        end = CLOCK()
        ttft = (first[0] if first else end) - start
        tokens = [int(t) for t in results.tokens[0]]
        compiles = results.perf_metrics.compile_count
        return Generation(tokens, ttft, (end - start - ttft) / max(n - 1, 1), compiles)

    return generate


# -- the candidates ---------------------------------------------------------------------------------


def ort_candidate(decoder: Decoder, accuracy_level: int | None = None) -> Generate:
    """ONNX Runtime's CPU provider, one thread, the explicit cache; with ``accuracy_level``, the model's
    MatMulNBits set to it first."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    source: str | bytes = str(decoder.path)
    if accuracy_level is not None:
        import onnx

        model = onnx.load(str(decoder.path))
        for node in model.graph.node:
            for attribute in node.attribute:
                if node.op_type == "MatMulNBits" and attribute.name == "accuracy_level":
                    attribute.i = accuracy_level
        source = model.SerializeToString()
    session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return explicit_cache(lambda feeds: dict(zip(names, session.run(names, feeds))), decoder)


def openvino_candidate(decoder: Decoder) -> Generate | str:
    """OpenVINO's CPU device in f32 on one thread with the explicit cache, or why it cannot run."""
    try:
        import openvino as ov
    except ImportError:
        return "openvino is not installed (pip install -e '.[bench]')"
    compiled = ov.Core().compile_model(str(decoder.path), "CPU", OPENVINO_F32)
    request = compiled.create_infer_request()
    names = [o.get_any_name() for o in compiled.outputs]

    def step(feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        request.infer(feeds)
        return {name: request.get_tensor(name).data.copy() for name in names}

    return explicit_cache(step, decoder)


def compile_counter(compiled: Any) -> Callable[[], int] | None:
    """A count of the executables ``compiled`` has compiled so far (each input-shape key it has not held
    before), where it exposes its executables (XLA's ``cached_shapes``; for a stateful model, those of
    the device's compiled model of its explicit form); None elsewhere."""
    if not hasattr(compiled, "cached_shapes"):
        compiled = getattr(compiled, "compiled", None)  # StatefulCompiledModel: the device's compiled model
        if not hasattr(compiled, "cached_shapes"):
            return None
    seen: set[Any] = set()
    count = [0]

    def compiled_so_far() -> int:
        kept = set(compiled.cached_shapes)
        count[0] += len(kept - seen)
        seen.clear()
        seen.update(kept)
        return count[0]

    compiled_so_far()
    return compiled_so_far


def sdk_candidates(
    core: hs.Core, decoder: Decoder, device: str, ways: Sequence[str], extra: dict[str, Any] | None = None
) -> dict[str, Generate | str]:
    """``device`` driven each of ``ways`` (explicit, stateful, genai): a generation, or why it cannot run;
    ``extra`` adds to the device's configuration."""
    config = {**(ONE_THREAD if device == "TEMPLATE" else {}), **(extra or {})}
    found: dict[str, Generate | str] = {}
    if "explicit" in ways:
        compiled = core.compile_model(core.read_model(decoder.path), device, config)
        request = compiled.create_infer_request()
        found[f"{device} explicit"] = explicit_cache(request.infer, decoder, compile_counter(compiled))
    if "stateful" in ways:
        if not hasattr(hs, "make_stateful"):
            found[f"{device} stateful"] = "hs.make_stateful is not in this build of the SDK"
        else:
            compiled = core.compile_model(hs.make_stateful(core.read_model(decoder.path)), device, config)
            found[f"{device} stateful"] = stateful(compiled.create_infer_request(), compile_counter(compiled))
    if "genai" in ways:
        try:
            from hetero_sdk.genai import GenerationConfig, LLMPipeline
        except ImportError:
            found[f"{device} genai"] = "hetero_sdk.genai.LLMPipeline is not in this build of the SDK"
        else:
            llm = LLMPipeline(decoder.path, device, config=dict(config), core=core)
            found[f"{device} genai"] = pipeline(llm, GenerationConfig)
    return found


# -- measuring --------------------------------------------------------------------------------------


@dataclass
class Measured:
    """A candidate's generations, round by round, or why it has no figures; its first generation's
    ms/token and compiles (the warm-up: compiling included), and the tokens its generations made."""

    rounds: list[Generation] = field(default_factory=list)
    skipped: str = ""
    first: Generation | None = None
    tokens: int = 0
    note: str = ""


def first_difference(tokens: list[int], expected: list[int]) -> str:
    """Where ``tokens`` leave ``expected``: the step and both tokens."""
    step = next((i for i, (a, b) in enumerate(zip(tokens, expected)) if a != b), min(len(tokens), len(expected)))
    got = tokens[step] if step < len(tokens) else None
    want = expected[step] if step < len(expected) else None
    return f"tokens differ from ONNX Runtime's at step {step}: {got} instead of {want}"


def measure_generations(
    candidates: dict[str, Generate | str], prompt: list[int], n: int, rounds: int, probe: int, probed: Sequence[str]
) -> dict[str, Measured]:
    """Checks each candidate's tokens against ONNX Runtime's (one untimed generation, also the warm-up),
    then times ``rounds`` interleaved generations of ``n`` tokens per candidate.

    The candidates in ``probed`` (XLA) first generate ``probe`` tokens: one that compiles an executable
    per token there (a past length, a shape, per step) is reported from that generation alone (compiling
    included), not timed over ``n`` tokens and rounds (seconds a token)."""
    results: dict[str, Measured] = {}
    expected = candidates[REFERENCE]
    assert callable(expected)
    reference_tokens = expected(prompt, n).tokens
    for name, generate in candidates.items():
        if isinstance(generate, str):
            results[name] = Measured(skipped=generate)
            continue
        try:
            if name in probed:
                first = generate(prompt, probe)
                if first.tokens != reference_tokens[:probe]:
                    results[name] = Measured(skipped=first_difference(first.tokens, reference_tokens))
                    continue
                if first.compiles is not None and first.compiles >= probe - 1:
                    note = f"compiles per token: one generation of {probe} tokens, its time mostly compiling"
                    results[name] = Measured([first], first=first, tokens=probe, note=note)
                    continue
                probed_compiles = first.compiles
            else:
                probed_compiles = None
            first = generate(prompt, n)
            if probed_compiles is not None and first.compiles is not None:
                first.compiles += probed_compiles  # the probe compiled the first steps' executables
        except Exception as exc:  # a runtime that cannot run the model: shown, not fatal
            results[name] = Measured(skipped=f"fails: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
            continue
        if first.tokens != reference_tokens:
            results[name] = Measured(skipped=first_difference(first.tokens, reference_tokens))
            continue
        results[name] = Measured(first=first, tokens=n)
    timed = [name for name, m in results.items() if not m.skipped and not m.rounds]
    for round_ in range(rounds):
        shift = round_ % len(timed)
        for name in timed[shift:] + timed[:shift]:
            results[name].rounds.append(candidates[name](prompt, n))  # type: ignore[operator]
    return results


def rows_of(model: str, measured: dict[str, Measured]) -> list[dict[str, Any]]:
    """The table's rows: medians over rounds, and the median over rounds of each round's ratio to ONNX
    Runtime's (a candidate timed in one generation only: over ONNX Runtime's median)."""
    reference = measured[REFERENCE].rounds
    ref_token = statistics.median(g.per_token for g in reference)
    ref_ttft = statistics.median(g.ttft for g in reference)
    rows = []
    for name, m in measured.items():
        row: dict[str, Any] = {"model": model, "runtime": name}
        if m.skipped:
            rows.append({**row, "note": m.skipped})
            continue
        paired = len(m.rounds) == len(reference)
        row["tokens"] = m.tokens
        row["ms_per_token"] = statistics.median(g.per_token for g in m.rounds) * 1e3
        row["ttft_ms"] = statistics.median(g.ttft for g in m.rounds) * 1e3
        row["token_vs_ort"] = (
            statistics.median(g.per_token / r.per_token for g, r in zip(m.rounds, reference))
            if paired
            else row["ms_per_token"] / 1e3 / ref_token
        )
        row["ttft_vs_ort"] = (
            statistics.median(g.ttft / r.ttft for g, r in zip(m.rounds, reference))
            if paired
            else row["ttft_ms"] / 1e3 / ref_ttft
        )
        assert m.first is not None
        row["first_ms_per_token"] = m.first.per_token * 1e3
        row["compiles"] = m.first.compiles
        row["rounds"] = len(m.rounds)
        row["note"] = m.note
        rows.append(row)
    return rows


def pin_to_one_cpu() -> None:
    """Runs this process on one of the CPUs it may use (where the OS allows it)."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def main() -> None:
    parser = bench_arguments(__doc__.splitlines()[0], MODELS, runs=0)
    parser.add_argument("--rounds", type=int, default=9, help="interleaved timed generations per candidate")
    parser.add_argument("--tokens", type=int, default=32, help="new tokens per generation (tiny models)")
    parser.add_argument("--medium-tokens", type=int, default=32, help="new tokens per generation (medium model)")
    parser.add_argument("--devices", nargs="+", default=["TEMPLATE", "XLA"], help="our devices to measure")
    parser.add_argument(
        "--ways", nargs="+", choices=("explicit", "stateful", "genai"), default=["explicit", "stateful", "genai"]
    )
    parser.add_argument(
        "--xla-probe-tokens", type=int, default=4, help="tokens XLA first generates, to see if it compiles per token"
    )
    parser.add_argument(
        "--medium-dir",
        default=os.environ.get("HETERO_SDK_DECODERS", str(Path.home() / ".cache" / "hetero-sdk" / "decoders")),
        help="folder of the medium Llama (llama_medium.onnx), exported there when absent",
    )
    parser.add_argument(
        "--export-python",
        default=os.environ.get("HETERO_SDK_EXPORT_PYTHON", "/work/export-venv/bin/python"),
        help="python of a torch environment that runs tools/export_decoders.py",
    )
    parser.add_argument(
        "--xla-warm",
        action="store_true",
        help="XLA keeps an executable per length (XLA_SHAPE_CACHE_SIZE) and is timed over rounds even where it "
        "compiles per token: its untimed first generation compiles every length, the timed ones run them",
    )
    parser.add_argument(
        "--xla-f32-weight",
        action="store_true",
        help="also time XLA with XLA_NATIVE_KERNELS=False ('... f32 weight': MatMulNBits on an f32 weight)",
    )
    parser.add_argument("--all-cpus", action="store_true", help="do not pin the process to one CPU")
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time by the process's CPU time (all threads), not wall time: figures a busy machine does not "
        "inflate by the time the process waits for a core",
    )
    args = parser.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.cpu_time else time.perf_counter
    if not args.all_cpus:
        pin_to_one_cpu()  # before JAX starts its CPU backend
    core = hs.Core()
    devices = [d for d in args.devices if d in core.available_devices]
    rows: list[dict[str, Any]] = []
    for model in args.models:
        if model in (MEDIUM, INT4_MEDIUM):
            path, why = medium_path(Path(args.medium_dir).expanduser(), args.export_python, model == INT4_MEDIUM)
            if path is None:
                print(f"  skipping {model}: {why}")
                rows.append({"model": model, "runtime": "-", "note": f"skipped: {why}"})
                continue
            n = args.medium_tokens
        else:
            path, n = (INT4_TINY_PATH if model == INT4 else TINY[model]), args.tokens
        decoder = read_decoder(model, path)
        print(f"== {model} ({path}): {n} tokens after {PROMPT_LENGTH}", flush=True)
        int4 = model in (INT4, INT4_MEDIUM)
        candidates: dict[str, Generate | str] = {REFERENCE: ort_candidate(decoder, 0 if int4 else None)}
        if int4:
            candidates["onnxruntime acc4"] = ort_candidate(decoder)
        candidates["openvino"] = openvino_candidate(decoder)
        for device in devices:
            ways = list(args.ways)
            if device == "XLA" and "explicit" in ways and model in (MEDIUM, INT4_MEDIUM):
                ways.remove("explicit")  # an executable per past length: on the tiny models only
            warm = args.xla_warm and device == "XLA"
            extra = {"XLA_SHAPE_CACHE_SIZE": min(1024, PROMPT_LENGTH + n + 8)} if warm else {}
            candidates |= sdk_candidates(core, decoder, device, ways, extra)
            if device == "XLA" and args.xla_f32_weight:
                off = sdk_candidates(core, decoder, device, ways, {**extra, "XLA_NATIVE_KERNELS": False})
                candidates |= {f"{name} f32 weight": generate for name, generate in off.items()}
        probed = [] if args.xla_warm else [name for name in candidates if name.startswith("XLA")]
        measured = measure_generations(candidates, decoder.prompt(), n, args.rounds, args.xla_probe_tokens, probed)
        for name, m in measured.items():
            if args.xla_warm and name.startswith("XLA") and m.first is not None and (m.first.compiles or 0) >= n - 1:
                m.note = "warm: the untimed generation compiled an executable per length, the timed ones reuse them"
        rows += rows_of(model, measured)
    columns = [
        ("model", "model"), ("runtime", "runtime"), ("tokens", "tokens"), ("ms_per_token", "ms/token"),
        ("token_vs_ort", "x ORT"), ("ttft_ms", "TTFT ms"), ("ttft_vs_ort", "TTFT x ORT"),
        ("first_ms_per_token", "1st gen ms/token"), ("compiles", "compiles"), ("note", "note"),
    ]  # fmt: skip
    print_table(columns, rows)
    write_report(args.json, args, environment(), rows=rows)


if __name__ == "__main__":
    main()
