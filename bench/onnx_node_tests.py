"""The ONNX backend node tests with ONNX Runtime as the reference column: a thin wrapper of the SDK's
runner (``hetero_sdk.conformance.onnx_node``, ``hetero-sdk onnx-tests DEVICE``) that can also run the
cases on ONNX Runtime, which the SDK never imports.

Usage::

    python bench/onnx_node_tests.py                          # TEMPLATE
    python bench/onnx_node_tests.py --device XLA --jobs 4
    python bench/onnx_node_tests.py --device onnxruntime     # the reference column
    python bench/onnx_node_tests.py --include 'test_(lstm|gru)' --json results.json

The cases are regenerated once from the installed ``onnx`` wheel's ``onnx.backend.test.case.node``
generators into the runner's cache (``~/.cache/hetero-sdk/onnx-node-tests/<onnx version>/``, or
``$HETERO_SDK_ONNX_TESTS_CACHE``). Each output is compared with ``np.allclose(rtol=1e-3, atol=1e-5)``
(NaNs equal), after its dtype and shape. A case is *passed*, *failed* (wrong dtype, shape or values),
*unsupported* (the frontend raised ``UnsupportedOperationError``; for onnxruntime a ``NOT_IMPLEMENTED``
kernel) or an *error* (anything else, and a case that ran past ``--timeout``). Cases run in worker
processes, so a case that hangs or crashes is killed and counted without stopping the run. For the
per-op table and the expected-failures files use ``hetero-sdk onnx-tests``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from typing import Any

from hetero_sdk.conformance.onnx_node import CaseResult, NodeCase, compare, document, run_node_tests, totals
from hetero_sdk.conformance.onnx_node.execute import input_names, short
from hetero_sdk.conformance.onnx_node.report import unsupported_ops

__all__ = ["OrtRunner", "compare", "main"]


class OrtRunner:
    """Runs cases on ONNX Runtime's CPU provider (the reference column; bench only)."""

    def __init__(self) -> None:
        import onnxruntime

        self.ort = onnxruntime

    def run(self, case: NodeCase) -> CaseResult:
        """Runs the case's model on each data set."""
        model = case.model
        try:
            session = self.ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        except Exception as error:  # ORT raises its own classes; NOT_IMPLEMENTED marks a missing kernel
            status = "unsupported" if "NOT_IMPLEMENTED" in str(error) or "NotImplemented" in repr(error) else "error"
            return CaseResult(status, short(error), sorted({n.op_type for n in model.graph.node}))
        names = input_names(model)
        for inputs, expected in case.data_sets:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = session.run(None, {n: v for n, v in zip(names, inputs) if v is not None})
                problem = compare(list(got), expected)
            if problem:
                return CaseResult("failed", problem)
        return CaseResult("passed")


def main(argv: list[str] | None = None) -> int:
    """Runs the node tests and prints the totals."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--device", default="TEMPLATE", help="a hetero-sdk device (TEMPLATE, XLA, HETERO:...) or 'onnxruntime'"
    )
    parser.add_argument("--include", help="a regular expression the case names must match")
    parser.add_argument("--exclude", help="a regular expression the case names must not match")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per case (default 60)")
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2), help="worker processes")
    parser.add_argument("--top", type=int, default=15, help="how many unsupported op types to list")
    parser.add_argument("--json", help="write per-case results here")
    parser.add_argument("--verbose", action="store_true", help="print each case as it ends")
    args = parser.parse_args(argv)

    def show(name: str, result: CaseResult) -> None:
        if args.verbose:
            print(f"{name}: {result.status} {result.reason}", flush=True)

    run = run_node_tests(
        args.device, include=args.include, exclude=args.exclude, jobs=args.jobs, timeout=args.timeout,
        factory=OrtRunner if args.device == "onnxruntime" else None, on_result=show,
    )  # fmt: skip
    counts = totals(run.results)
    print(
        f"{args.device}: {counts.cases} cases: {counts.passed} passed, {counts.failed} failed, "
        f"{counts.unsupported} unsupported, {counts.error} errors ({run.seconds:.0f} s)"
    )
    common = unsupported_ops(run.results, args.top)
    if common:
        print("most common unsupported op types: " + ", ".join(f"{k} ({v})" for k, v in common.items()))
    if args.json:
        data: dict[str, Any] = document(args.device, run.results, run.index, None, run.seconds)
        with open(args.json, "w") as f:
            json.dump(data, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
