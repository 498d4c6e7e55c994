"""One MatMulNBits decode step (com.microsoft, int4, block 32, K = N = 2048, one row): TEMPLATE and XLA
beside ONNX Runtime, one thread.

Usage::

    python bench/bench_matmul_nbits.py                       # the decode step, 4 bits, block 32
    python bench/bench_matmul_nbits.py --rows 16 --cpu-time --json bench/results/matmul_nbits.json

The op is written as onnxruntime-genai's builder writes it (packed weight, scales and packed zero points as
initializers, so Constants in the SDK). Candidates:

- ``onnxruntime acc0``: ONNX Runtime's CPU kernel at ``accuracy_level=0`` (f32 activations, the contract);
  ``onnxruntime acc4``: at ``accuracy_level=4``, what the builder writes for CPU (activations quantized to
  int8: not the contract, shown as the speed ONNX Runtime reaches);
- ``XLA``: XLA's native CPU kernel (``hetero_sdk_jax.native``, the default where it builds): the packed
  weight read as it is, unpacked in registers each call;
- ``TEMPLATE``, ``XLA f32 weight``: the weight dequantized once per compiled model, one f32 product per
  call (``XLA f32 weight``: ``XLA_NATIVE_KERNELS=False``, XLA's own lowering);
- ``TEMPLATE per call``, ``XLA per call``: the same op with the packed weight fed as a model input (not a
  Constant), so each call unpacks and dequantizes it: what both devices did for every weight before.

Every candidate's output is checked against numpy in f64 (the dequantized weight written here) before
it is timed. Timing: interleaved rounds (``timing.measure``), medians, the ratio to ``onnxruntime acc0``;
``weight MiB`` is what the device holds for the weight (the packed bytes, or the f32 weight).
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS

import argparse  # noqa: E402
import functools  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from timing import environment, measure, print_table, write_report  # noqa: E402

REFERENCE = "onnxruntime acc0"


def quantized(k: int, n: int, block: int, seed: int = 0) -> dict[str, np.ndarray]:
    """A packed int4 weight with scales and packed zero points, and the f64 weight they stand for."""
    rng = np.random.default_rng(seed)
    blocks = k // block
    q = rng.integers(0, 16, (n, k), dtype=np.uint8)
    zero = rng.integers(0, 16, (n, blocks), dtype=np.uint8)
    scales = rng.uniform(0.01, 0.1, (n, blocks)).astype(np.float32)
    dense = (q.reshape(n, blocks, block).astype(np.float64) - zero[..., None]) * scales[..., None]
    packed_zero = zero[:, 0::2] | (zero[:, 1::2] << 4) if blocks > 1 else zero
    return {
        "B": (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8).reshape(n, blocks, block // 2),
        "scales": scales.reshape(-1),
        "zero_points": packed_zero.astype(np.uint8),
        "dense": dense.reshape(n, k),
    }


def model(weights: dict[str, np.ndarray], k: int, n: int, block: int, accuracy_level: int, weight_input: bool) -> Any:
    """One MatMulNBits node; the weight inputs initializers, or graph inputs with ``weight_input``."""
    from onnx import TensorProto, helper, numpy_helper

    names = ["B", "scales", "zero_points"]
    attrs: dict[str, Any] = {"K": k, "N": n, "bits": 4, "block_size": block, "accuracy_level": accuracy_level}
    node = helper.make_node("MatMulNBits", ["A", *names], ["Y"], domain="com.microsoft", **attrs)
    inputs = [helper.make_tensor_value_info("A", TensorProto.FLOAT, ["M", k])]
    initializers = []
    for name in names:
        value = weights[name]
        if weight_input:
            inputs.append(
                helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype), value.shape)
            )
        else:
            initializers.append(numpy_helper.from_array(value, name))
    output = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["M", n])
    graph = helper.make_graph([node], "matmul_nbits", inputs, [output], initializers)
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def candidates(args: argparse.Namespace) -> tuple[dict[str, Callable[[], Any]], dict[str, int], np.ndarray]:
    """The calls to time, the weight bytes each holds, and the expected output."""
    import onnxruntime as ort

    import hetero_sdk as hs

    k = n = args.size
    weights = quantized(k, n, args.block)
    a = np.random.default_rng(1).standard_normal((args.rows, k)).astype(np.float32)
    feeds = {name: weights[name] for name in ("B", "scales", "zero_points")}
    packed = sum(v.nbytes for v in feeds.values())
    calls: dict[str, Callable[[], Any]] = {}
    held: dict[str, int] = {}
    for level in (0, 4):
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        session = ort.InferenceSession(model(weights, k, n, args.block, level, False).SerializeToString(), options)
        calls[f"onnxruntime acc{level}"] = functools.partial(session.run, None, {"A": a})
        held[f"onnxruntime acc{level}"] = packed
    core = hs.Core()
    compiled = core.compile_model(model(weights, k, n, args.block, 0, False), "XLA")
    if "hetero_sdk_matmul_nbits" not in compiled.jax_executable([[args.rows, k]]).as_text():
        raise SystemExit("XLA: the native MatMulNBits kernel did not build here (see the log); no native figure")
    request = compiled.create_infer_request()
    calls["XLA"] = functools.partial(request.infer, {"A": a})
    held["XLA"] = feeds["B"].nbytes + 5 * n * (k // args.block)  # packed bytes, f32 scales, u8 zero points
    for device in ("TEMPLATE", "XLA"):
        config = {"INFERENCE_NUM_THREADS": 1} if device == "TEMPLATE" else {"XLA_NATIVE_KERNELS": False}
        name = "TEMPLATE" if device == "TEMPLATE" else "XLA f32 weight"
        compiled = core.compile_model(model(weights, k, n, args.block, 0, False), device, config)
        request = compiled.create_infer_request()
        calls[name] = functools.partial(request.infer, {"A": a})
        held[name] = 4 * n * k
        compiled = core.compile_model(model(weights, k, n, args.block, 0, True), device, config)
        request = compiled.create_infer_request()
        per_call = {"A": a, **{name: value.copy() for name, value in feeds.items()}}
        calls[f"{device} per call"] = functools.partial(request.infer, per_call)
        held[f"{device} per call"] = packed
    return calls, held, a.astype(np.float64) @ weights["dense"].T


def main() -> None:
    """Checks every candidate's output, then times them and prints the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2048, help="K = N")
    parser.add_argument("--block", type=int, default=32)
    parser.add_argument("--rows", type=int, default=1, help="M: 1 is a decode step")
    parser.add_argument("--runs", type=int, default=60, help="timed calls per candidate")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--cpu-time", action="store_true", help="time the process's CPU time, not wall time")
    parser.add_argument("--all-cpus", action="store_true", help="do not pin the process to one CPU")
    parser.add_argument("--json", help="also write the rows as JSON to this file")
    args = parser.parse_args()
    if not args.all_cpus and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # XLA:CPU sizes its pool by these
    calls, held, expected = candidates(args)
    scale = float(np.max(np.abs(expected)))
    for name, call in calls.items():
        error = float(np.max(np.abs(np.asarray(call()[0], np.float64) - expected))) / scale
        limit = 2e-2 if name == "onnxruntime acc4" else 1e-5
        if error > limit:
            raise SystemExit(f"{name}: output differs from numpy by {error:.2e} of its range (limit {limit})")
    clock = time.process_time if args.cpu_time else time.perf_counter
    times = measure(calls, args.runs, args.warmup, clock=clock)
    base = statistics.median(times[REFERENCE])
    rows = [
        {
            "candidate": name,
            "median_us": statistics.median(t) * 1e6,
            "ratio": statistics.median(t) / base,
            "weight_bytes": held[name],
        }
        for name, t in times.items()
    ]
    print(f"MatMulNBits int4, block {args.block}, K = N = {args.size}, {args.rows} row(s), one thread, "
          f"{'CPU' if args.cpu_time else 'wall'} time, load {os.getloadavg()[0]:.1f}")  # fmt: skip
    columns = [("candidate", "candidate"), ("median_us", "median us"), ("ratio", f"x {REFERENCE}")]
    print_table([*columns, ("weight_bytes", "weight MiB")], rows)
    write_report(args.json, args, environment(), rows=rows)


if __name__ == "__main__":
    main()
