"""ONNX's backend node tests as a measure of a device's op coverage (``hetero-sdk onnx-tests DEVICE``).

The 1,884 cases of onnx 1.23.2 are regenerated once from the installed wheel's generators into a
cache (:mod:`.cases`), run on the device in worker processes (:mod:`.pool`, :mod:`.execute`),
compared with ``allclose(rtol=1e-3, atol=1e-5)`` (:mod:`.compare`), counted per ONNX op
(:mod:`.report`) and judged against the device's expected-failures file (:mod:`.expected`)::

    from hetero_sdk.conformance.onnx_node import run_node_tests, judge, read, shipped_file

    run = run_node_tests("TEMPLATE", include="test_(abs|relu)", jobs=2)
    verdict = judge(run.results, read(shipped_file("TEMPLATE")))
    assert verdict.ok(), verdict.regressions
"""

from __future__ import annotations

from hetero_sdk.conformance.onnx_node.cases import CACHE_ENV, CaseInfo, NodeCase, cache_dir, ensure_cache, load_case
from hetero_sdk.conformance.onnx_node.compare import ATOL, RTOL, compare
from hetero_sdk.conformance.onnx_node.execute import STATUSES, CaseResult, CaseRunner, DeviceRunner, run_case
from hetero_sdk.conformance.onnx_node.expected import (
    Expected,
    ExpectedFileError,
    Verdict,
    judge,
    parse,
    read,
    shipped_file,
    updated,
)
from hetero_sdk.conformance.onnx_node.report import Counts, document, per_op, totals
from hetero_sdk.conformance.onnx_node.suite import NodeTestRun, run_node_tests

__all__ = [
    "ATOL", "CACHE_ENV", "RTOL", "STATUSES", "CaseInfo", "CaseResult", "CaseRunner", "Counts", "DeviceRunner",
    "Expected", "ExpectedFileError", "NodeCase", "NodeTestRun", "Verdict", "cache_dir", "compare", "document",
    "ensure_cache", "judge", "load_case", "parse", "per_op", "read", "run_case", "run_node_tests", "shipped_file",
    "totals", "updated",
]  # fmt: skip
