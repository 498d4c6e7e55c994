"""A pool of infer requests fed from one thread, like ``ov.AsyncInferQueue``."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from hetero_sdk.runtime.infer_request import InferRequest

if TYPE_CHECKING:
    from hetero_sdk.runtime.compiled_model import CompiledModel

__all__ = ["AsyncInferQueue"]


class AsyncInferQueue:
    """Runs many inferences on ``jobs`` requests, calling a callback as each completes.

    :param compiled_model: the model to run.
    :param jobs: the number of requests (0: the model's ``OPTIMAL_NUMBER_OF_INFER_REQUESTS``).
    """

    def __init__(self, compiled_model: CompiledModel, jobs: int = 0) -> None:
        count = jobs or compiled_model.optimal_number_of_infer_requests
        self._requests = [compiled_model.create_infer_request() for _ in range(count)]
        self._idle: queue.Queue[int] = queue.Queue()
        for i in range(count):
            self._idle.put(i)
        self._callback: Callable[[InferRequest, Any], None] | None = None
        self._errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._pending = 0
        self._all_done = threading.Condition(self._lock)

    def set_callback(self, callback: Callable[[InferRequest, Any], None]) -> None:
        """Calls ``callback(request, userdata)`` after each inference."""
        self._callback = callback

    def start_async(self, inputs: Any = None, userdata: Any = None, share_inputs: bool = False) -> None:
        """Starts one inference on the next idle request, waiting for one if all are busy.

        :param inputs: as :meth:`InferRequest.infer` takes them; None runs the request on the tensors
            set on it (``queue[i].get_input_tensor(j).data[:] = ...``, as OpenVINO's benchmark does).
        :param userdata: passed to the callback with the request.
        :param share_inputs: as :meth:`InferRequest.start_async` (False: ``inputs`` are copied first).
        """
        index = self._idle.get()
        request = self._requests[index]
        with self._lock:
            self._pending += 1
        request.set_callback(lambda data: self._done(index, data), userdata)
        try:
            request.start_async(inputs, userdata, share_inputs=share_inputs)
        except BaseException:
            self._release(index)
            raise

    def wait_all(self) -> None:
        """Waits for every started inference; re-raises the first failure, if any."""
        with self._all_done:
            self._all_done.wait_for(lambda: self._pending == 0)
            errors, self._errors = self._errors, []
        for request in self._requests:
            try:
                request.wait()
            except BaseException as exc:
                errors.append(exc)
        if errors:
            raise errors[0]

    def is_ready(self) -> bool:
        """True when a request is idle."""
        return not self._idle.empty()

    def get_idle_request_id(self) -> int:
        """The index of an idle request, waiting for one; the next :meth:`start_async` runs that request,
        so its tensors can be filled first (``queue[i].get_input_tensor().data[:] = ...``)."""
        with self._idle.not_empty:
            while not self._idle.queue:
                self._idle.not_empty.wait()
            return self._idle.queue[0]

    def __getitem__(self, index: int) -> InferRequest:
        return self._requests[index]

    def __len__(self) -> int:
        return len(self._requests)

    def __iter__(self) -> Iterator[InferRequest]:
        return iter(self._requests)

    def _done(self, index: int, userdata: Any) -> None:
        try:
            if self._callback is not None:
                self._callback(self._requests[index], userdata)
        except BaseException as exc:
            with self._lock:
                self._errors.append(exc)
        finally:
            self._release(index)

    def _release(self, index: int) -> None:
        with self._all_done:
            self._pending -= 1
            self._all_done.notify_all()
        self._idle.put(index)
