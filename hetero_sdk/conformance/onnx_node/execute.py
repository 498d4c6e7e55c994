"""Running one node test case on a device, in the calling process: convert, compile, infer each data
set, compare. The outcome is one of ``STATUSES``:

* ``passed``: every data set's outputs match (see :mod:`.compare`);
* ``failed``: an output's dtype, shape or values differ;
* ``unsupported``: the frontend raised ``UnsupportedOperationError`` (no rule, or a case a rule declines),
  or the device did in ``compile_model`` (an op it declines);
* ``error``: anything else raised (and, from the worker pool, a crash or a case past its time limit).
"""

from __future__ import annotations

import re
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import onnx

import hetero_sdk as hs
from hetero_sdk.conformance.onnx_node.cases import NodeCase
from hetero_sdk.conformance.onnx_node.compare import compare
from hetero_sdk.errors import UnsupportedOperationError

__all__ = ["STATUSES", "CaseResult", "CaseRunner", "DeviceRunner", "run_case", "short", "unsupported_ops"]

STATUSES: Final = ("passed", "failed", "unsupported", "error")
"""A case's possible outcomes, in report order."""


@dataclass
class CaseResult:
    """One case's outcome.

    :ivar status: one of :data:`STATUSES`.
    :ivar reason: why it did not pass (empty when it passed).
    :ivar ops: for ``unsupported``: the op types (or element type) the frontend could not translate.
    :ivar seconds: how long the case took.
    :ivar where: for ``error``: the end of the traceback.
    """

    status: str
    reason: str = ""
    ops: list[str] = field(default_factory=list)
    seconds: float = 0.0
    where: str = ""


class CaseRunner(Protocol):
    """Runs a case and says how it went (the pool builds one per worker process)."""

    def run(self, case: NodeCase) -> CaseResult:
        """The case's outcome; exceptions escaping it are counted as errors."""
        ...


class DeviceRunner:
    """Runs cases on a hetero-sdk device (any device string: ``TEMPLATE``, ``HETERO:XLA,TEMPLATE``...).

    :param device: the device string.
    :param config: the compile configuration.
    :param core: the Core to compile with (default: a new one finding the installed devices).
    """

    def __init__(self, device: str, config: dict[str, Any] | None = None, core: hs.Core | None = None) -> None:
        self.device = device
        self.config = dict(config or {})
        self.core = core or hs.Core()

    def run(self, case: NodeCase) -> CaseResult:
        """Converts, compiles and runs the case's model on each data set."""
        try:
            converted = hs.convert_model(case.model)
        except UnsupportedOperationError as error:
            return CaseResult("unsupported", short(error), unsupported_ops(error, case.model))
        try:
            compiled = self.core.compile_model(converted, self.device, self.config or None)
        except UnsupportedOperationError as error:  # the device declines some op
            return CaseResult("unsupported", short(error), unsupported_ops(error, case.model))
        names = input_names(case.model)
        for inputs, expected in case.data_sets:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results = compiled({n: v for n, v in zip(names, inputs) if v is not None})
                problem = compare(list(results.to_tuple()), expected)
            if problem:
                return CaseResult("failed", problem)
        return CaseResult("passed")


def input_names(model: onnx.ModelProto) -> list[str]:
    """The model's graph inputs that are not initializers, in order (the data sets' input order)."""
    initializers = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in initializers]


def run_case(runner: CaseRunner, case: NodeCase) -> CaseResult:
    """``runner.run(case)`` timed, with any exception it raises counted as an ``error``."""
    start = time.perf_counter()
    try:
        result = runner.run(case)
    except Exception as error:
        result = CaseResult("error", short(error), where=traceback.format_exc(limit=-2)[-600:])
    result.seconds = round(time.perf_counter() - start, 3)
    return result


def short(error: BaseException) -> str:
    """The error's type and message, cut at 400 characters."""
    text = f"{type(error).__name__}: {error}".strip()
    return text if len(text) < 400 else text[:400] + "..."


def unsupported_ops(error: BaseException, model: onnx.ModelProto) -> list[str]:
    """What an UnsupportedOperationError names: the op types without a rule, else the op a rule
    declined (an attribute or input it does not take), else the ops a device declined, else an element
    type, else the model's op types."""
    text = str(error)
    missing = re.findall(r"([\w.:]+) \(domain ([\w.]*), opset \d+\) node", text)
    if missing:
        return sorted({op if domain in ("", "ai.onnx") else f"{domain}:{op}" for op, domain in missing})
    declined = re.findall(r"ONNX ([\w.:]+) '[^']*' \([\w.]+ opset \d+\)", text)
    if declined:
        return sorted(set(declined))
    if "cannot run" in text:  # a device's answer: "cannot run 2 op(s) of model 'm': Range 'r' (why), ..."
        named = re.findall(r"(?:: |\), )([A-Z]\w*) '[^']*' \(", text)
        if named:
            return sorted(set(named))
    types = re.findall(r"element type (\w+)", text)
    if types:
        return [f"element type {types[0]}"]
    return sorted({n.op_type for n in model.graph.node})
