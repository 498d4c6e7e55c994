"""The remote side: :class:`DeviceActor` holds a Core of its host and the models compiled there.

Every method answers ``("ok", value)`` or ``("error", error class name, message)``: the driver
re-raises SDK errors as the same typed error (:mod:`hetero_sdk_ray.link`), without Ray's traceback
wrapping. Models travel in the native format (``model_to_bytes``), never pickled.
"""

from __future__ import annotations

import itertools
import os
import socket
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
from hetero_sdk import Core
from hetero_sdk import properties as props
from hetero_sdk.errors import HeteroSDKError, InferenceError
from hetero_sdk.plugin import CompiledModel, model_from_bytes, model_to_bytes

__all__ = ["DeviceActor", "Answer", "default_target"]

Answer = tuple[Any, ...]
"""``("ok", value)`` or ``("error", class name, message)``."""

T = TypeVar("T")


def default_target(core: Core) -> str:
    """``XLA`` when it is available on this host, else ``TEMPLATE``."""
    if "XLA" not in core.registered_devices:
        return "TEMPLATE"
    return "XLA" if any(d.split(".")[0] == "XLA" for d in core.available_devices) else "TEMPLATE"


def _answer(call: Callable[[], T]) -> Answer:
    try:
        return ("ok", call())
    except HeteroSDKError as exc:
        return ("error", type(exc).__name__, str(exc))
    except Exception as exc:
        return ("error", "", f"{type(exc).__name__}: {exc}")


class DeviceActor:
    """One device of a Ray host, driven by the RAY plugin of another process.

    :param device_name: the RAY device id this actor serves (``RAY.1``), for messages.
    """

    def __init__(self, device_name: str) -> None:
        self._name = device_name
        self._core = Core()
        self._models: dict[int, CompiledModel] = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()

    def describe(self) -> Answer:
        """Where the actor runs: its host name and process id (answering it also shows the actor started)."""
        return ("ok", {"host": socket.gethostname(), "pid": os.getpid()})

    def memory(self, target: str) -> Answer:
        """``DEVICE_TOTAL_MEM_SIZE`` of the target, or this host's physical memory for a device that
        computes in host memory and reports none."""

        def size() -> int:
            device = target or default_target(self._core)
            if props.device.total_mem_size in self._core.get_property(device, props.supported_properties):
                value = self._core.get_property(device, props.device.total_mem_size)
                if value:
                    return int(value)
            return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))

        return _answer(size)

    def compile(self, model: bytes, target: str, config: dict[str, Any]) -> Answer:
        """Compiles a native-format model for ``target``; answers its handle and facts about it."""
        return _answer(
            lambda: self._keep(self._core.compile_model(model_from_bytes(model), *self._config(target, config)))
        )

    def import_blob(self, blob: bytes, target: str, config: dict[str, Any]) -> Answer:
        """Imports a blob of ``target``; answers as :meth:`compile`."""
        return _answer(lambda: self._keep(self._core.import_model(blob, *self._config(target, config)), True))

    def query(self, model: bytes, target: str, config: dict[str, Any]) -> Answer:
        """The ops of the model the target runs (their names; the driver names the device)."""
        return _answer(lambda: sorted(self._core.query_model(model_from_bytes(model), *self._config(target, config))))

    def infer(self, handle: int, inputs: Sequence[np.ndarray], profile: bool) -> Answer:
        """One inference: the outputs as numpy arrays, and profiling rows when ``profile``."""

        def run() -> tuple[list[np.ndarray], list[tuple[Any, ...]]]:
            request = self._model(handle).create_infer_request()
            results = request.infer(list(inputs))
            rows = [
                (
                    r.node_name,
                    r.node_type,
                    r.exec_type,
                    str(r.status),
                    r.real_time.total_seconds(),
                    r.cpu_time.total_seconds(),
                )
                for r in (request.get_profiling_info() if profile else [])
            ]
            return [np.asarray(v) for v in results.to_tuple()], rows

        return _answer(run)

    def infer_kept(self, handle: int, inputs: Sequence[Any], profile: bool) -> Answer:
        """One inference whose outputs stay in Ray's object store: ``(refs, [(shape, dtype)], rows)``. An
        input may be such a ref, from this actor or another: its value moves actor to actor, never
        through the driver."""
        import ray

        answer = _answer(lambda: [ray.get(v) if isinstance(v, ray.ObjectRef) else v for v in inputs])
        if answer[0] == "ok":
            answer = self.infer(handle, answer[1], profile)
        if answer[0] != "ok":
            return answer
        outputs, rows = answer[1]
        return _answer(lambda: ([ray.put(v) for v in outputs], [(v.shape, v.dtype.str) for v in outputs], rows))

    def export(self, handle: int) -> Answer:
        """The target's blob of a compiled model."""
        return _answer(lambda: self._model(handle).export_model())

    def runtime_model(self, handle: int) -> Answer:
        """The target's runtime model, in the native format."""
        return _answer(lambda: model_to_bytes(self._model(handle).get_runtime_model()))

    def release(self, handle: int) -> Answer:
        """Forgets a compiled model."""
        with self._lock:
            self._models.pop(handle, None)
        return ("ok", None)

    def _config(self, target: str, config: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        device = target or default_target(self._core)
        supported = self._core.get_property(device, props.supported_properties)
        return device, {k: v for k, v in config.items() if supported.get(k) in ("RW", "WO")}

    def _keep(self, compiled: CompiledModel, with_model: bool = False) -> dict[str, Any]:
        with self._lock:
            handle = next(self._ids)
            self._models[handle] = compiled
        return {
            **({"model": model_to_bytes(compiled.model)} if with_model else {}),
            "handle": handle,
            "target": compiled.device_name,
            "execution_devices": list(compiled.execution_devices),
            "optimal_requests": compiled.optimal_number_of_infer_requests,
        }

    def _model(self, handle: int) -> CompiledModel:
        with self._lock:
            if handle not in self._models:
                raise InferenceError(f"{self._name} holds no compiled model {handle}; compile the model again")
            return self._models[handle]
