"""The ONNX backend node tests as an outside measure of coverage: every case the installed ``onnx``
knows, run on one device and compared with the case's expected outputs.

Usage::

    python bench/onnx_node_tests.py                          # TEMPLATE
    python bench/onnx_node_tests.py --device XLA --jobs 4
    python bench/onnx_node_tests.py --device onnxruntime     # the reference column
    python bench/onnx_node_tests.py --include 'test_(lstm|gru)' --json results.json

The cases come from ``onnx/backend/test/data/node/*/`` (``model.onnx`` with
``test_data_set_*/input_*.pb`` and ``output_*.pb``) when the wheel ships that folder or ``--data``
names one; otherwise (onnx 1.23 wheels ship none) they are regenerated in memory from the wheel's
``onnx.backend.test.case.node`` generators, as ONNX's own ``BackendTest`` does.

Each output is compared with ``np.allclose(rtol=1e-3, atol=1e-5)`` (NaNs equal), after its dtype and
shape. A case is *passed*, *failed* (wrong dtype, shape or values), *unsupported* (the frontend or
the device's ``compile_model`` raised ``UnsupportedOperationError``; for onnxruntime a
``NOT_IMPLEMENTED`` kernel) or an *error* (anything else, and a case that ran past ``--timeout``).
Cases run in worker processes, so a case that hangs or crashes is killed and counted without stopping the run.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import logging
import multiprocessing as mp
import os
import re
import sys
import time
import traceback
import warnings
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.loader import load_node_model_tests

import hetero_sdk as hs
from hetero_sdk.errors import UnsupportedOperationError

try:
    import onnxruntime as ort
except ImportError:  # only --device onnxruntime needs it
    ort = None

RTOL, ATOL = 1e-3, 1e-5
"""The comparison of the spec (``docs``: external conformance)."""

WHEEL_DATA = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
"""Where an onnx wheel that ships the node test data keeps it."""

Case = tuple[str, onnx.ModelProto, list[tuple[list[Any], list[Any]]]]
"""A case: its name, its model, and its data sets as (inputs, expected outputs)."""


def _value(value: Any) -> Any:
    """A data set value as numpy (TensorProto) or as it is (sequences, optionals)."""
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, np.generic):
        return np.asarray(value)
    return value


def _read_dir(case_dir: str) -> Case:
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    sets = []
    for data_dir in sorted(glob.glob(os.path.join(case_dir, "test_data_set_*"))):

        def read(kind: str, directory: str = data_dir) -> list[Any]:
            files = glob.glob(os.path.join(directory, f"{kind}_*.pb"))
            return [
                numpy_helper.to_array(onnx.load_tensor(os.path.join(directory, f"{kind}_{i}.pb")))
                for i in range(len(files))
            ]

        sets.append((read("input"), read("output")))
    return os.path.basename(case_dir), model, sets


def load_cases(data: str | None, include: str | None) -> list[Case]:
    """The node cases, by name, from ``data`` (or the wheel's folder) or regenerated in memory."""
    pattern = re.compile(include) if include else None
    folder = data or (WHEEL_DATA if os.path.isdir(WHEEL_DATA) else None)
    cases: list[Case] = []
    if folder:
        for case_dir in sorted(glob.glob(os.path.join(folder, "*", "model.onnx"))):
            name = os.path.basename(os.path.dirname(case_dir))
            if pattern is None or pattern.search(name):
                cases.append(_read_dir(os.path.dirname(case_dir)))
        return cases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators divide by zero on purpose
        for test in load_node_model_tests():
            if pattern is None or pattern.search(test.name):
                assert test.model is not None and test.data_sets is not None
                sets = [([_value(v) for v in ins], [_value(v) for v in outs]) for ins, outs in test.data_sets]
                cases.append((test.name, test.model, sets))
    return sorted(cases, key=lambda c: c[0])


def compare(got: list[Any], expected: list[Any]) -> str | None:
    """Why ``got`` differs from ``expected``, or None when each output matches."""
    if len(got) != len(expected):
        return f"{len(got)} outputs, expected {len(expected)}"
    for index, (g, e) in enumerate(zip(got, expected)):
        if not isinstance(e, np.ndarray):
            return f"output {index}: a {type(e).__name__} is expected (sequence or optional)"
        g = np.asarray(g)
        if g.dtype != e.dtype:
            return f"output {index}: dtype {g.dtype}, expected {e.dtype}"
        if g.shape != e.shape:
            return f"output {index}: shape {g.shape}, expected {e.shape}"
        if e.dtype.name == "bfloat16":  # ml_dtypes' kind is "V": compare as floats, NaNs equal
            g, e = g.astype(np.float32), e.astype(np.float32)
        if e.dtype.kind in "fc":
            if not np.allclose(g, e, rtol=RTOL, atol=ATOL, equal_nan=True):
                worst = float(np.nanmax(np.abs(g.astype(np.float64) - e.astype(np.float64)), initial=0.0))
                return f"output {index}: values differ (max abs diff {worst:.3g})"
        elif not np.array_equal(g, e):
            return f"output {index}: values differ"
    return None


# -- running one case (in a worker) -------------------------------------------------------------------


class _Runner:
    """Runs a case's model on ``device``: a hetero-sdk device name, or ``onnxruntime``."""

    def __init__(self, device: str) -> None:
        self.device = device
        if device == "onnxruntime" and ort is None:
            raise SystemExit("--device onnxruntime needs the onnxruntime package")
        if device != "onnxruntime":
            self.core = hs.Core()

    def run(self, model: onnx.ModelProto, sets: list[tuple[list[Any], list[Any]]]) -> dict[str, Any]:
        names = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
        if self.device == "onnxruntime":
            try:
                session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            except Exception as error:  # ORT raises its own classes; NOT_IMPLEMENTED marks a missing kernel
                status = (
                    "unsupported" if "NOT_IMPLEMENTED" in str(error) or "NotImplemented" in repr(error) else "error"
                )
                return {"status": status, "reason": _short(error), "ops": _op_types(model)}

            def infer(inputs: list[Any]) -> list[Any]:
                return list(session.run(None, {n: v for n, v in zip(names, inputs) if v is not None}))
        else:
            try:  # the frontend, or a device that declines ops (XLA: data-dependent output shapes)
                converted = hs.convert_model(model)
                compiled = self.core.compile_model(converted, self.device)
            except UnsupportedOperationError as error:
                return {"status": "unsupported", "reason": _short(error), "ops": _unsupported_ops(error, model)}

            def infer(inputs: list[Any]) -> list[Any]:
                results = compiled({n: v for n, v in zip(names, inputs) if v is not None})
                return list(results.to_tuple())

        for inputs, expected in sets:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                problem = compare(infer(inputs), expected)
            if problem:
                return {"status": "failed", "reason": problem}
        return {"status": "passed"}


def _short(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}".strip()
    return text if len(text) < 400 else text[:400] + "..."


def _op_types(model: onnx.ModelProto) -> list[str]:
    return sorted({n.op_type for n in model.graph.node})


def _unsupported_ops(error: BaseException, model: onnx.ModelProto) -> list[str]:
    """What an UnsupportedOperationError names: the op types without a rule, else the op a rule
    declined (an attribute or input it does not take), else an element type, else the model's op types."""
    text = str(error)
    missing = re.findall(r"([\w.:]+) \(domain ([\w.]*), opset \d+\) node", text)
    if missing:
        return sorted({op if domain in ("", "ai.onnx") else f"{domain}:{op}" for op, domain in missing})
    declined = re.findall(r"ONNX ([\w.:]+) '[^']*' \([\w.]+ opset \d+\)", text)
    declined = declined or re.findall(r"(?:: |; )(\w+) '[^']*' \((?!ai\.onnx)", text.split(" op(s) of model ")[-1])
    if declined:
        return sorted(set(declined))
    types = re.findall(r"element type (\w+)", text)
    if types:
        return [f"element type {types[0]}"]
    return _op_types(model)


def _worker(device: str, data: str | None, include: str | None, conn: Connection) -> None:
    logging.disable(logging.WARNING)
    cases = {name: (model, sets) for name, model, sets in load_cases(data, include)}
    runner = _Runner(device)
    while True:
        name = conn.recv()
        if name is None:
            return
        model, sets = cases[name]
        start = time.perf_counter()
        try:
            result = runner.run(model, sets)
        except Exception as error:
            result = {"status": "error", "reason": _short(error), "where": traceback.format_exc(limit=-2)[-600:]}
        result["seconds"] = round(time.perf_counter() - start, 3)
        conn.send(result)


# -- the driver ----------------------------------------------------------------------------------------


class _Worker:
    def __init__(self, ctx: Any, args: argparse.Namespace) -> None:
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker, args=(args.device, args.data, args.include, child), daemon=True)
        self.process.start()
        self.case: str | None = None
        self.started = 0.0

    def give(self, name: str) -> None:
        self.case, self.started = name, time.monotonic()
        self.conn.send(name)

    def stop(self) -> None:
        self.process.kill()
        self.process.join()


