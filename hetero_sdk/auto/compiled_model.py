"""The AUTO compiled model: the chosen device's compiled model behind AUTO's name, served meanwhile by a
reference device while the chosen one compiles (OpenVINO's accelerated first inference)."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetero_sdk import Model
from hetero_sdk import properties as props
from hetero_sdk.auto.selection import Selection
from hetero_sdk.auto.startup import StartupDecision
from hetero_sdk.errors import BlobFormatError
from hetero_sdk.plugin import CompiledModel, RemoteTensor, RunContext, pack_blob, unpack_blob

__all__ = [
    "EXECUTION_PHASES",
    "SERVING_SUMMARY",
    "AutoCompiledModel",
    "Served",
    "compile_in_background",
    "inputs_for",
    "property_of",
    "read_auto_blob",
]

EXECUTION_PHASES = "AUTO_EXECUTION_PHASES"
"""Compiled-model key: the phases of serving, in order: for each, ``device`` (its EXECUTION_DEVICES),
``role`` (``startup`` or ``selected``), ``inferences`` it ran, and ``seconds`` from ``compile_model``
until the next phase began (None for the phase still running)."""

SERVING_SUMMARY = "AUTO_SERVING_SUMMARY"
"""Compiled-model key: one line saying which device served each phase and why (the benchmark header's)."""

_log = logging.getLogger(__name__)
_BLOB_FORMAT = 1


@dataclass(frozen=True)
class Served:
    """A compiled model and the device string it was compiled on (``XLA``, ``HETERO:XLA,TEMPLATE``)."""

    device: str
    compiled: CompiledModel


def compile_in_background(device: str, job: Callable[[], Served]) -> Future[Served]:
    """Runs ``job`` (compiling for ``device``) in a new thread; the future holds its result or its error.

    The thread is not a daemon: an interpreter that exits mid-compile waits for it rather than tearing
    the device's runtime down under a running compiler.
    """
    future: Future[Served] = Future()
    future.set_running_or_notify_cancel()

    def work() -> None:
        try:
            future.set_result(job())
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=work, name=f"AUTO-compile-{device}").start()
    return future


