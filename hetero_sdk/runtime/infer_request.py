"""Infer requests: tensors in, ``infer`` or ``start_async``/``wait``, tensors out (``ov.InferRequest``)."""

from __future__ import annotations

import numbers
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import CancelledError, Future
from typing import TYPE_CHECKING, Any

import numpy as np

from hetero_sdk.errors import (
    HeteroSDKError,
    InferenceError,
    RequestBusyError,
    RequestCancelledError,
    suggest,
)
from hetero_sdk.graph.node import Output
from hetero_sdk.runtime.context import RemoteTensor
from hetero_sdk.runtime.infer_results import InferResults, TensorKey
from hetero_sdk.runtime.input_values import checked_input, checked_output_buffer, copied_inputs
from hetero_sdk.runtime.profiling import ProfilingInfo, RunContext
from hetero_sdk.runtime.tensor import Tensor

if TYPE_CHECKING:
    from hetero_sdk.runtime.compiled_model import CompiledModel

__all__ = ["InferRequest", "InferResults"]


class InferRequest:
    """One inference at a time on a compiled model, with its own tensors.

    Not meant to be shared between threads while it runs: touching a running request raises
    :class:`RequestBusyError`. Use one request per thread, or :class:`~hetero_sdk.AsyncInferQueue`.
    """

    def __init__(self, compiled_model: CompiledModel) -> None:
        self._compiled = compiled_model
        self._in_ports = compiled_model.inputs
        self._out_ports = compiled_model.outputs
        self._out_names = InferResults.index_names(self._out_ports)
        self._inputs: list[Any] = [None] * len(self._in_ports)
        self._user_outputs: list[np.ndarray | None] = [None] * len(self._out_ports)
        self._outputs: list[Any] | None = None
        self._profiling = bool(compiled_model.get_property_or("PERF_COUNT", False))
        self._host_outputs: list[np.ndarray] | None = None
        self._profile: Sequence[ProfilingInfo] = ()
        self._buffered = False  # whether some output has a buffer set
        self._complete = not self._in_ports  # whether every input has been set
        self._lock = threading.Lock()
        self._future: Future[None] | None = None
        self._context: RunContext | None = None
        self._callback: tuple[Callable[[Any], None], Any] | None = None
        self._callback_error: BaseException | None = None
        self._userdata: Any = None
        self._cancel = threading.Event()
        self._state: Any = compiled_model.create_request_state()  # RunContext.state, for the request's life
        # Bound once: a port's names and the port itself to (kind, index), inputs first, and what a
        # host input must be (element type; shape when static) for the per-call fast path.
        self._keys: dict[str | Output, tuple[str, int]] = {}
        for kind, ports in (("output", self._out_ports), ("input", self._in_ports)):
            for i, port in enumerate(ports):
                self._keys.update(dict.fromkeys((port, *port.names), (kind, i)))
        self._expected: list[tuple[np.dtype[Any], tuple[int, ...] | None]] = [
            (p.element_type.numpy, tuple(p.shape) if p.partial_shape.is_static else None) for p in self._in_ports
        ]
        """Per input, the dtype and a shape an array takes the fast path of :meth:`_checked_input` with:
        the static shape, or the last shape accepted for a dynamic input."""
        self._latency = 0.0
        self.remote_outputs = False
        """Set True to get device-resident outputs (remote tensors) when the device has them."""

    @property
    def compiled_model(self) -> CompiledModel:
        """The compiled model this request runs."""
        return self._compiled

    # -- tensors ------------------------------------------------------------------------------------

    def set_tensor(self, key: str | Output, tensor: Any) -> None:
        """Sets an input tensor (by tensor name or port), or an output buffer to write results into."""
        self._ensure_idle()
        kind, index = self._find(key)
        if kind == "input":
            self._inputs[index] = self._checked_input(index, tensor)
        else:
            self._user_outputs[index] = self._checked_output_buffer(index, tensor)
            self._buffered = True

    def get_tensor(self, key: str | Output) -> Any:
        """An input tensor, or an output tensor of the last inference, by tensor name or port."""
        kind, index = self._find(key)
        return self.get_input_tensor(index) if kind == "input" else self.get_output_tensor(index)

    def set_input_tensor(self, index: int, tensor: Any) -> None:
        """Sets input ``index``."""
        self._ensure_idle()
        position = self._position(index, self._in_ports, "input")
        self._inputs[position] = self._checked_input(position, tensor)

    def set_input_tensors(self, inputs: Mapping[TensorKey, Any] | Sequence[Any]) -> None:
        """Sets several inputs, by key (index, name or port) or in order."""
        items = inputs.items() if isinstance(inputs, Mapping) else enumerate(inputs)
        for key, tensor in items:
            self.set_input_tensor(self._input_index(key), tensor)

    def get_input_tensor(self, index: int = 0) -> Any:
        """Input ``index`` as a :class:`Tensor` sharing the request's memory (a remote tensor as set).

        A static input not set yet gets a zero-filled tensor here, as OpenVINO pre-allocates: fill it
        (``tensor.data[:] = ...``) and :meth:`infer` without inputs. Tensors set are kept across calls.

        :raises InferenceError: for a dynamic input that has not been set (its shape is not known).
        """
        position = self._position(index, self._in_ports, "input")
        value = self._inputs[position]
        if value is None:
            port = self._in_ports[position]
            if not port.partial_shape.is_static:
                raise InferenceError(
                    f"input {port.any_name!r} has the dynamic shape {port.partial_shape}, so the request holds no "
                    "tensor for it; set one first: request.set_tensor(name, hs.Tensor(array))"
                )
            value = self._inputs[position] = np.zeros(tuple(port.shape), port.element_type.numpy)
        return value if isinstance(value, RemoteTensor) else Tensor(value)

    def set_output_tensor(self, index: int, buffer: np.ndarray | Tensor) -> None:
        """Makes inference write output ``index`` into ``buffer`` (a writable array of the right shape)."""
        self._ensure_idle()
        position = self._position(index, self._out_ports, "output")
        self._user_outputs[position] = self._checked_output_buffer(position, buffer)
        self._buffered = True

    def get_output_tensor(self, index: int = 0) -> Any:
        """Output ``index`` as a :class:`Tensor` (a remote tensor when :attr:`remote_outputs` is set).

        Before the first inference, a static output gets a zero-filled tensor inferences write into.

        :raises InferenceError: for a dynamic output before any inference has completed.
        """
        position = self._position(index, self._out_ports, "output")
        if self._outputs is None:
            buffer = self._user_outputs[position]
            port = self._out_ports[position]
            if buffer is None and (not port.partial_shape.is_static or self.is_busy):
                raise InferenceError("no inference has completed on this request since it last started one")
            if buffer is None:
                self.set_output_tensor(position, buffer := np.zeros(tuple(port.shape), port.element_type.numpy))
            return Tensor(buffer)
        return self._outputs[position] if self.remote_outputs else Tensor(self._host()[position])

    @property
    def latency(self) -> float:
        """Milliseconds the last inference took on the device (0.0 before the first), as OpenVINO's."""
        return self._latency

    @property
    def results(self) -> InferResults:
        """The outputs of the last inference."""
        if self._outputs is None:
            raise InferenceError("no inference has completed on this request since it last started one")
        return InferResults(self._out_ports, self._host(), self._out_names)

    # -- running ------------------------------------------------------------------------------------

    def infer(self, inputs: Any = None, share_inputs: bool = False, share_outputs: bool = False) -> InferResults:
        """Runs one inference synchronously. The completion callback is not called.

        :param inputs: a dict (index, tensor name or port to array), a list in input order, or one
            array for a single-input model; None uses the tensors already set.
        :param share_inputs: as OpenVINO's; a synchronous inference never copies the arrays (it reads
            them during the call): they become the request's input tensors either way.
        :param share_outputs: False (OpenVINO's default): results of their own, copied where an output
            lives in a request buffer (:meth:`set_output_tensor`, a pre-allocated output tensor). True:
            those results are the request's buffers, overwritten by the next inference.
        :raises InferenceError: for wrong inputs or a device failure.
        :raises RequestBusyError: when an async inference is running on this request.
        """
        self._start(inputs, later=True)  # host outputs later: reading the results below waits for the run
        try:
            self._run()
        finally:
            with self._lock:
                self._context = None
        if self._buffered and not share_outputs:
            copied = [v.copy() if b is not None else v for v, b in zip(self._host(), self._user_outputs)]
            return InferResults(self._out_ports, copied, self._out_names)
        return self.results

    def start_async(self, inputs: Any = None, userdata: Any = None, share_inputs: bool = False) -> None:
        """Starts one inference in the background; :meth:`wait` for it.

        :param inputs: as :meth:`infer` takes them; None uses the tensors already set.
        :param userdata: passed to the completion callback of this inference instead of the one given
            to :meth:`set_callback`.
        :param share_inputs: False (the default, as OpenVINO's): ``inputs`` are copied before the
            inference starts, so the caller may reuse its arrays at once. True: they are used in place
            (do not write them until the inference ends).
        :raises RequestBusyError: when an inference is already running on this request.
        """
        self._start(inputs if share_inputs or inputs is None else copied_inputs(inputs))
        self._userdata = userdata
        self._callback_error = None
        try:
            future = self._compiled.executor.submit(self._run_async)
        except BaseException:
            with self._lock:
                self._context = None
            raise
        with self._lock:
            self._future = future

    def wait(self) -> None:
        """Blocks until the running inference ends, re-raising its error (or its callback's)."""
        self.wait_for(None)

    def wait_for(self, timeout: float | None) -> bool:
        """Waits at most ``timeout`` seconds (None: forever); True when the inference has ended.

        :raises RequestCancelledError: when the inference was cancelled.
        :raises InferenceError: when it failed.
        :raises TypeError: when ``timeout`` is not a number of seconds (a string, a bool).
        """
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, numbers.Real)):
            raise TypeError(f"wait_for takes a timeout in seconds (a number, or None: no limit), not {timeout!r}")
        future = self._future
        if future is None:
            return True
        try:
            future.result(timeout=timeout)
        except TimeoutError:
            return False
        except CancelledError:
            self._finish()
            raise RequestCancelledError("the infer request was cancelled before it started") from None
        except BaseException:
            self._finish()
            raise
        self._finish()
        if self._callback_error is not None:
            error, self._callback_error = self._callback_error, None
            raise error
        return True

    def cancel(self) -> None:
        """Cancels the running or pending inference; :meth:`wait` then raises RequestCancelledError."""
        with self._lock:
            future, context = self._future, self._context
        if future is None or context is None:
            return
        if future.cancel():
            with self._lock:
                self._context = None
            self._call_back()
        else:
            context.cancelled.set()

    def set_callback(self, callback: Callable[[Any], None], userdata: Any = None) -> None:
        """Calls ``callback(userdata)`` when an async inference completes (not for sync infer)."""
        self._callback = (callback, userdata)

    @property
    def is_busy(self) -> bool:
        """True while an inference runs or is pending on this request."""
        with self._lock:
            return self._context is not None

    def get_profiling_info(self) -> list[ProfilingInfo]:
        """Per-op timings of the last inference; empty unless compiled with ``PERF_COUNT``."""
        return list(self._profile)

    @property
    def profiling_info(self) -> list[ProfilingInfo]:
        """Per-op timings of the last inference."""
        return self.get_profiling_info()

    # -- internals ----------------------------------------------------------------------------------

    def _start(self, inputs: Any, later: bool = False) -> None:
        with self._lock:
            if self._context is not None:
                raise RequestBusyError("the infer request is running; wait() for it before using it again")
            if self._cancel.is_set():  # (clearing takes the event's lock: only when needed)
                self._cancel.clear()
            self._context = RunContext(self._profiling, self.remote_outputs, self._cancel, self._state, later)
            self._outputs = self._host_outputs = None  # (held through the run, they hold its device memory)
        try:
            if inputs is not None:
                if type(inputs) is dict or isinstance(inputs, (Mapping, list, tuple)):
                    self._set_inputs_unlocked(inputs)
                else:
                    self._set_inputs_unlocked([inputs])
            if not self._complete:  # (inputs once set stay set)
                missing = [p.any_name for p, v in zip(self._in_ports, self._inputs) if v is None]
                if missing:
                    raise InferenceError(f"input(s) {missing} were not set; pass them to infer() or set_tensor()")
                self._complete = True
        except BaseException:
            with self._lock:
                self._context = None
            raise

    def _set_inputs_unlocked(self, inputs: Mapping[TensorKey, Any] | Sequence[Any]) -> None:
        given = type(inputs)
        mapping = given is dict or (given is not list and given is not tuple and isinstance(inputs, Mapping))
        if not mapping and len(inputs) != len(self._in_ports):
            raise InferenceError(f"the model has {len(self._in_ports)} input(s), {len(inputs)} were given")
        if given is list or given is tuple:  # in input order: every position exists
            for index, tensor in enumerate(inputs):
                self._inputs[index] = self._checked_input(index, tensor)
            return
        items = inputs.items() if mapping else enumerate(inputs)  # type: ignore[union-attr]
        keys = self._keys
        for key, tensor in items:
            found = keys.get(key) if type(key) is str else None
            index = found[1] if found is not None and found[0] == "input" else self._input_index(key)
            self._inputs[index] = self._checked_input(index, tensor)

    def _run(self) -> None:
        context = self._context
        assert context is not None
        cancelled = context.cancelled
        try:
            if cancelled.is_set():
                context.check_cancelled()
            began = time.perf_counter()
            outputs = self._compiled.run(list(self._inputs), context)
            self._latency = (time.perf_counter() - began) * 1000.0
            if cancelled.is_set():
                context.check_cancelled()
        except HeteroSDKError:
            raise
        except Exception as exc:
            raise self._device_failure(exc) from exc
        if len(outputs) != len(self._out_ports):
            raise InferenceError(
                f"device {self._compiled.device_name} returned {len(outputs)} outputs for {len(self._out_ports)}"
            )
        self._outputs = list(outputs)
        self._host_outputs = None
        self._profile = context.profile or ()
        if not self._buffered:
            return
        for i, buffer in enumerate(self._user_outputs):
            if buffer is not None:
                value = self._on_host(outputs[i])
                if value.shape != buffer.shape:
                    raise InferenceError(
                        f"output {self._out_ports[i].any_name!r} has shape {list(value.shape)}, "
                        f"the buffer set for it has {list(buffer.shape)}"
                    )
                np.copyto(buffer, value)

    def _run_async(self) -> None:
        error: BaseException | None = None
        try:
            self._run()
        except BaseException as exc:
            error = exc
        finally:
            with self._lock:
                self._context = None
        self._call_back()
        if error is not None:
            raise error

    def _call_back(self) -> None:
        # Called after every async inference, failed or cancelled ones too, so that queues built on
        # callbacks always get their request back; the request is idle again by then.
        if self._callback is not None:
            callback, userdata = self._callback
            try:
                callback(userdata if self._userdata is None else self._userdata)
            except BaseException as exc:  # surfaces from wait(), as in OpenVINO
                self._callback_error = exc

    def _finish(self) -> None:
        with self._lock:
            self._future = None

    def _host(self) -> list[np.ndarray]:
        if self._host_outputs is None:
            outputs = self._outputs
            assert outputs is not None
            if not self._buffered:
                for value in outputs:  # (a loop: cheaper than all() over a generator)
                    if type(value) is not np.ndarray:
                        break
                else:
                    self._host_outputs = outputs
                    return outputs
            self._host_outputs = [
                buffer if buffer is not None else (v if isinstance(v, np.ndarray) else self._on_host(v))
                for v, buffer in zip(outputs, self._user_outputs)
            ]
        return self._host_outputs

    def _on_host(self, value: Any) -> np.ndarray:
        """An output as a host array; the run may end here (``RunContext.host_outputs_later``), or fail."""
        try:
            return np.asarray(value)
        except HeteroSDKError:
            raise
        except Exception as exc:
            raise self._device_failure(exc) from exc

    def _device_failure(self, exc: Exception) -> InferenceError:
        device, network = self._compiled.device_name, self._compiled.get_property("NETWORK_NAME")
        return InferenceError(f"device {device} failed to run '{network}': {type(exc).__name__}: {exc}")

    def _ensure_idle(self) -> None:
        if self.is_busy:
            raise RequestBusyError("the infer request is running; wait() for it before changing its tensors")

    def _find(self, key: str | Output) -> tuple[str, int]:
        found = self._keys.get(key) if isinstance(key, (str, Output)) else None
        if found is not None:
            return found
        inputs, outputs = _names(self._in_ports), _names(self._out_ports)
        hint = suggest(key, [*inputs, *outputs])
        raise InferenceError(
            f"no input or output named {key!r}; the model's inputs: {', '.join(inputs)}; its outputs: "
            f"{', '.join(outputs)}" + (f"; {hint}" if hint else "")
        )

    def _input_index(self, key: TensorKey) -> int:
        if isinstance(key, int):
            return self._position(key, self._in_ports, "input")
        found = self._keys.get(key) if isinstance(key, (str, Output)) else None
        if found is None:
            inputs = _names(self._in_ports)
            hint = suggest(key, inputs)
            raise InferenceError(
                f"no input named {key!r}; the model's inputs: {', '.join(inputs)}" + (f"; {hint}" if hint else "")
            )
        kind, index = found
        if kind != "input":
            raise InferenceError(f"{key!r} names an output, not an input")
        return index

    @staticmethod
    def _position(index: int, ports: Sequence[Output], kind: str) -> int:
        if not isinstance(index, int) or not -len(ports) <= index < len(ports):
            raise InferenceError(f"{kind} index {index!r} does not exist; the model has {len(ports)} {kind}(s)")
        return index % len(ports)

    def _checked_input(self, index: int, tensor: Any) -> Any:
        if type(tensor) is np.ndarray:
            dtype, shape = self._expected[index]
            if tensor.dtype == dtype and tensor.shape == shape:
                return tensor
        array = checked_input(self._in_ports[index], tensor)
        given = tensor.data if isinstance(tensor, Tensor) else tensor  # (strings: checked value by value)
        if array is given and isinstance(array, np.ndarray) and not self._in_ports[index].element_type.is_string:
            self._expected[index] = (array.dtype, array.shape)  # the next array of this shape: fast path
        return array

    def _checked_output_buffer(self, index: int, buffer: Any) -> np.ndarray:
        return checked_output_buffer(self._out_ports[index], buffer)


def _names(ports: Sequence[Output]) -> list[str]:
    """Every tensor name of ``ports``, sorted."""
    return sorted(name for port in ports for name in port.names)
