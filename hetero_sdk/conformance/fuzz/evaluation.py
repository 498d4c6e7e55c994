"""Running one fuzz case in this process: read (ONNX file, native bytes or blob), compile on TEMPLATE
(a blob: import on its device), infer, and for ONNX compare with ONNX Runtime where it accepts the
model. :func:`evaluate` never raises for what the case does: it returns the :class:`Outcome`.

ONNX Runtime is the reference only (imported here, in the harness, never by a device).
"""

from __future__ import annotations

import functools
import shutil
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hetero_sdk.conformance.fuzz.outcome import (
    CODE_RUN,
    EQUAL,
    MISMATCH,
    NOT_RUN,
    RAN,
    TYPED_ERROR,
    UNTYPED,
    Case,
    Outcome,
)
from hetero_sdk.conformance.onnx_node.compare import compare
from hetero_sdk.core import Core
from hetero_sdk.errors import HeteroSDKError
from hetero_sdk.graph import Model
from hetero_sdk.serialization import model_from_bytes

__all__ = ["MAX_INPUT_ELEMENTS", "REFERENCES_DISAGREE", "REFERENCE_FAILED", "evaluate", "make_inputs"]

MAX_INPUT_ELEMENTS = 1 << 20
"""Inputs larger than this (elements, all inputs together) are not made: the case ends ``not_run``."""
REFERENCE_FAILED = "reference_failed"
"""ONNX Runtime (or onnx.reference) crashed or hung on a model we handled: not a finding of ours."""
REFERENCES_DISAGREE = "references_disagree"
"""Our result differs from ONNX Runtime's and equals onnx.reference's: not a finding of ours."""

_CODE_EVENTS = frozenset(
    {"pickle.find_class", "os.system", "subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.fork"}
)
"""Audit events that mean a file made this process run code or start a program."""
_watch: dict[str, list[str] | None] = {"events": None}


_OWN_HELPERS = ("hetero_sdk_jax.stablehlo_check",)
"""Modules that devices run as helper processes with a fixed command while reading a file (XLA reads a
blob's StableHLO in one first): starting them is not code from the file."""


def _audit(event: str, args: tuple[Any, ...]) -> None:
    events = _watch["events"]
    if events is None or event not in _CODE_EVENTS:
        return
    if event == "subprocess.Popen" and list(args[1]) in ([sys.executable, "-m", m] for m in _OWN_HELPERS):
        return
    events.append(f"{event}{args!r:.200}")


@functools.cache
def _core() -> Core:
    sys.addaudithook(_audit)  # once per process; it only records while a case is read
    return Core()


def make_inputs(model: Any, seed: int = 0) -> dict[str, np.ndarray] | None:
    """Random inputs for ``model``'s (or a compiled model's) inputs, in input order, by name (``#i`` for
    an input without names): floats standard normal, integers in [0, 3), booleans fair; dynamic
    dimensions 2. None when they would exceed :data:`MAX_INPUT_ELEMENTS`."""
    rng = np.random.default_rng(seed)
    inputs: dict[str, np.ndarray] = {}
    total = 0
    for index, port in enumerate(model.inputs):
        shape = tuple(d if d >= 0 else 2 for d in port.partial_shape.dims)
        total += int(np.prod(shape, dtype=object))
        if total > MAX_INPUT_ELEMENTS or any(d > MAX_INPUT_ELEMENTS for d in shape):  # (2**62, 0): empty, unmakeable
            return None
        element = port.element_type
        if element.is_string:
            value: np.ndarray = rng.integers(0, 3, shape).astype(str).astype(object)
        else:
            dtype = np.dtype(element.numpy)
            if dtype == np.bool_:
                value = rng.random(shape) < 0.5
            elif np.issubdtype(dtype, np.integer):
                value = rng.integers(0, 3, shape).astype(dtype)
            else:
                value = rng.standard_normal(shape).astype(dtype)
        inputs[port.any_name if port.names else f"#{index}"] = value
    return inputs


def _ours(case: Case, folder: Path) -> tuple[Model | None, Any, str]:
    """Reads and compiles the case: (model, compiled model, path of an ONNX file)."""
    core = _core()
    if case.target == "blob":
        return None, core.import_model(case.data, case.device), ""
    if case.target == "native":
        model = model_from_bytes(case.data)
        return model, core.compile_model(model, "TEMPLATE"), ""
    path = folder / ("model.xml" if case.target == "ir" else "model.onnx")
    path.write_bytes(case.data)
    for name, data in case.files:
        (folder / Path(name).name).write_bytes(data)  # only inside the case's folder
    model = core.read_model(str(path))
    return model, core.compile_model(model, "TEMPLATE"), str(path)