def run_all(args: argparse.Namespace, names: list[str]) -> dict[str, dict[str, Any]]:
    """Each case's result, run by ``args.jobs`` workers with ``args.timeout`` seconds per case."""
    ctx = mp.get_context("spawn")  # fork would copy the driver's imported runtimes and threads
    pending = list(reversed(names))
    results: dict[str, dict[str, Any]] = {}
    workers = [_Worker(ctx, args) for _ in range(max(1, min(args.jobs, len(names))))]
    for worker in workers:
        if pending:
            worker.give(pending.pop())
    # a worker loads the cases before its first answer: its first case gets that time too
    deadline_extra = {id(w): args.startup for w in workers}
    while any(w.case for w in workers):
        wait([w.conn for w in workers if w.case], timeout=1.0)
        for index, worker in enumerate(workers):
            if worker.case is None:
                continue
            name = worker.case
            limit = args.timeout + deadline_extra.get(id(worker), 0)
            if worker.conn.poll():
                try:
                    results[name] = worker.conn.recv()
                except EOFError:
                    results[name] = {"status": "error", "reason": "the worker died (crash)"}
                    worker.stop()
                    worker = workers[index] = _Worker(ctx, args)
                    deadline_extra[id(worker)] = args.startup
                else:
                    deadline_extra[id(worker)] = 0
            elif not worker.process.is_alive():
                results[name] = {"status": "error", "reason": f"the worker died (exit {worker.process.exitcode})"}
                worker = workers[index] = _Worker(ctx, args)
                deadline_extra[id(worker)] = args.startup
            elif time.monotonic() - worker.started > limit:
                results[name] = {"status": "error", "reason": f"timed out after {args.timeout:g} s"}
                worker.stop()
                worker = workers[index] = _Worker(ctx, args)
                deadline_extra[id(worker)] = args.startup
            else:
                continue
            if args.verbose:
                print(f"{name}: {results[name]['status']} {results[name].get('reason', '')}", flush=True)
            worker.case = None
            if pending:
                worker.give(pending.pop())
    for worker in workers:
        worker.conn.send(None)
        worker.process.join(timeout=5)
        if worker.process.is_alive():
            worker.stop()
    return results


