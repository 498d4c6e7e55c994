"""Where XLA spends an inference of a real model, by kind of op, beside OpenVINO's and ONNX Runtime's
per-node profiles.

Usage::

    python bench/bench_op_profile.py --models ppocr-rec --issue-sizes
    python bench/bench_op_profile.py --models ppocr-rec --issue-sizes --top 30 --runs 60
    python bench/bench_op_profile.py --models yolov8n yolox --issue-sizes --top 400 --openvino-top 400
    python bench/bench_op_profile.py --models yolov8n --issue-sizes --runs 20 --top 300 --ort-top 300

XLA's side: the model compiled on the XLA device, ``--runs`` inferences under ``jax.profiler.trace``
with the Python tracer off (it made PP-OCRv4 rec's inference 3x slower), and each of XLA:CPU's thunks
(one fusion, library call or native kernel of the optimised HLO) timed by its ``--percentile``-th
percentile over the runs: on a machine shared with other work the low percentiles hold better than
medians, and where the pinned core is saturated ``--percentile 0`` (each op's fastest run) keeps the
preemptions out of ops longer than a millisecond. OpenVINO's side (when installed): its CPU device, one
thread, f32, ``PERF_COUNT`` on, each node's CPU time at the same percentile. ONNX Runtime's side (when
installed): its CPU session as ``bench_onnx_models.py`` makes it (one thread, its default graph
optimisations) with ``enable_profiling``, each node's kernel time (the trace's ``Node`` events named
``*_kernel_time``) at the same percentile, the first five inferences left out. All are grouped into the
kinds below and printed beside each runtime's untraced median (CPU time, one CPU), which the per-op sums
do not reach exactly: XLA's thunks leave out its dispatch, and OpenVINO's and ONNX Runtime's profiling
adds a cost per node, so compare shares and the large differences, and confirm a fix by timing the whole
model (``bench_onnx_models.py``).

Kinds: ``matrix products`` (an XLA fusion holding a dot; OpenVINO's FullyConnected, MatMul and 1x1
convolutions, which XLA lowers to products), ``convolutions`` (XLA's convolutions and the native conv2d
kernel; OpenVINO's other convolutions), ``depthwise`` (the native depthwise kernel; OpenVINO's
GroupConvolution; XLA's shifted-sum depthwise loops count as element-wise), ``other native kernels``,
``reductions`` (a fusion holding a reduce without a dot; OpenVINO's reductions, normalisations,
softmax and pooling) and ``element-wise and movement`` (the rest). ONNX Runtime's nodes are named by
OpenVINO's kinds: its ``Conv`` (also the NCHWc and ``FusedConv`` forms) is a matrix product when its kernel
is 1x1 and depthwise when each group has one input channel; its ``ReorderInput``/``ReorderOutput`` (to
and from the NCHWc layout) and activations (``QuickGelu`` is its SiLU) are element-wise and movement.
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS

import argparse  # noqa: E402
import collections  # noqa: E402
import glob  # noqa: E402
import gzip  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402
from bench_onnx_models import OPENVINO_F32, model_at, onnxruntime_session  # noqa: E402
from real_models import BENCH_MODELS, fetch  # noqa: E402

import hetero_sdk as hs  # noqa: E402

KINDS = (
    "matrix products", "convolutions", "depthwise", "other native kernels", "reductions", "element-wise and movement",
)  # fmt: skip
_OPENVINO_REDUCTIONS = ("Reduce", "MVN", "Softmax", "Pool", "NormalizeL2")


def hlo_kinds(hlo: str) -> dict[str, tuple[str, str]]:
    """Each thunk-making instruction of the optimised HLO text ``hlo`` (its entry computation) -> its kind
    and a short description (shape, then the ops of its fused computation)."""
    bodies = {m.group(1): m.group(2) for m in re.finditer(r"^%(\S+) .*?\{\n(.*?)\n\}", hlo, re.S | re.M)}
    kinds = {}
    for line in hlo[hlo.index("ENTRY") :].splitlines():
        found = re.match(r"\s*(?:ROOT )?%(\S+) = (\S+) (\S+?)\(", line)
        if found is None or found.group(3) in ("parameter", "constant", "bitcast", "get-tuple-element", "tuple"):
            continue
        name, shape, op = found.groups()
        called = re.search(r"calls=%(\S+?),", line)
        body = bodies.get(called.group(1), "") if called else line
        ops = [o for o in re.findall(r"= \S+ ([\w-]+)\(", body) if o not in ("parameter", "constant", "bitcast")]
        target = re.search(r'custom_call_target="([^"]+)"', line)
        if target is not None:
            kind = "depthwise" if "depthwise" in target.group(1) else "other native kernels"
            kind = "convolutions" if "conv2d" in target.group(1) else kind
            ops = [target.group(1)]
        elif "dot" in ops or op == "dot":
            kind = "matrix products"
        elif "convolution" in ops or op == "convolution":
            kind = "convolutions"
        elif "reduce" in ops or op == "reduce":
            kind = "reductions"
        else:
            kind = "element-wise and movement"
        kinds[name] = (kind, f"{shape.split('{')[0]} {' '.join(ops or [op])}"[:100])
    return kinds


def openvino_kind(node_type: str, exec_type: str) -> str:
    """The kind of an OpenVINO CPU node (its type and the kernel it ran)."""
    if node_type in ("FullyConnected", "MatMul") or (node_type == "Convolution" and "1x1" in exec_type):
        return "matrix products"
    if node_type in ("Convolution", "ConvolutionBackpropData"):
        return "convolutions"
    if node_type == "GroupConvolution":
        return "depthwise"
    if any(word in node_type for word in _OPENVINO_REDUCTIONS):
        return "reductions"
    return "element-wise and movement"


def onnxruntime_kind(op_name: str, shapes: list[list[int]]) -> str:
    """The kind of an ONNX Runtime CPU node (its op and its inputs' shapes), through OpenVINO's names."""
    if "Conv" in op_name and len(shapes) > 1 and len(shapes[1]) > 2:  # data, weights [O, I / group, *kernel]
        depthwise = shapes[1][1] == 1 < shapes[0][1]
        return openvino_kind("GroupConvolution" if depthwise else "Convolution", "1x1" * (max(shapes[1][2:]) == 1))
    return openvino_kind("MatMul" if "MatMul" in op_name or "Gemm" in op_name else op_name, "")


def untraced_ms(call: Callable[[], Any], runs: int) -> float:
    """The median CPU time of ``call`` in milliseconds (after a few untimed calls)."""
    for _ in range(5):
        call()
    times = []
    for _ in range(runs):
        start = time.process_time()
        call()
        times.append(time.process_time() - start)
    return float(np.median(times)) * 1e3


def xla_profile(path: Any, feeds: dict[str, np.ndarray], runs: int, percentile: float) -> tuple[float, dict]:
    """XLA's untraced median (ms) and each thunk's ``(kind, description, percentile us)`` by name."""
    compiled: Any = hs.Core().compile_model(hs.convert_model(path), "XLA")  # (an XlaCompiledModel)
    shapes = [next(feeds[n] for n in port.names if n in feeds).shape for port in compiled.inputs]
    arrays = [jax.device_put(next(feeds[n] for n in port.names if n in feeds)) for port in compiled.inputs]
    executable = compiled.jax_executable(shapes)
    kinds = hlo_kinds(executable.as_text())

    def call() -> Any:
        return jax.block_until_ready(executable(*arrays))

    median = untraced_ms(call, runs)
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    durations = collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as folder:
        with jax.profiler.trace(folder, create_perfetto_trace=True, profiler_options=options):
            for _ in range(runs):
                call()
        (trace,) = glob.glob(f"{folder}/**/*.trace.json.gz", recursive=True)
        with gzip.open(trace) as stream:
            events = json.load(stream)["traceEvents"]
    for event in events:
        if event.get("ph") == "X" and event["name"] in kinds:
            durations[event["name"]].append(event["dur"])
    return median, {n: (*kinds[n], float(np.percentile(d, percentile))) for n, d in durations.items()}


def openvino_profile(path: Any, feeds: dict[str, np.ndarray], runs: int, percentile: float) -> tuple[float, dict]:
    """OpenVINO's untraced median (ms, one thread, f32) and each node's ``(kind, type, percentile us)``."""
    import openvino as ov

    core = ov.Core()
    model = core.read_model(str(path))
    model.reshape({name: list(value.shape) for name, value in feeds.items()})
    plain = core.compile_model(model, "CPU", OPENVINO_F32).create_infer_request()
    median = untraced_ms(lambda: plain.infer(feeds), runs)
    request = core.compile_model(model, "CPU", {**OPENVINO_F32, "PERF_COUNT": True}).create_infer_request()
    times = collections.defaultdict(list)
    for index in range(runs + 5):
        request.infer(feeds)
        for row in request.get_profiling_info() if index >= 5 else ():
            times[(row.node_name, row.node_type, row.exec_type)].append(row.cpu_time.total_seconds() * 1e6)
    rows = {}
    for (name, node_type, exec_type), values in times.items():
        kind = openvino_kind(node_type, exec_type)
        rows[name] = (kind, f"{node_type} {exec_type}", float(np.percentile(values, percentile)))
    return median, rows


def onnxruntime_profile(path: Any, feeds: dict[str, np.ndarray], runs: int, percentile: float) -> tuple[float, dict]:
    """ONNX Runtime's untraced median (ms, one thread) and each node's ``(kind, op and shapes, percentile us)``."""
    plain = onnxruntime_session(path)
    median = untraced_ms(lambda: plain.run(None, feeds), runs)
    times = collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as folder:
        session = onnxruntime_session(path, enable_profiling=True, profile_file_prefix=f"{folder}/ort")
        for _ in range(runs + 5):
            session.run(None, feeds)
        with open(session.end_profiling()) as stream:
            events = json.load(stream)
    nodes = {}  # name -> its op, its inputs' shapes and its outputs'
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            name, args = event["name"].removesuffix("_kernel_time"), event["args"]
            shapes = [
                [next(iter(s.values())) for s in args.get(f"{side}_type_shape", [])] for side in ("input", "output")
            ]
            nodes[name] = args["op_name"], *shapes
            times[name].append(event["dur"])
    rows = {}
    for name, (op_name, inputs, outputs) in nodes.items():
        what = f"{op_name} {'x'.join(map(str, outputs[0]))} <- {' '.join('x'.join(map(str, s)) for s in inputs)}"
        rows[name] = (onnxruntime_kind(op_name, inputs), what, float(np.percentile(times[name][5:], percentile)))
    return median, rows


def by_kind(rows: dict) -> dict[str, float]:
    """The per-op times of ``rows`` summed by kind."""
    sums = dict.fromkeys(KINDS, 0.0)
    for kind, _, us in rows.values():
        sums[kind] += us
    return sums


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", choices=list(BENCH_MODELS), default=["ppocr-rec"])
    parser.add_argument("--issue-sizes", action="store_true", help="the performance issue's input sizes")
    parser.add_argument("--runs", type=int, default=40, help="inferences profiled (and timed untraced)")
    parser.add_argument("--percentile", type=float, default=20.0, help="of each op's times over the runs")
    parser.add_argument("--top", type=int, default=15, help="XLA's slowest thunks listed")
    parser.add_argument("--openvino-top", type=int, default=0, help="OpenVINO's slowest nodes listed")
    parser.add_argument("--ort-top", type=int, default=0, help="ONNX Runtime's slowest nodes listed")
    args = parser.parse_args()
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one CPU (before XLA sizes its thread pool)
    runtimes = {"XLA": (xla_profile, args.top), "OV": (openvino_profile, args.openvino_top)}
    runtimes["ORT"] = (onnxruntime_profile, args.ort_top)
    for key in args.models:
        model = model_at(key, args.issue_sizes)
        path = fetch(model)
        shape = "x".join(str(d) for d in next(iter(model.feeds.values())).shape)
        profiles = {}
        for name, (profile, _) in runtimes.items():
            try:
                profiles[name] = profile(path, model.feeds, args.runs, args.percentile)
            except ImportError:
                profiles[name] = float("nan"), {}
        sums = {name: by_kind(rows) for name, (_, rows) in profiles.items()}
        medians = ", ".join(f"{name} {ms:.2f} ms" for name, (ms, _) in profiles.items())
        print(f"\n{key} {shape}: untraced CPU-time medians {medians}")
        header = "".join(f" {name + ' us':>9s} {'share':>6s}" for name in profiles)
        print(f"{'kind':28s}{header}  (per-op p{args.percentile:g} sums)")
        for kind in (*KINDS, "total"):
            cells = ""
            for kinds in sums.values():
                us, total = (kinds[kind] if kind in kinds else sum(kinds.values())), sum(kinds.values())
                cells += f" {us:9.0f} {us / max(total, 1e-9):6.1%}"
            print(f"{kind:28s}{cells}")
        for name, (_, top) in runtimes.items():
            if top:
                print(f"{name}'s {top} slowest ops:")
            for op, (kind, what, us) in sorted(profiles[name][1].items(), key=lambda item: -item[1][2])[:top]:
                print(f"  {us:8.1f} us  {op[:40]:40s} {kind:24s} {what[:90]}")


if __name__ == "__main__":
    main()
