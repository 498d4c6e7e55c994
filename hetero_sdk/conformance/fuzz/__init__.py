"""A fuzzer for everything hetero-sdk reads: ONNX models, the native model format and exported blobs.

The invariant it checks: reading a file (``read_model``, ``import_model``), compiling it on TEMPLATE
and inferring either raises a :class:`~hetero_sdk.errors.HeteroSDKError` subclass or gives a result,
equal to ONNX Runtime's where ONNX Runtime accepts the ONNX model, within a time bound; and loading
never runs code. Anything else (an untyped exception, a hang, a crash, a mismatch, code run) is a
finding, kept with its reproduction.

- :mod:`~hetero_sdk.conformance.fuzz.strategies`: hypothesis strategies that mutate seed models;
- :mod:`~hetero_sdk.conformance.fuzz.seeds`: ONNX's node tests and small built models;
- :mod:`~hetero_sdk.conformance.fuzz.evaluation`: one case, in this process;
- :mod:`~hetero_sdk.conformance.fuzz.runner`: cases in a worker process, with a watchdog;
- ``python -m hetero_sdk.conformance.fuzz``: long runs, with atheris or hypothesis.
"""

from hetero_sdk.conformance.fuzz.evaluation import evaluate
from hetero_sdk.conformance.fuzz.findings import Tally, save_finding
from hetero_sdk.conformance.fuzz.outcome import FINDING_KINDS, Case, Outcome
from hetero_sdk.conformance.fuzz.runner import CaseRunner
from hetero_sdk.conformance.fuzz.seeds import CI_NODE_TESTS, blob_seeds, built_seeds, native_seeds, node_test_seeds
from hetero_sdk.conformance.fuzz.strategies import blob_cases, native_cases, onnx_cases

__all__ = [
    "CI_NODE_TESTS", "FINDING_KINDS", "Case", "CaseRunner", "Outcome", "Tally", "blob_cases", "blob_seeds",
    "built_seeds", "evaluate", "native_cases", "native_seeds", "node_test_seeds", "onnx_cases", "save_finding",
]  # fmt: skip
