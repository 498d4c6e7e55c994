"""Loading a large ONNX model: read + compile time and peak memory of each runtime, in a fresh process each.

Usage::

    python bench/bench_model_load.py --model /tmp/medium/llama_medium.onnx
    python bench/bench_model_load.py --model decoder.onnx --runs 5 --runtimes onnxruntime TEMPLATE

Each run is a new Python process (``--child``) that imports its runtime, then times reading and
compiling the model (ONNX Runtime: creating its session; TEMPLATE and XLA: ``read_model`` then
``compile_model``) and one inference (for a decoder with a KV cache: one decode step after ``--past``
cached tokens), and reports its peak resident memory (``VmHWM`` on Linux, else ``ru_maxrss``: the
imports, the weights and every copy made of them). ``XLA+cache`` compiles with ``CACHE_DIR`` set to a
folder that one untimed process filled first: what a second process pays with a warm cache. The table
gives the median of ``--runs`` processes per runtime (the runtimes interleaved) and each median's ratio
to ONNX Runtime's: ``load+compile`` (read + compile), ``first step`` (the first inference, where XLA
compiles a model with dynamic inputs for their shapes) and ``ready`` (both).

One thread everywhere: the BLAS variables at 1, ONNX Runtime's intra- and inter-op pools at 1,
TEMPLATE's ``INFERENCE_NUM_THREADS`` 1, XLA's Eigen pool off, and each process pinned to one CPU
(XLA:CPU sizes its pool by the CPUs the process may use).

The medium decoder of the generative issue (Llama, 8 layers, hidden 512, vocab 32,000, 217 MB of
f32 weights in external data) is made by the decoder export script; any ONNX file works: the inputs
named ``past_key_values.*`` get ``--past`` positions, ``attention_mask`` one more, other dynamic
dimensions 1.
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS (the children inherit them)
os.environ["XLA_FLAGS"] = " ".join(
    [os.environ.get("XLA_FLAGS", ""), "--xla_cpu_multi_thread_eigen=false"]
).strip()  # before jax starts its backend

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from timing import peak_rss_bytes, print_table, write_report  # noqa: E402

RUNTIMES = ("onnxruntime", "TEMPLATE", "XLA", "XLA+cache")
ONE_THREAD = {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY"}
_DTYPES = {1: "float32", 6: "int32", 7: "int64", 9: "bool", 10: "float16", 11: "float64"}


def feed_spec(path: Path, past: int) -> list[dict[str, Any]]:
    """Name, numpy dtype and shape of each input of the ONNX file at ``path`` (its weights not read):
    a decoder's cache inputs get ``past`` positions, its attention mask ``past + 1``, other dynamic
    dimensions 1."""
    import onnx

    proto = onnx.load(str(path), load_external_data=False)
    initializers = {t.name for t in proto.graph.initializer}
    spec = []
    for value in proto.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
        if value.name.startswith("past_key_values"):
            shape = [d if d is not None else (1 if i == 0 else past) for i, d in enumerate(dims)]
        elif value.name == "attention_mask":
            shape = [d if d is not None else (1 if i == 0 else past + 1) for i, d in enumerate(dims)]
        else:
            shape = [1 if d is None else d for d in dims]
        spec.append({"name": value.name, "dtype": _DTYPES[tensor.elem_type], "shape": shape})
    return spec


def make_feeds(spec: list[dict[str, Any]]) -> dict[str, Any]:
    """Inputs of the shapes in ``spec`` (seeded): ones for masks, small ids for integers, normal floats."""
    import numpy as np

    rng = np.random.default_rng(0)
    feeds = {}
    for entry in spec:
        shape, dtype = tuple(entry["shape"]), np.dtype(entry["dtype"])
        if entry["name"] == "attention_mask" or dtype == np.bool_:
            feeds[entry["name"]] = np.ones(shape, dtype)
        elif dtype.kind in "iu":
            feeds[entry["name"]] = rng.integers(1, 100, shape).astype(dtype)
        else:
            feeds[entry["name"]] = rng.standard_normal(shape).astype(dtype)
    return feeds


def child(runtime: str, model: str, spec: list[dict[str, Any]], cache_dir: str | None) -> dict[str, Any]:
    """Loads ``model`` on ``runtime`` in this process and runs it once; the seconds of each phase
    and the process's peak resident bytes."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    feeds = make_feeds(spec)
    if runtime == "onnxruntime":
        import onnxruntime as ort

        imported = peak_rss_bytes()
        start, cpu_start = time.perf_counter(), time.process_time()
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        read = compiled = time.perf_counter()
        cpu_compiled = time.process_time()
        session.run(None, feeds)
    else:
        import hetero_sdk as hs

        if runtime == "TEMPLATE":
            from template_plugin import TemplatePlugin

            core, device, config = hs.Core(plugins={"TEMPLATE": TemplatePlugin}, autoload=False), "TEMPLATE", ONE_THREAD
        else:
            from hetero_sdk_jax import XlaPlugin

            core, device, config = hs.Core(plugins={"XLA": XlaPlugin}, autoload=False), "XLA", {}
            if cache_dir:
                config = {"CACHE_DIR": cache_dir}
        imported = peak_rss_bytes()
        start, cpu_start = time.perf_counter(), time.process_time()
        read_model = core.read_model(model)
        read = time.perf_counter()
        compiled_model = core.compile_model(read_model, device, config)
        compiled, cpu_compiled = time.perf_counter(), time.process_time()
        del read_model
        compiled_model.create_infer_request().infer(feeds)
    stepped, cpu_stepped = time.perf_counter(), time.process_time()
    return {
        "read_s": read - start,
        "compile_s": compiled - read,
        "load_s": compiled - start,
        "step_s": stepped - compiled,
        "ready_s": stepped - start,
        "load_cpu_s": cpu_compiled - cpu_start,
        "ready_cpu_s": cpu_stepped - cpu_start,
        "imports_bytes": imported,
        "peak_bytes": peak_rss_bytes(),
    }


