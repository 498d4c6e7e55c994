"""What one fuzz case ended in, and which endings are findings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["FINDING_KINDS", "Case", "Outcome"]

TYPED_ERROR = "typed_error"
"""A :class:`~hetero_sdk.errors.HeteroSDKError` subclass: what bad input must give."""
EQUAL = "equal"
"""Our result equals ONNX Runtime's (within tolerance)."""
RAN = "ran"
"""Ran to a result with nothing to compare it with: ONNX Runtime refused the model (or the format is
the SDK's own); not a finding, since a model ONNX Runtime refuses may still be valid."""
NOT_RUN = "not_run"
"""Read and compiled, but its inputs would be too large to make (a huge declared dimension)."""

UNTYPED = "untyped_exception"
HANG = "hang"
CRASH = "crash"
MISMATCH = "mismatch"
CODE_RUN = "code_run"

FINDING_KINDS = (UNTYPED, HANG, CRASH, MISMATCH, CODE_RUN)
"""The outcomes that break the invariant: an exception outside ``HeteroSDKError``, no answer within the
time bound, the process dying, a result that differs from ONNX Runtime's, code run while loading."""


@dataclass(frozen=True)
class Case:
    """One input of the harness.

    :ivar target: ``onnx`` (an ONNX model file), ``ir`` (OpenVINO IR: ``model.xml``, its ``.bin`` in
        :attr:`files`), ``native`` (:func:`~hetero_sdk.serialization.model_to_bytes`
        bytes) or ``blob`` (an exported compiled model, imported on :attr:`device`).
    :ivar data: the bytes read: the model file, the native bytes or the blob.
    :ivar files: other files beside the model, by relative name (external data).
    :ivar device: the device a blob is imported on.
    :ivar label: how the case was made (its seed and mutations), for the report.
    """

    target: str
    data: bytes
    files: tuple[tuple[str, bytes], ...] = ()
    device: str = "TEMPLATE"
    label: str = ""


@dataclass(frozen=True)
class Outcome:
    """How a case ended.

    :ivar kind: one of the module's kinds (``typed_error``, ``equal``, ``untyped_exception``...).
    :ivar detail: the error type and message, the mismatching output, or the phase that hung.
    :ivar extra: anything else worth keeping (the traceback of an untyped exception).
    """

    kind: str
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_finding(self) -> bool:
        """Whether the outcome breaks the invariant."""
        return self.kind in FINDING_KINDS