def summarize(results: dict[str, dict[str, Any]], top: int) -> dict[str, Any]:
    """Totals per status and the most common unsupported op types."""
    totals = collections.Counter(r["status"] for r in results.values())
    ops = collections.Counter(op for r in results.values() if r["status"] == "unsupported" for op in r.get("ops", []))
    return {
        "cases": len(results),
        **{status: totals.get(status, 0) for status in ("passed", "failed", "unsupported", "error")},
        "unsupported_ops": dict(ops.most_common(top)),
    }


def main(argv: list[str] | None = None) -> int:
    """Runs the node tests and prints the totals."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--device", default="TEMPLATE", help="a hetero-sdk device (TEMPLATE, XLA, HETERO:...) or 'onnxruntime'"
    )
    parser.add_argument("--data", help="a folder of node cases (<name>/model.onnx, test_data_set_*)")
    parser.add_argument("--include", help="a regular expression the case names must match")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per case (default 60)")
    parser.add_argument("--startup", type=float, default=120.0, help="extra seconds for a worker's first case")
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2), help="worker processes")
    parser.add_argument("--top", type=int, default=15, help="how many unsupported op types to list")
    parser.add_argument("--json", help="write per-case results here")
    parser.add_argument("--verbose", action="store_true", help="print each case as it ends")
    args = parser.parse_args(argv)

    names = [name for name, _, _ in load_cases(args.data, args.include)]
    start = time.perf_counter()
    results = run_all(args, names)
    summary = summarize(results, args.top)
    print(
        f"{args.device}: {summary['cases']} cases: {summary['passed']} passed, {summary['failed']} failed, "
        f"{summary['unsupported']} unsupported, {summary['error']} errors ({time.perf_counter() - start:.0f} s)"
    )
    if summary["unsupported_ops"]:
        print(
            "most common unsupported op types: "
            + ", ".join(f"{k} ({v})" for k, v in summary["unsupported_ops"].items())
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"device": args.device, "onnx": onnx.__version__, "summary": summary, "cases": results}, f, indent=1
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
