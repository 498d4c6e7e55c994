"""PIPELINE_PARALLEL's throughput: one model over four devices, four requests in flight against one at a
time.

Usage::

    python bench/bench_pipeline.py                       # four TEMPLATE devices
    python bench/bench_pipeline.py --xla                 # four XLA CPU devices (forced host devices)
    python bench/bench_pipeline.py --requests 64 --width 768
    python bench/bench_pipeline.py --decoder             # a stateful decoder by layers over four XLA devices

An MLP of eight MatMul + Relu layers is split by ``MODEL_DISTRIBUTION_POLICY=PIPELINE_PARALLEL`` into four
stages (equal shares: the devices report no memory); one thread per device (BLAS variables, XLA's
single-threaded Eigen). ``sequential`` runs the requests one after the other with ``infer``; ``pipelined``
keeps N = 4 requests in flight with an ``AsyncInferQueue``; ``one device`` runs the whole model on device 0.
Outputs are checked against numpy first. The table gives inferences per second and the speed-up over
``sequential``.

``--decoder``: ``tests/data/decoders/llama.onnx`` (4 layers) made stateful and split by layers over four
XLA devices by ``DEVICE_TOTAL_MEM_SIZE`` budgets (a stage per layer, each holding its layers' caches);
one sequence against ``--sequences`` sequences in flight, each on its own infer request driven by its own
thread (greedy, ``--tokens`` tokens after an 8-token prompt), and the whole model on ``XLA.0``. Tokens
are checked against ONNX Runtime's when it is installed; the table gives generated tokens per second.
"""

from __future__ import annotations

import os
import sys

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS
if "--xla" in sys.argv or "--decoder" in sys.argv:  # before jax initialises
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4 --xla_cpu_multi_thread_eigen=false"
    os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from timing import environment, print_table  # noqa: E402

import hetero_sdk as hs  # noqa: E402
from hetero_sdk import opset  # noqa: E402
from hetero_sdk.hetero.plugin import HeteroPlugin  # noqa: E402
from template_plugin import TemplatePlugin  # noqa: E402

STAGES = 4
DECODER = Path(__file__).resolve().parents[1] / "tests" / "data" / "decoders" / "llama.onnx"
DECODER_BUDGETS = (300_000, 170_000, 170_000, 300_000)
"""Bytes per device: llama.onnx's layers have 147,584 bytes of weights, its embedding and head 131,072."""
PROMPT = [5, 17, 300, 42, 7, 111, 256, 9]


def mlp(width: int, batch: int, layers: int = 8) -> tuple[hs.Model, list[np.ndarray]]:
    """The model and its weights (for the numpy check)."""
    rng = np.random.default_rng(0)
    weights = [(rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32) for _ in range(layers)]
    h = x = opset.parameter([batch, width], hs.Type.f32, name="x")
    for i, w in enumerate(weights):
        h = opset.relu(opset.matmul(h, opset.constant(w, name=f"w{i}"), name=f"mm{i}"), name=f"relu{i}")
    return hs.Model([h], [x], name="mlp"), weights


def throughput(compiled: Any, inputs: list[np.ndarray], in_flight: int) -> float:
    """Inferences per second over ``inputs``, with ``in_flight`` async requests (0: sync, one at a time)."""
    started = time.perf_counter()
    if in_flight == 0:
        request = compiled.create_infer_request()
        for x in inputs:
            request.infer([x])
    else:
        queue = hs.AsyncInferQueue(compiled, in_flight)
        for x in inputs:
            queue.start_async([x])
        queue.wait_all()
    return len(inputs) / (time.perf_counter() - started)


def generate(compiled: Any, prompts: list[list[int]], tokens: int) -> tuple[float, list[list[int]]]:
    """Tokens per second generating ``tokens`` greedy tokens after each prompt, all sequences at once (one
    request and one thread per sequence), and the tokens."""
    out: list[list[int]] = [[] for _ in prompts]
    requests = [compiled.create_infer_request() for _ in prompts]

    def decode(i: int) -> None:
        ids, total = np.array([prompts[i]]), len(prompts[i])
        for _ in range(tokens):
            feeds = {"input_ids": ids, "attention_mask": np.ones((1, total), np.int64)}
            out[i].append(int(requests[i].infer(feeds)["logits"][0, -1].argmax()))
            ids, total = np.array([[out[i][-1]]]), total + 1

    threads = [threading.Thread(target=decode, args=(i,)) for i in range(len(prompts))]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return len(prompts) * tokens / (time.perf_counter() - started), out


