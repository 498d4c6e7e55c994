"""The compiled model: what ``compile_model`` returns. Plugins subclass :class:`CompiledModel`."""

from __future__ import annotations

import abc
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

from hetero_sdk.errors import UnsupportedOperationError, UnsupportedPropertyError
from hetero_sdk.graph.model import Model
from hetero_sdk.graph.node import Output
from hetero_sdk.properties import Config, as_config
from hetero_sdk.rt_info import PERF_COUNTER
from hetero_sdk.runtime.infer_request import InferRequest

if TYPE_CHECKING:
    from hetero_sdk.runtime.infer_request import InferResults
    from hetero_sdk.runtime.profiling import ProfilingInfo, RunContext

__all__ = ["CompiledModel"]

_COMMON_KEYS = (
    "NETWORK_NAME",
    "OPTIMAL_NUMBER_OF_INFER_REQUESTS",
    "EXECUTION_DEVICES",
    "LOADED_FROM_CACHE",
    "SUPPORTED_PROPERTIES",
)


class CompiledModel(abc.ABC):
    """A model compiled for one device: create infer requests from it, or call it directly.

    A plugin subclasses it and implements :meth:`run`; it may override :meth:`export_model`,
    :meth:`get_runtime_model` and :attr:`execution_devices`. Everything else (requests, async
    execution, input checks, profiling plumbing, properties) comes from the SDK.

    :param model: the model as the user gave it (a clone the compiled model owns): it defines
        ``inputs`` and ``outputs`` with their names, types and shapes.
    :param device_name: the device that compiled it (``TEMPLATE.1``).
    :param config: the resolved configuration (readable through :meth:`get_property`).
    :param executor: where async requests run; by default a pool of
        ``OPTIMAL_NUMBER_OF_INFER_REQUESTS`` threads owned by this compiled model.
    """

    def __init__(
        self,
        model: Model,
        device_name: str,
        config: Mapping[str, Any] | None = None,
        executor: Executor | None = None,
    ) -> None:
        self._model = model
        self.device_name = device_name
        self._config = dict(config or {})
        self._executor = executor
        self._owns_executor = executor is None
        self._lock = threading.Lock()
        self._call_request: InferRequest | None = None
        self._op_times: dict[str, float] = {}  # op name -> microseconds, from the last profiled run
        self._model_time: float | None = None  # the last profiled run's time for the whole model
        self.loaded_from_cache = False

    # -- what plugins read and implement --------------------------------------------------------------

    @property
    def model(self) -> Model:
        """The model this compiled model was made from: its ports are the compiled model's ports."""
        return self._model

    @property
    def config(self) -> Mapping[str, Any]:
        """The configuration it was compiled with (the device's properties, merged with the compile's)."""
        return self._config

    @abc.abstractmethod
    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        """Computes the outputs for ``inputs`` (one per model input, already checked).

        Must be safe to call from several threads at once, and must not modify ``inputs``.

        :param inputs: numpy arrays, or this device's remote tensors.
        :param context: where to append profiling rows, and the cancellation flag.
        :returns: one array (or remote tensor of this device) per model output.
        """

    def export_model(self) -> bytes:
        """The compiled model as bytes that ``core.import_model(blob, device)`` rebuilds.

        :raises UnsupportedOperationError: when the device cannot export.
        """
        raise UnsupportedOperationError(f"device {self.device_name} does not support export_model")

    def create_request_state(self) -> Any:
        """The state one infer request keeps for its whole life and gives each of its runs as
        :attr:`RunContext.state` (buffers a device reuses between inferences: a request never runs twice
        at once); None (the default) keeps nothing. A caller that keeps no state passes None: a device
        whose :meth:`run` needs its state then makes one for that call."""
        return None

    def get_runtime_model(self) -> Model:
        """The model as the device runs it; its ops name the original ops in rt_info ``fused_names``,
        and carry the last profiled run's times (:meth:`keep_profile`)."""
        return self.with_profiled_times(self._model.clone())

    def keep_profile(self, rows: Sequence[ProfilingInfo] | None, whole_model: bool = False) -> None:
        """Keeps a profiled run's times for the runtime model's rt_info ``execTimeMcs``: call it at the end
        of :meth:`run` with ``context.profile`` (None, profiling off, keeps the previous times).

        :param whole_model: True when the last row times the whole model at once (one fused executable or
            session): that time goes to every compute op. Otherwise each row's time goes to the op its
            ``node_name`` names.
        """
        if not rows:
            return
        if whole_model:
            self._model_time = rows[-1].real_time.total_seconds() * 1e6
            return
        self._op_times = {row.node_name: row.real_time.total_seconds() * 1e6 for row in rows}

    def with_profiled_times(self, runtime: Model) -> Model:
        """``runtime`` (a model this compiled model runs) with the times :meth:`keep_profile` kept, in each
        op's rt_info ``execTimeMcs``; unchanged before a profiled run."""
        times, whole = self._op_times, self._model_time
        for node in runtime.get_ops() if times or whole is not None else ():
            if node.friendly_name in times:
                node.get_rt_info()[PERF_COUNTER] = times[node.friendly_name]
            elif whole is not None and not node.op.structural:
                node.get_rt_info()[PERF_COUNTER] = whole
        return runtime

    @property
    def execution_devices(self) -> list[str]:
        """``EXECUTION_DEVICES``: the devices that run this model."""
        return [self.device_name]

    @property
    def optimal_number_of_infer_requests(self) -> int:
        """``OPTIMAL_NUMBER_OF_INFER_REQUESTS``: ``NUM_STREAMS`` when set (> 0), else 1 for the LATENCY
        hint and one per CPU core (at least 2) for the throughput hints."""
        streams = self._config.get("NUM_STREAMS")
        if isinstance(streams, int) and streams > 0:
            return streams
        hint = str(self._config.get("PERFORMANCE_HINT", "LATENCY"))
        return 1 if hint == "LATENCY" else max(2, os.cpu_count() or 2)

    # -- the user-facing API -------------------------------------------------------------------------

    @property
    def inputs(self) -> list[Output]:
        """The input ports, with the original model's names, element types and shapes."""
        return self._model.inputs

    @property
    def outputs(self) -> list[Output]:
        """The output ports, with the original model's names, element types and shapes."""
        return self._model.outputs

    def input(self, key: int | str = 0) -> Output:
        """An input port by index or tensor name."""
        return self._model.input(key)

    def output(self, key: int | str = 0) -> Output:
        """An output port by index or tensor name."""
        return self._model.output(key)

    def get_property(self, name: str) -> Any:
        """A property of the compiled model: the common read-only ones, then the compile config.

        :raises UnsupportedPropertyError: for a key the compiled model does not know.
        """
        common: dict[str, Any] = {
            "NETWORK_NAME": self._model.friendly_name,
            "OPTIMAL_NUMBER_OF_INFER_REQUESTS": self.optimal_number_of_infer_requests,
            "EXECUTION_DEVICES": self.execution_devices,
            "LOADED_FROM_CACHE": self.loaded_from_cache,
        }
        if name == "SUPPORTED_PROPERTIES":
            return {key: "RO" for key in (*_COMMON_KEYS, *self._config)}
        if name in common:
            return common[name]
        if name in self._config:
            return self._config[name]
        known = ", ".join(sorted({*_COMMON_KEYS, *self._config}))
        raise UnsupportedPropertyError(f"compiled model has no property {name!r}; it has: {known}")

    def get_property_or(self, name: str, default: Any) -> Any:
        """:meth:`get_property`, or ``default`` when the compiled model does not have ``name``."""
        try:
            return self.get_property(name)
        except UnsupportedPropertyError:
            return default

    def set_property(self, properties: Config) -> None:
        """Compiled models are immutable: every key is read-only here.

        :param properties: a dict, a ``(key, value)`` pair or a list of them, as ``Core.set_property`` takes.
        :raises UnsupportedPropertyError: naming the key, for any key.
        :raises PropertyValueError: for a config of another form.
        """
        for key in as_config(properties):
            raise UnsupportedPropertyError(
                f"property {key!r} of a compiled model is read-only; pass it to compile_model instead"
            )

    def create_infer_request(self) -> InferRequest:
        """A new infer request with its own input and output tensors."""
        return InferRequest(self)

    def infer_new_request(
        self, inputs: Any = None, share_inputs: bool = False, share_outputs: bool = False
    ) -> InferResults:
        """Runs ``inputs`` on a fresh request (thread-safe) and returns its results.

        ``share_inputs`` and ``share_outputs`` mean what they mean to :meth:`InferRequest.infer`.
        """
        return self.create_infer_request().infer(inputs, share_inputs=share_inputs, share_outputs=share_outputs)

    def __call__(self, inputs: Any = None, share_inputs: bool = True, share_outputs: bool = False) -> InferResults:
        """Runs ``inputs`` on the compiled model's own request (like OpenVINO's ``compiled(inputs)``).

        Calls from several threads are serialised; use requests for parallel work. ``share_inputs``
        (True by default, as OpenVINO's ``CompiledModel.__call__``) and ``share_outputs`` mean what they
        mean to :meth:`InferRequest.infer`.
        """
        with self._lock:
            if self._call_request is None:
                self._call_request = self.create_infer_request()
            return self._call_request.infer(inputs, share_inputs=share_inputs, share_outputs=share_outputs)

    @property
    def executor(self) -> Executor:
        """The executor async requests run on."""
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    max_workers=self.optimal_number_of_infer_requests,
                    thread_name_prefix=f"{self.device_name}-infer",
                )
            return self._executor

    def release(self) -> None:
        """Stops the compiled model's own worker threads (pending requests finish first)."""
        if self._owns_executor and self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    def __del__(self) -> None:
        if getattr(self, "_owns_executor", False) and getattr(self, "_executor", None) is not None:
            self._executor.shutdown(wait=False)  # type: ignore[union-attr]

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: '{self._model.friendly_name}' on {self.device_name}>"


def as_host_arrays(values: Sequence[Any]) -> list[np.ndarray]:
    """Copies remote tensors to the host; numpy arrays pass through."""
    return [v if isinstance(v, np.ndarray) else np.asarray(v) for v in values]
