"""Profiling rows of an inference, like ``ov.ProfilingInfo``."""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, NamedTuple

from hetero_sdk.errors import RequestCancelledError

__all__ = ["ProfilingInfo", "RunContext", "Status"]


class Status(enum.StrEnum):
    """What happened to an op in one inference."""

    EXECUTED = "EXECUTED"
    NOT_RUN = "NOT_RUN"
    OPTIMIZED_OUT = "OPTIMIZED_OUT"


class ProfilingInfo(NamedTuple):
    """One row of ``request.get_profiling_info()``."""

    node_name: str
    node_type: str
    exec_type: str
    status: Status
    real_time: timedelta
    cpu_time: timedelta


class RunContext:
    """What a plugin's :meth:`CompiledModel.run` gets besides its inputs.

    :ivar profile: the list to append :class:`ProfilingInfo` rows to, or None when ``PERF_COUNT`` is off.
    :ivar cancelled: set when the request is cancelled; long runs check it between steps (an infer
        request passes its own event, cleared before each run, rather than making one per run).
    :ivar remote_outputs: True when the caller wants device-resident outputs (a remote context).
    :ivar state: what the compiled model's ``create_request_state()`` made for the request running it,
        kept for the request's whole life and passed to each of its runs (a device may keep buffers there
        between inferences: a request never runs twice at once), or None when the caller keeps none (the
        device then keeps nothing between runs).
    :ivar host_outputs_later: True when the caller turns the outputs into host arrays itself, with
        ``np.asarray``, once it needs them: a device whose runs end asynchronously may then return its
        own arrays with their copies back still in flight, so that the caller's bookkeeping overlaps the
        run instead of following it. ``InferRequest.infer`` sets it; other callers get host arrays (an
        async inference's ``wait()`` and callback mean the run has ended).
    """

    __slots__ = ("cancelled", "host_outputs_later", "profile", "remote_outputs", "state")

    def __init__(
        self,
        profile: bool,
        remote_outputs: bool = False,
        cancelled: threading.Event | None = None,
        state: Any = None,
        host_outputs_later: bool = False,
    ) -> None:
        self.profile: list[ProfilingInfo] | None = [] if profile else None
        self.cancelled = cancelled if cancelled is not None else threading.Event()
        self.remote_outputs = remote_outputs
        self.state = state
        self.host_outputs_later = host_outputs_later

    def with_state(self, state: Any) -> RunContext:
        """This context for an inner compiled model that has its own ``state`` (a wrapper running another
        compiled model): the same profile rows, cancellation and output choices."""
        inner = RunContext(False, self.remote_outputs, self.cancelled, state, self.host_outputs_later)
        inner.profile = self.profile
        return inner

    def check_cancelled(self) -> None:
        """:raises RequestCancelledError: when the request was cancelled."""
        if self.cancelled.is_set():
            raise RequestCancelledError("the infer request was cancelled")

    @contextmanager
    def timed(self, node_name: str, node_type: str, exec_type: str) -> Iterator[None]:
        """Times the block and appends a row when profiling is on."""
        if self.profile is None:
            yield
            return
        wall, cpu = time.perf_counter(), time.thread_time()
        yield
        self.profile.append(
            ProfilingInfo(
                node_name,
                node_type,
                exec_type,
                Status.EXECUTED,
                timedelta(seconds=time.perf_counter() - wall),
                timedelta(seconds=time.thread_time() - cpu),
            )
        )
