"""Choosing AUTO's device for one model: the first candidate that runs the whole model, else HETERO over
the candidates; and the reference device that serves the first inferences meanwhile."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hetero_sdk.auto.priorities import DeviceKind, device_kind
from hetero_sdk.errors import HeteroSDKError, PropertyValueError, UnsupportedOperationError, UnsupportedPropertyError

if TYPE_CHECKING:
    from hetero_sdk import Core, Model

__all__ = ["HETERO_DEVICE", "Selection", "Selector"]

HETERO_DEVICE = "HETERO"
"""The meta-device AUTO hands a model to when no single candidate runs all of it."""


@dataclass
class Selection:
    """What AUTO chose for a model, and why.

    :ivar device: the device string compiled: a candidate (``XLA``), or ``HETERO:A,B`` over the
        candidates when none runs the whole model.
    :ivar candidates: the devices considered, highest priority first.
    :ivar declined: for each candidate asked, the compute ops it does not run (empty: it runs all).
    :ivar startup: the reference device serving inferences while :attr:`device` compiles, or None.
    :ivar failures: devices that claimed the whole model but failed to compile it, with the error.
    """

    device: str
    candidates: list[str]
    declined: dict[str, list[str]] = field(default_factory=dict)
    startup: str | None = None
    failures: dict[str, str] = field(default_factory=dict)


class Selector:
    """Asks candidates, in priority order and each at most once, which ops of ``model`` they run.

    :param model: the model to place.
    :param candidates: the devices to choose from, highest priority first.
    :param core: the Core to query through.
    :param configs: each candidate's configuration for ``query_model`` and ``compile_model``.
    """

    def __init__(self, model: Model, candidates: Sequence[str], core: Core, configs: Mapping[str, dict[str, Any]]):
        self.model = model
        self.candidates = list(candidates)
        self.core = core
        self.configs = configs
        self.compute = [n.friendly_name for n in model.get_ordered_ops() if not n.op.structural]
        self.declined: dict[str, list[str]] = {}
        self.claims: dict[str, dict[str, str]] = {}
        self.failures: dict[str, HeteroSDKError] = {}

    def runs_all(self, device: str) -> bool:
        """True when ``device`` claims every compute op (a device whose query fails claims none)."""
        if device not in self.declined:
            try:
                claimed = self.core.query_model(self.model, device, self.configs.get(device, {}))
            except HeteroSDKError as exc:
                claimed = {}
                self.failures[device] = exc
            self.claims[device] = claimed
            self.declined[device] = [op for op in self.compute if op not in claimed]
        return not self.declined[device]

    def whole_model_devices(self, after: str | None = None) -> list[str]:
        """The candidates after ``after`` (all when None) that run the whole model, asked lazily."""
        start = 0 if after is None else self.candidates.index(after) + 1
        return [d for d in self.candidates[start:] if self.runs_all(d)]

    def first(self) -> Selection:
        """The first candidate that runs the whole model; else HETERO over every candidate.

        :raises UnsupportedOperationError: naming the ops no candidate runs (or, when every op has a
            candidate, saying that HETERO is not registered to split the model).
        """
        for device in self.candidates:
            if self.runs_all(device):
                return Selection(device, self.candidates, dict(self.declined))
        unplaced = [op for op in self.compute if all(op in self.declined[d] for d in self.candidates)]
        asked = ", ".join(self.candidates)
        refused = [e for e in self.failures.values() if isinstance(e, (PropertyValueError, UnsupportedPropertyError))]
        if unplaced and len(refused) == len(self.candidates):
            raise refused[0]  # every candidate refused the configuration: that is the error, not the ops
        if unplaced:
            shown = ", ".join(f"{op} ({self._type(op)})" for op in unplaced[:8])
            more = f" and {len(unplaced) - 8} more" if len(unplaced) > 8 else ""
            raise UnsupportedOperationError(
                f"no device runs {shown}{more} of model '{self.model.friendly_name}' (asked: {asked}); "
                "add a device that supports them to MULTI_DEVICE_PRIORITIES" + self._failed()
            )
        if HETERO_DEVICE not in self.core.registered_devices:
            raise UnsupportedOperationError(
                f"no single device of {asked} runs all of model '{self.model.friendly_name}', and the "
                f"{HETERO_DEVICE} device that would split it is not registered"
            )
        return Selection(f"{HETERO_DEVICE}:{','.join(self.candidates)}", self.candidates, dict(self.declined))

    def _failed(self) -> str:
        """The candidates whose query_model failed, and why (for an error message), or ''."""
        if not self.failures:
            return ""
        return "; query_model failed on " + "; ".join(f"{d}: {type(e).__name__}: {e}" for d, e in self.failures.items())

    def startup_device(self, selected: str) -> str | None:
        """A reference candidate, other than ``selected``, that runs the whole model; None when
        ``selected`` is itself a reference device or a split (no reference device runs all of it)."""
        if selected not in self.candidates or device_kind(self.core, selected) is DeviceKind.REFERENCE:
            return None
        for device in self.candidates:
            if device != selected and device_kind(self.core, device) is DeviceKind.REFERENCE and self.runs_all(device):
                return device
        return None

    def _type(self, op: str) -> str:
        return next(n.type_name for n in self.model.get_ordered_ops() if n.friendly_name == op)