def _onnxruntime(path: str, inputs: dict[str, np.ndarray]) -> list[Any] | None:
    """ONNX Runtime's outputs, or None when it refuses the model or the inputs."""
    import onnxruntime as ort  # the reference, only where a case is compared

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 4
    try:
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        names = {i.name for i in session.get_inputs()}
        return list(session.run(None, {k: v for k, v in inputs.items() if k in names}))
    except Exception:  # any refusal: the model is outside what ONNX Runtime runs
        return None


def evaluate(case: Case, on_phase: Callable[[str], None] = lambda phase: None) -> Outcome:
    """Runs ``case`` and says how it ended (see :mod:`~hetero_sdk.conformance.fuzz.outcome`).

    :param on_phase: told ``ours`` before the SDK runs and ``reference`` before ONNX Runtime does, so
        that a supervisor can tell whose crash or hang it saw.
    """
    folder = Path(tempfile.mkdtemp(prefix="hsfuzz"))
    try:
        return _evaluate(case, folder, on_phase)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _evaluate(case: Case, folder: Path, on_phase: Callable[[str], None]) -> Outcome:
    on_phase("ours")
    events: list[str] = []
    try:
        _watch["events"] = events
        try:
            _model, compiled, path = _ours(case, folder)
        finally:
            _watch["events"] = None
        if events:
            return Outcome(CODE_RUN, events[0], {"events": events})
        inputs = make_inputs(compiled)
        if inputs is None:
            return Outcome(NOT_RUN, "inputs too large to make")
        got = compiled(list(inputs.values())).to_tuple()  # by position: an input may have no name
    except HeteroSDKError as exc:
        if events:
            return Outcome(CODE_RUN, events[0], {"events": events})
        return Outcome(TYPED_ERROR, f"{type(exc).__name__}: {exc}"[:500])
    except Exception as exc:  # the finding this harness looks for
        return Outcome(UNTYPED, f"{type(exc).__name__}: {exc}"[:500], {"traceback": traceback.format_exc()[-6000:]})
    if case.target != "onnx":
        return Outcome(RAN)
    on_phase("reference")
    expected = _onnxruntime(path, inputs)
    if expected is None or not all(isinstance(e, np.ndarray) for e in expected):
        return Outcome(RAN, "ONNX Runtime refused the model, or gave a sequence or optional")
    why = compare(_half_precision_matches(got, expected), expected)
    if why is None:
        return Outcome(EQUAL)
    spec = _onnx_reference(path, inputs)
    if spec is not None and compare(_half_precision_matches(got, spec), spec) is None:
        return Outcome(REFERENCES_DISAGREE, f"ONNX Runtime: {why}; onnx.reference agrees with us")
    return Outcome(MISMATCH, why[:500])


def _half_precision_matches(got: tuple[Any, ...], expected: list[Any]) -> list[Any]:
    """``got``, where a 16-bit float output is within half precision's rounding of the expected one
    (``rtol = atol = 1e-2``; two implementations round differently), replaced by the expected one."""
    kept = list(got)
    for index, (g, e) in enumerate(zip(got, expected)):
        g = np.asarray(g)
        if not isinstance(e, np.ndarray) or str(e.dtype) not in ("float16", "bfloat16") or g.shape != e.shape:
            continue
        if np.allclose(g.astype(np.float32), e.astype(np.float32), rtol=1e-2, atol=1e-2, equal_nan=True):
            kept[index] = e
    return kept


def _onnx_reference(path: str, inputs: dict[str, np.ndarray]) -> list[Any] | None:
    """``onnx.reference``'s outputs, or None when it refuses the model or gives a sequence."""
    from onnx.reference import ReferenceEvaluator  # the second reference, only on a mismatch

    try:
        evaluator = ReferenceEvaluator(path)
        outputs = evaluator.run(None, {k: v for k, v in inputs.items() if k in evaluator.input_names})
    except Exception:  # any refusal: no second opinion
        return None
    return list(outputs) if all(isinstance(o, np.ndarray) for o in outputs) else None
