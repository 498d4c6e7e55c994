"""Running fuzz cases in a worker process, so that a hang or a crash is seen and reported, not suffered.

The worker (started with ``spawn``: no fork of a process whose threads run) runs :func:`evaluate` on
each case it is sent and tells the supervisor which phase it is in; the supervisor kills a worker that
exceeds the time bound and starts a new one for the next case.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from hetero_sdk.conformance.fuzz.evaluation import REFERENCE_FAILED, evaluate
from hetero_sdk.conformance.fuzz.outcome import CRASH, HANG, Case, Outcome

__all__ = ["WARM_UP", "CaseRunner", "Evaluator"]

WARM_UP = "warm-up"
"""The label of the empty case a new worker runs first, untimed, so that its imports are done."""


Evaluator = Callable[[Case, Callable[[str], None]], Outcome]
"""What the worker runs on a case: :func:`~hetero_sdk.conformance.fuzz.evaluation.evaluate` or, to check
the supervisor itself, a module-level function of the same signature."""


def _serve(conn: Connection, evaluator: Evaluator) -> None:
    """The worker's loop: one case in, phases and one outcome out, until the pipe closes."""
    while True:
        try:
            case = conn.recv()
        except EOFError:
            return
        conn.send(("done", evaluator(case, lambda phase: conn.send(("phase", phase)))))


class CaseRunner:
    """Runs cases in a worker process with a time bound per case.

    :param time_limit_s: the longest a case may take (reading, compiling, inferring, and the reference).
    :param evaluator: what the worker runs on each case (a module-level function: it is sent by name).
    """

    def __init__(self, time_limit_s: float = 10.0, evaluator: Evaluator = evaluate) -> None:
        self.time_limit_s = time_limit_s
        self._evaluator = evaluator
        self._context = multiprocessing.get_context("spawn")
        self._process: Any = None
        self._conn: Connection | None = None

    def __enter__(self) -> CaseRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> Connection:
        if self._conn is None:
            parent, child = self._context.Pipe()
            self._process = self._context.Process(target=_serve, args=(child, self._evaluator), daemon=True)
            self._process.start()
            child.close()
            self._conn = parent
            self._conn.send(Case("onnx", b"", label=WARM_UP))  # imports done before the first timed case
            self._wait_done(deadline=time.monotonic() + 300)
        return self._conn

    def _wait_done(self, deadline: float) -> tuple[str, Outcome | None]:
        """Reads the worker's messages until its outcome: (last phase, outcome or None when it died
        or the deadline passed; the phase is then ``dead:PHASE`` or ``late:PHASE``)."""
        assert self._conn is not None
        phase = "start"
        while True:
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0 or not self._conn.poll(remaining):
                    return f"late:{phase}", None
                kind, value = self._conn.recv()
            except (EOFError, OSError):
                return f"dead:{phase}", None
            if kind == "done":
                return phase, value
            phase = value

    def run(self, case: Case) -> Outcome:
        """Runs ``case`` and returns its outcome; a case that outlives the time bound is a ``hang``, one
        whose worker dies a ``crash`` (ONNX Runtime's own hang or crash is ``reference_failed``)."""
        conn = self._start()
        conn.send(case)
        phase, outcome = self._wait_done(time.monotonic() + self.time_limit_s)
        if outcome is not None:
            return outcome
        exitcode = self._stop()
        how, _, where = phase.partition(":")
        if where == "reference":
            return Outcome(REFERENCE_FAILED, f"ONNX Runtime {'hung' if how == 'late' else 'crashed'}")
        if how == "late":
            return Outcome(HANG, f"no answer within {self.time_limit_s:g} s (phase {where})")
        return Outcome(CRASH, f"the worker died (exit code {exitcode}) in phase {where}")

    def _stop(self) -> int | None:
        """Kills the worker (the next case starts a new one); returns its exit code."""
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join(10)
        exitcode = None if self._process is None else self._process.exitcode
        if self._conn is not None:
            self._conn.close()
        self._process, self._conn = None, None
        return exitcode

    def close(self) -> None:
        """Stops the worker."""
        self._stop()