class AutoCompiledModel(CompiledModel):
    """A model compiled by AUTO: requests run on the chosen device, or on the startup device until the
    chosen one has compiled.

    :param model: the model as the user gave it (a clone this object owns).
    :param device_name: the name AUTO was registered under.
    :param config: AUTO's resolved configuration, with the keys it forwarded.
    :param selection: the chosen device, the candidates and why the others were passed over.
    :param current: what serves requests now: the chosen device's compiled model, or the startup one.
    :param pending: the chosen device's compile still running in the background, or None.
    """

    def __init__(
        self,
        model: Model,
        device_name: str,
        config: Mapping[str, Any],
        selection: Selection,
        current: Served,
        pending: Future[Served] | None = None,
        decision: StartupDecision | None = None,
        started: float | None = None,
        on_startup_inference: Callable[[float], None] | None = None,
    ) -> None:
        super().__init__(model, device_name, config)
        self.selection = selection
        self.decision = decision
        self._current = current
        self._started = time.perf_counter() if started is None else started
        self._switched_after: float | None = None
        self._startup = current if pending is not None else None
        self._counts: dict[int, int] = {}
        self._count_lock = threading.Lock()
        self._on_startup_inference = on_startup_inference
        self._last_run: Served | None = None
        self._pending = pending
        self._failure: BaseException | None = None
        if pending is not None:
            pending.add_done_callback(self._switch)

    def _switch(self, future: Future[Served]) -> None:
        error = future.exception()
        if error is None:
            self._switched_after = time.perf_counter() - self._started
            self._current = future.result()
            _log.info("AUTO: %s now serves '%s'", self._current.device, self.model.friendly_name)
        else:
            self._failure = error
            self.selection.failures[self.selection.device] = f"{type(error).__name__}: {error}"
            _log.warning(
                "AUTO: %s failed to compile '%s'; %s keeps serving it: %s",
                self.selection.device,
                self.model.friendly_name,
                self._current.device,
                error,
            )

    # -- what serves requests -----------------------------------------------------------------------

    @property
    def serving_device(self) -> str:
        """The device string of what serves new requests now (the startup device until the switch)."""
        return self._current.device

    @property
    def compile_failure(self) -> BaseException | None:
        """The error of the chosen device's background compile, if it failed (the startup device then
        keeps serving)."""
        return self._failure

    def wait_for_selected_device(self, timeout: float | None = None) -> bool:
        """Blocks until the chosen device's background compile ends (at most ``timeout`` seconds).

        :returns: True when the chosen device serves requests; False on timeout, or when its compile
            failed (see :attr:`compile_failure`).
        """
        pending = self._pending
        if pending is not None:
            done = threading.Event()
            pending.add_done_callback(lambda _: done.set())  # runs after _switch, registered first
            if not done.wait(timeout):
                return False
        return self._failure is None

    def create_request_state(self) -> dict[CompiledModel, Any]:
        """A request's state on each device that serves it, made when that device first runs it."""
        return {}

    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        """Runs on what serves now; a remote tensor of another device is copied to the host first."""
        served = self._current
        self._last_run = served
        with self._count_lock:
            count = self._counts[id(served)] = self._counts.get(id(served), 0) + 1
        timed = count == 1 and served is self._startup and self._on_startup_inference is not None
        begin = time.perf_counter()
        outputs = served.compiled.run(inputs_for(served.compiled, inputs), inner_context(context, served.compiled))
        if timed and self._on_startup_inference is not None:
            self._on_startup_inference(time.perf_counter() - begin)
        return outputs

    # -- which device served what -----------------------------------------------------------------------

    def execution_phases(self) -> list[dict[str, Any]]:
        """The value of :data:`EXECUTION_PHASES`."""
        phases = []
        with self._count_lock:
            counts = dict(self._counts)
        if self._startup is not None:
            phases.append(_phase(self._startup, "startup", counts, self._switched_after))
        if self._startup is None or self._current is not self._startup:
            phases.append(_phase(self._current, "selected", counts, None))
        return phases

    def serving_summary(self) -> str:
        """The value of :data:`SERVING_SUMMARY`: ``first 3 inferences on TEMPLATE.0 while XLA.0 compiled
        (1.9 s), then XLA.0``, or why the startup device stayed out."""
        phases = self.execution_phases()
        target = self.selection.device
        if len(phases) == 2:
            startup, selected = phases
            text = (
                f"first {startup['inferences']} inferences on {startup['device']} while {selected['device']} "
                f"compiled ({startup['seconds']:.1f} s), then {selected['device']}"
            )
        elif self._startup is not None and self._failure is not None:
            text = f"{phases[0]['device']} serves every inference: {target} failed to compile"
        elif self._startup is not None:
            text = f"{phases[0]['device']} serves while {target} compiles ({phases[0]['inferences']} inferences so far)"
        else:
            text = f"every inference on {phases[0]['device']}"
        return text if self.decision is None else f"{text}; {self.decision.describe()}"

    @property
    def executor(self) -> Executor:
        """The executor of what serves now: async requests run on that device's workers."""
        return self._current.compiled.executor

    @property
    def execution_devices(self) -> list[str]:
        """The devices that run requests now, as their compiled model reports them (``["XLA.0"]``, or
        the devices of a HETERO split)."""
        return self._current.compiled.execution_devices

    @property
    def optimal_number_of_infer_requests(self) -> int:
        """That of what serves now."""
        return self._current.compiled.optimal_number_of_infer_requests

    # -- properties, runtime model, export ------------------------------------------------------------

    def get_property(self, name: str) -> Any:
        """AUTO's keys and the common ones; any other key is read from the compiled model serving now
        (``HETERO_NUMBER_OF_SUBMODELS``, ``INFERENCE_PRECISION_HINT``...)."""
        if name == EXECUTION_PHASES:
            return self.execution_phases()
        if name == SERVING_SUMMARY:
            return self.serving_summary()
        if name == props.supported_properties:
            return {**property_of(self, self._current.compiled, name), EXECUTION_PHASES: "RO", SERVING_SUMMARY: "RO"}
        return property_of(self, self._current.compiled, name)

    def get_runtime_model(self) -> Model:
        """The runtime model of the device that ran the last request (of the serving one before any)."""
        return (self._last_run or self._current).compiled.get_runtime_model()

    def export_model(self) -> bytes:
        """The chosen device's blob behind a small header naming that device (waits for its compile).

        :raises UnsupportedOperationError: when that device cannot export.
        """
        self.wait_for_selected_device()
        served = self._current
        header = {
            "format": _BLOB_FORMAT,
            "device": served.device,
            "candidates": self.selection.candidates,
            "network": self.model.friendly_name,
        }
        frames = {"header": json.dumps(header).encode(), "model": served.compiled.export_model()}
        return pack_blob(self.device_name, frames)

    def release(self) -> None:
        """Waits for a background compile, then releases the compiled models' worker threads (the
        startup device's too)."""
        self.wait_for_selected_device()
        super().release()
        self._current.compiled.release()
        if self._startup is not None and self._startup is not self._current:
            self._startup.compiled.release()