def run_child(runtime: str, model: Path, spec: list[dict[str, Any]], cache_dir: str | None) -> dict[str, Any]:
    """One fresh process of :func:`child`; its report."""
    command = [sys.executable, __file__, "--child", runtime, "--model", str(model), "--spec", json.dumps(spec)]
    if cache_dir:
        command += ["--cache-dir", cache_dir]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{runtime} failed (status {done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="the .onnx file (external data beside it)")
    parser.add_argument("--runtimes", nargs="+", choices=RUNTIMES, default=list(RUNTIMES))
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per runtime (the median is reported)")
    parser.add_argument("--past", type=int, default=16, help="cached positions of a decoder's one decode step")
    parser.add_argument("--json", help="also write the rows as JSON to this file")
    parser.add_argument("--child", choices=RUNTIMES, help=argparse.SUPPRESS)
    parser.add_argument("--spec", help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child.split("+")[0], args.model, json.loads(args.spec), args.cache_dir)))
        return
    model = Path(args.model).resolve()
    spec = feed_spec(model, args.past)
    runtimes = list(args.runtimes)
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in runtimes}
    with tempfile.TemporaryDirectory(prefix="hs-load-cache-") as cache_dir:
        if "XLA+cache" in runtimes:
            run_child("XLA", model, spec, cache_dir)  # fills the cache (untimed)
        for run in range(args.runs):
            shift = run % len(runtimes)
            for name in runtimes[shift:] + runtimes[:shift]:
                report = run_child(name, model, spec, cache_dir if name == "XLA+cache" else None)
                results[name].append(report)
                print(f"  {name} run {run + 1}: {json.dumps(report)}", flush=True)
    rows = _rows(results)
    columns = [
        ("runtime", "runtime"), ("load_s", "load+compile s"), ("load_s_vs_ort", "x ORT"),
        ("load_cpu_s", "(CPU s)"), ("load_cpu_s_vs_ort", "x ORT"), ("step_s", "first step s"), ("ready_s", "ready s"),
        ("ready_s_vs_ort", "x ORT"), ("ready_cpu_s", "(CPU s)"), ("ready_cpu_s_vs_ort", "x ORT"),
        ("peak_bytes", "peak RSS MiB"), ("peak_bytes_vs_ort", "x ORT"), ("imports_bytes", "after imports MiB"),
    ]  # fmt: skip
    print(f"{model.name}, {args.runs} processes per runtime, medians")
    print_table(columns, rows)
    if args.json:
        write_report(args.json, args, {"python": sys.version.split()[0], "cpus": os.cpu_count()}, rows=rows)


def _rows(results: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    medians = {
        name: {key: statistics.median(r[key] for r in reports) for key in reports[0]}
        for name, reports in results.items()
    }
    reference = medians.get("onnxruntime")
    rows = []
    for name, values in medians.items():
        row: dict[str, Any] = {"runtime": name, **values}
        for key in ("load_s", "ready_s", "load_cpu_s", "ready_cpu_s", "peak_bytes"):
            row[f"{key}_vs_ort"] = values[key] / reference[key] if reference else None
        rows.append(row)
    return rows


if __name__ == "__main__":
    main()
