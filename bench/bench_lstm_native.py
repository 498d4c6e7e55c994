"""The LSTM layer of ddddocr's CRNN alone: XLA with the native LSTM kernel, XLA's ``lax.scan`` lowering
and ONNX Runtime's LSTM, one thread, one process, interleaved rounds.

Usage::

    python bench/bench_lstm_native.py                 # bidirectional, H = 512, 20 steps, batch 1, input 512
    python bench/bench_lstm_native.py --steps 40 --hidden 256 --direction forward --batch 4 --runs 200

The layer is one LSTMSequence with Constant weights (an ONNX ``LSTM`` node for ONNX Runtime); each call
runs it on the same input. Times are the process's CPU time per call (``time.process_time``), pinned
to one CPU.
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # before XLA sizes its thread pool

import argparse  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from hetero_sdk_jax import XlaPlugin  # noqa: E402
from timing import measure, print_table, summary  # noqa: E402

import hetero_sdk as hs  # noqa: E402
from hetero_sdk import Model, opset  # noqa: E402


def _onnx_lstm(
    w: np.ndarray, r: np.ndarray, b: np.ndarray, direction: str, steps: int, batch: int, inputs: int
) -> bytes:
    """ONNX's LSTM (gates i, o, f, c) with the same weights as OpenVINO's (f, i, c, o)."""
    from onnx import TensorProto, helper, numpy_helper

    def onnx_order(a: np.ndarray) -> np.ndarray:
        f, i, c, o = np.split(a, 4, axis=1)
        return np.concatenate([i, o, f, c], axis=1)

    size = r.shape[2]
    biases = np.concatenate([onnx_order(b), np.zeros_like(b)], axis=1)
    node = helper.make_node("LSTM", ["x", "w", "r", "b"], ["y", "ho", "co"], hidden_size=size, direction=direction)
    graph = helper.make_graph(
        [node], "lstm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, batch, inputs])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "ho", "co")],
        [numpy_helper.from_array(a, n) for a, n in ((onnx_order(w), "w"), (onnx_order(r), "r"), (biases, "b"))],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString()  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--inputs", type=int, default=512)
    parser.add_argument("--direction", default="bidirectional", choices=["forward", "reverse", "bidirectional"])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    dirs, size = (2 if args.direction == "bidirectional" else 1), args.hidden
    x = rng.normal(size=(args.batch, args.steps, args.inputs)).astype(np.float32)
    h0 = np.zeros((args.batch, dirs, size), np.float32)
    w = (rng.normal(size=(dirs, 4 * size, args.inputs)) / np.sqrt(args.inputs)).astype(np.float32)
    r = (rng.normal(size=(dirs, 4 * size, size)) / np.sqrt(size)).astype(np.float32)
    b = rng.normal(size=(dirs, 4 * size)).astype(np.float32)
    param = opset.parameter(list(x.shape), np.float32, name="x")
    lstm = opset.lstm_sequence(
        param, opset.constant(h0), opset.constant(h0), opset.constant(np.full(args.batch, args.steps, np.int32)),
        opset.constant(w), opset.constant(r), opset.constant(b), hidden_size=size, direction=args.direction,
    )  # fmt: skip
    model = Model(lstm.outputs(), [param], name="crnn-lstm-layer")
    core = hs.Core(plugins={"XLA": XlaPlugin}, autoload=False)
    native: Any = core.compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": True})
    scan = core.compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": False})
    assert "hetero_sdk_lstm_sequence" in native.jax_executable().as_text(), "the native kernel did not build"
    candidates = {"XLA native": lambda: native([x]), "XLA lax.scan": lambda: scan([x])}
    y_native, y_scan = native([x]).to_tuple()[0], scan([x]).to_tuple()[0]
    errors = {"XLA native": float(np.abs(y_native - y_scan).max()), "XLA lax.scan": 0.0}
    try:
        import onnxruntime as ort
    except ImportError:
        ort = None
    if ort is not None:
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        session = ort.InferenceSession(
            _onnx_lstm(w, r, b, args.direction, args.steps, args.batch, args.inputs),
            options,
            providers=["CPUExecutionProvider"],
        )
        feed = {"x": np.ascontiguousarray(x.transpose(1, 0, 2))}
        y_ort = session.run(["y"], feed)[0].transpose(2, 1, 0, 3)  # [seq, dirs, batch, H] -> [batch, dirs, seq, H]
        errors["ONNX Runtime"] = float(np.abs(y_ort - y_scan).max())
        candidates["ONNX Runtime"] = lambda: session.run(None, feed)
    times = measure(candidates, args.runs, warmup=5, clock=time.process_time)
    base = summary(times["ONNX Runtime"])["median_us"] if "ONNX Runtime" in times else None
    rows = []
    for name, values in times.items():
        stats = summary(values)
        rows.append({
            "runtime": name, "median us": f"{stats['median_us']:.0f}", "p90 us": f"{stats['p90_us']:.0f}",
            "x ORT": f"{stats['median_us'] / base:.2f}" if base else "-", "max |err| vs scan": f"{errors[name]:.1e}",
        })  # fmt: skip
    print(
        f"LSTM {args.direction}, steps {args.steps}, batch {args.batch}, input {args.inputs}, hidden {size}; CPU time"
    )
    print_table([(k, k) for k in rows[0]], rows)


if __name__ == "__main__":
    main()