def _phase(served: Served, role: str, counts: Mapping[int, int], seconds: float | None) -> dict[str, Any]:
    device = ",".join(served.compiled.execution_devices)
    return {"device": device, "role": role, "inferences": counts.get(id(served), 0), "seconds": seconds}


def property_of(meta: CompiledModel, inner: CompiledModel, name: str) -> Any:
    """A property of AUTO's compiled model: its own keys and the common ones, and any other key read from
    ``inner``, the compiled model behind it."""
    own = CompiledModel.get_property
    if name == props.supported_properties:
        return {**inner.get_property(name), **own(meta, name)}
    if name in meta.config or name in own(meta, props.supported_properties):
        return own(meta, name)
    return inner.get_property(name)


def inputs_for(compiled: CompiledModel, inputs: Sequence[Any]) -> list[Any]:
    """``inputs`` for ``compiled``: a remote tensor of another device is copied to the host first."""
    device = compiled.device_name
    return [v if not isinstance(v, RemoteTensor) or v.device_name == device else np.asarray(v) for v in inputs]


def read_auto_blob(blob: bytes, device_name: str) -> tuple[dict[str, Any], bytes]:
    """The header and the device's blob of an AUTO blob.

    :raises BlobFormatError: for a blob that is not AUTO's, is corrupted, or has a newer format.
    """
    frames = unpack_blob(blob, device_name)
    try:
        header = json.loads(frames["header"])
        model = frames["model"]
        device = header["device"]
        version = header["format"]
    except (KeyError, TypeError, ValueError) as exc:
        raise BlobFormatError(f"{device_name} blob is malformed: {type(exc).__name__}: {exc}") from exc
    if not isinstance(device, str) or not isinstance(version, int):
        raise BlobFormatError(f"{device_name} blob header is malformed: {header!r}")
    if version > _BLOB_FORMAT:
        raise BlobFormatError(
            f"{device_name} blob format {version} is newer than this hetero-sdk reads ({_BLOB_FORMAT}); upgrade"
        )
    return header, model


def inner_context(context: RunContext, compiled: CompiledModel) -> RunContext:
    """``context`` for the device's ``compiled`` model, with that device's state for the request (kept in
    the request's state of AUTO, by compiled model)."""
    states: dict[CompiledModel, Any] | None = context.state
    if states is None:
        return context
    if compiled not in states:
        states[compiled] = compiled.create_request_state()
    return context.with_state(states[compiled])
