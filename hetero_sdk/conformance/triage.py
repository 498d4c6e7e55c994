"""Triage of a failed op case: is the device wrong, or the SDK?

The kit compares a device with the oracle, the SDK's reference kernels (:mod:`hetero_sdk.reference`).
When they differ, a second opinion says which side is likely wrong: the case's model exported with the
SDK's ONNX exporter (:func:`hetero_sdk.frontend.onnx_export.export_model`) and run by ONNX Runtime, when
it is installed (graph optimizations off, so that ONNX Runtime's own fusions do not speak for it):

- ONNX Runtime agrees with the reference: the device differs from both, most likely a device bug;
- ONNX Runtime agrees with the device: the reference and ONNX Runtime differ, likely an SDK issue (the
  reference kernel, or the exporter writing the op as something ONNX reads otherwise);
- all three differ, or no second opinion (ONNX Runtime missing, the exporter cannot write the op, ONNX
  Runtime cannot run it): said as such.

ONNX Runtime is a reference for the kit only: no device's execution path uses it.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hetero_sdk.conformance.compare import mismatches
from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx_export import export_model
from hetero_sdk.graph import Model

__all__ = ["DEVICE_BUG", "NO_SECOND_OPINION", "SDK_ISSUE", "THREE_WAY", "Triage", "run_onnxruntime", "triage"]

DEVICE_BUG = "the device differs from the reference and from ONNX Runtime: likely a device bug"
SDK_ISSUE = (
    "the reference and ONNX Runtime differ, and the device agrees with ONNX Runtime: "
    "likely an SDK issue (its reference kernel or its ONNX exporter), not the device's"
)
THREE_WAY = (
    "the device, the reference and ONNX Runtime all differ: the op's definition may be read three ways; "
    "compare the three results below"
)
NO_SECOND_OPINION = "the device differs from the reference; no second opinion"
"""The verdicts (the first words of :attr:`Triage.verdict`; a device that failed to compile or run
is said to have failed instead of to differ)."""

_ORACLE = "the oracle (hetero_sdk.reference)"


@dataclass
class Triage:
    """The triage of one failed case.

    :ivar verdict: one line: who is likely wrong.
    :ivar lines: what each comparison found (ONNX Runtime against the reference and against the device).
    :ivar onnx_path: where the exported ONNX model was saved, or None.
    """

    verdict: str
    lines: list[str] = field(default_factory=list)
    onnx_path: str | None = None

    def text(self) -> str:
        """The triage as the failure message shows it."""
        body = "".join(f"\n  {line}" for line in self.lines)
        where = f"\n  exported ONNX model: {self.onnx_path}" if self.onnx_path else ""
        return f"triage: {self.verdict}{body}{where}"


def run_onnxruntime(model: Model, inputs: Mapping[str, np.ndarray], directory: Path | None = None) -> list[np.ndarray]:
    """Runs ``model`` exported to ONNX with ONNX Runtime (CPU, graph optimizations off) on ``inputs``;
    saves ``model.onnx`` in ``directory`` when given.

    :raises ModuleNotFoundError: without onnxruntime.
    :raises UnsupportedOperationError: when the exporter cannot write the model.
    """
    if importlib.util.find_spec("onnxruntime") is None:
        raise ModuleNotFoundError("onnxruntime is not installed", name="onnxruntime")
    ort: Any = importlib.import_module("onnxruntime")
    data = export_model(model).SerializeToString()
    if directory is not None:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "model.onnx").write_bytes(data)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(data, sess_options=options, providers=["CPUExecutionProvider"])
    feed = {port.name: _to_onnxruntime(np.asarray(inputs[port.name])) for port in session.get_inputs()}
    return [_from_onnxruntime(np.asarray(v)) for v in session.run(None, feed)]


def triage(
    model: Model,
    inputs: Mapping[str, np.ndarray],
    got: Sequence[Any] | None,
    want: Sequence[np.ndarray],
    rtol: float,
    atol: float,
    directory: Path | None = None,
) -> Triage:
    """Who is likely wrong when the device's results ``got`` (None: it failed to compile or run) differ
    from the reference's ``want`` on ``model`` and ``inputs``.

    :param rtol: the case's relative tolerance (ONNX Runtime is held to it too).
    :param atol: the case's absolute tolerance.
    :param directory: where to save the exported ``model.onnx`` (the case's reproduction folder).
    """
    try:
        second = run_onnxruntime(model, inputs, directory)
    except ModuleNotFoundError:
        return Triage(f"{_no_second_opinion(got)}: ONNX Runtime is not installed (pip install onnxruntime)")
    except Exception as exc:  # the exporter's refusal, or whatever ONNX Runtime raises on load or run
        saved = directory / "model.onnx" if directory is not None else None
        stage = "run the exported model" if saved is not None and saved.exists() else "export the case"
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        return Triage(
            f"{_no_second_opinion(got)}: could not {stage} with the SDK's ONNX exporter and ONNX Runtime "
            f"({type(exc).__name__}: {first})",
            onnx_path=str(saved) if saved is not None and saved.exists() else None,
        )
    onnx_path = str(directory / "model.onnx") if directory is not None else None
    versus_reference = mismatches(second, want, rtol, atol)
    lines = [_line(f"ONNX Runtime vs {_ORACLE}", versus_reference)]
    if got is None:
        verdict = (
            "the device failed where ONNX Runtime runs the exported model and agrees with the reference: "
            "the model is valid, likely a device bug"
            if not versus_reference
            else "the device failed, and ONNX Runtime differs from the reference on the exported model too: "
            "check the op's definition and the exporter"
        )
        return Triage(verdict, lines, onnx_path)
    versus_device = mismatches(got, second, rtol, atol)
    lines.append(_line("the device vs ONNX Runtime", versus_device))
    if not versus_reference:
        verdict = DEVICE_BUG
    elif not versus_device:
        verdict = SDK_ISSUE
        lines.append(
            "(a device that itself runs ONNX Runtime agrees with it by construction: then read the op's definition)"
        )
    else:
        verdict = THREE_WAY
    return Triage(verdict, lines, onnx_path)


def _no_second_opinion(got: Sequence[Any] | None) -> str:
    return "the device failed; no second opinion" if got is None else NO_SECOND_OPINION


def _line(what: str, problems: list[str]) -> str:
    return f"{what}: " + ("agree" if not problems else "differ; " + "; ".join(problems))


def _to_onnxruntime(value: np.ndarray) -> np.ndarray:
    """ONNX Runtime takes strings as object arrays of ``str``."""
    return value.astype(object) if value.dtype.kind in "TUS" else value


def _from_onnxruntime(value: np.ndarray) -> np.ndarray:
    """ONNX Runtime gives strings as object arrays: as the SDK's ``string`` tensors."""
    return value.astype(Type.string.numpy) if value.dtype == object else value