def ort_tokens(prompt: list[int], tokens: int) -> list[int] | None:
    """ONNX Runtime's greedy tokens (the reference), None when it is not installed."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(DECODER), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    pasts = [i.name for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    kv_heads, head_dim = (session.get_inputs()[2].shape[i] for i in (1, 3))
    feeds: dict[str, np.ndarray] = {"input_ids": np.array([prompt])}
    feeds |= {name: np.zeros((1, kv_heads, 0, head_dim), np.float32) for name in pasts}
    total, out = 0, list[int]()
    while len(out) < tokens:
        total += feeds["input_ids"].shape[1]
        feeds["attention_mask"] = np.ones((1, total), np.int64)
        results = dict(zip(names, session.run(names, feeds)))
        out.append(int(results["logits"][0, -1].argmax()))
        feeds = {"input_ids": np.array([[out[-1]]])}
        feeds |= {name: results[name.replace("past_key_values", "present")] for name in pasts}
    return out


def decoder_bench(args: argparse.Namespace) -> None:
    """The ``--decoder`` table (see the module's docstring)."""
    from hetero_sdk_jax import XlaPlugin

    core = hs.Core(plugins={"HETERO": HeteroPlugin(), "XLA": XlaPlugin()}, autoload=False)
    devices = [f"XLA.{i}" for i in range(STAGES)]
    config = {
        "MODEL_DISTRIBUTION_POLICY": {"PIPELINE_PARALLEL"},
        "DEVICE_PROPERTIES": {d: {"DEVICE_TOTAL_MEM_SIZE": b} for d, b in zip(devices, DECODER_BUDGETS)},
    }
    model = hs.make_stateful(core.read_model(DECODER))
    split: Any = core.compile_model(model, "HETERO:" + ",".join(devices), config)
    alone = core.compile_model(model, "XLA.0")
    print(split.placement_report().to_text())
    prompts = [[(t + 31 * i) % 512 for t in PROMPT] for i in range(args.sequences)]
    reference = ort_tokens(prompts[0], args.tokens)
    variants = {
        "XLA.0 alone, 1 sequence": (alone, prompts[:1]),
        f"XLA.0 alone, {args.sequences} sequences": (alone, prompts),
        "4 stages, 1 sequence": (split, prompts[:1]),
        f"4 stages, {args.sequences} sequences": (split, prompts),
    }
    figures = {}
    for name, (compiled, some) in variants.items():
        generate(compiled, some, args.tokens)  # compiles each stage's executables
        runs = [generate(compiled, some, args.tokens) for _ in range(args.repeats)]
        if reference is not None:
            assert all(out[0] == reference for _, out in runs), (name, runs[0][1][0], reference)
        figures[name] = float(np.median([rate for rate, _ in runs]))
    base = figures["4 stages, 1 sequence"]
    rows = [{"variant": name, "per_s": value, "speedup": value / base} for name, value in figures.items()]
    print(f"\nllama.onnx (4 layers, hidden 64) stateful, {args.tokens} greedy tokens per sequence")
    print_table([("variant", "variant"), ("per_s", "tokens/s"), ("speedup", "vs 4 stages, 1 sequence")], rows)
    print(environment())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--xla", action="store_true", help="four XLA CPU devices instead of four TEMPLATE devices")
    parser.add_argument("--requests", type=int, default=48)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3, help="best of this many passes (--decoder: median)")
    parser.add_argument("--decoder", action="store_true", help="a stateful decoder split by layers over 4 XLA devices")
    parser.add_argument("--sequences", type=int, default=4, help="--decoder: sequences in flight")
    parser.add_argument("--tokens", type=int, default=48, help="--decoder: greedy tokens per sequence")
    args = parser.parse_args()
    if args.decoder:
        decoder_bench(args)
        return
    plugins: dict[str, Any] = {"HETERO": HeteroPlugin()}
    if args.xla:
        from hetero_sdk_jax import XlaPlugin

        plugins["XLA"], kind = XlaPlugin(), "XLA"
    else:
        plugins["TEMPLATE"], kind = TemplatePlugin(num_devices=STAGES), "TEMPLATE"
    core = hs.Core(plugins=plugins, autoload=False)
    model, weights = mlp(args.width, args.batch)
    devices = ",".join(f"{kind}.{i}" for i in range(STAGES))
    one_thread = {"INFERENCE_NUM_THREADS": 1} if kind == "TEMPLATE" else {}
    config = {"MODEL_DISTRIBUTION_POLICY": {"PIPELINE_PARALLEL"}, "DEVICE_PROPERTIES": {kind: one_thread}}
    split: Any = core.compile_model(model, f"HETERO:{devices}", config)
    alone = core.compile_model(model, f"{kind}.0", one_thread)
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((args.batch, args.width)).astype(np.float32) for _ in range(args.requests)]
    expected = inputs[0]
    for w in weights:
        expected = np.maximum(expected @ w, 0)
    np.testing.assert_allclose(split(inputs[0])[0], expected, rtol=1e-3, atol=1e-4)
    print(split.placement_report().to_text())
    variants = {"one device": (alone, 0), "sequential": (split, 0), f"pipelined ({STAGES} in flight)": (split, STAGES)}
    figures = {name: max(throughput(c, inputs, n) for _ in range(args.repeats)) for name, (c, n) in variants.items()}
    base = figures["sequential"]
    rows = [{"variant": name, "per_s": value, "speedup": value / base} for name, value in figures.items()]
    print(f"\n{kind} x {STAGES}, MLP 8 x [{args.batch}, {args.width}] MatMul + Relu, {args.requests} requests")
    print_table([("variant", "variant"), ("per_s", "inferences/s"), ("speedup", "vs sequential")], rows)
    print(environment())


if __name__ == "__main__":
    main()
