"""Running checks in a forked worker process, so that a device that crashes the interpreter or hangs
fails one check and the run goes on.

The pytest process never loads the device: it forks one worker (a copy of the collected session),
which sets up the fixtures, loads the device once and runs checks one at a time, sending pytest's
reports back through a pipe. When the worker dies, the check it was running fails with the exit
status; when a check runs past its time limit, the worker is killed and the check fails. The next
check starts a fresh worker. Devices whose runtimes start threads (XLA) are safe: they only ever
live in the worker, which never forks.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import time
import traceback
import warnings
from multiprocessing.connection import Connection, Pipe
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["ForkedRunner"]


class ForkedRunner:
    """Runs pytest items in a worker forked from the pytest process.

    :param config: the pytest config.
    :param timeout_s: the time limit of one check.
    :param xfail_reason: the declared expected-failure reason of an item, or None.
    """

    def __init__(self, config: pytest.Config, timeout_s: float, xfail_reason: Callable[[pytest.Item], str | None]):
        self._config = config
        self._timeout = timeout_s
        self._xfail_reason = xfail_reason
        self._pid: int | None = None
        self._conn: Connection | None = None
        self._index: dict[str, int] = {}

    def run(self, item: pytest.Item, nextitem: pytest.Item | None, isolated: Callable[[Any], bool]) -> list[Any]:
        """Runs ``item`` (setup, call, teardown) in the worker; returns its reports."""
        session = item.session
        if not self._index:
            self._index = {it.nodeid: i for i, it in enumerate(session.items)}
        following = self._index[nextitem.nodeid] if nextitem is not None and isolated(nextitem) else None
        if self._pid is None:
            self._spawn(session)
        assert self._conn is not None
        start = time.time()
        try:
            self._conn.send(("run", self._index[item.nodeid], following))
            ready = self._conn.poll(self._timeout)
            payload = self._conn.recv() if ready else None
        except (EOFError, OSError):
            return self._synthesize(item, start, f"{self._crash_message()}; {self._rerun(item)}")
        if payload is None:
            self._kill()
            hung = f"hung for more than {self._timeout:g} s (set --conformance-timeout to wait longer)"
            return self._synthesize(item, start, f"{hung}; {self._rerun(item)}")
        if isinstance(payload, str):
            return self._synthesize(item, start, f"the conformance worker failed: {payload}")
        hook = self._config.hook
        return [hook.pytest_report_from_serializable(config=self._config, data=data) for data in payload]

    def close(self) -> None:
        """Stops the worker (its fixtures are torn down first)."""
        if self._pid is None or self._conn is None:
            return
        try:
            self._conn.send(("stop", None, None))
            self._conn.poll(30)
        except (EOFError, OSError):
            pass
        self._kill()

    # -- internals ----------------------------------------------------------------------------------

    def _spawn(self, session: pytest.Session) -> None:
        parent, child = Pipe()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # "fork with threads": the parent has none of ours
            pid = os.fork()
        if pid == 0:  # the worker
            parent.close()
            code = 0
            try:
                _serve(session, child)
            except BaseException:
                code = 3
            finally:
                os._exit(code)
        child.close()
        self._pid, self._conn = pid, parent

    def _crash_message(self) -> str:
        status = self._reap(block=True)
        self._pid = self._conn = None
        if status is None:
            return "device crashed the interpreter (the worker vanished)"
        code = os.waitstatus_to_exitcode(status)
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            return f"device crashed the interpreter (killed by signal {name}, exit code {code})"
        return f"device crashed the interpreter (exit code {code})"

    def _rerun(self, item: pytest.Item) -> str:
        """How to run ``item`` again alone and in-process, where a crash prints its Python traceback."""
        command = ["python -X faulthandler -m pytest --pyargs hetero_sdk.conformance"]
        for option in ("device", "device_config", "conformance_plugin"):
            value = self._config.getoption(option, None)
            if value is not None:
                command.append(f"--{option.replace('_', '-')} {shlex.quote(str(value))}")
        command.append(f"--conformance-isolation none -k {shlex.quote(item.name)}")
        return "to reproduce it: " + " ".join(command)

    def _kill(self) -> None:
        if self._pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
            self._reap(block=True)
        if self._conn is not None:
            self._conn.close()
        self._pid = self._conn = None

    def _reap(self, block: bool) -> int | None:
        if self._pid is None:
            return None
        try:
            _, status = os.waitpid(self._pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return None
        return status

    def _synthesize(self, item: pytest.Item, start: float, message: str) -> list[pytest.TestReport]:
        stop = time.time()
        common: dict[str, Any] = {
            "nodeid": item.nodeid,
            "location": item.location,
            "keywords": dict.fromkeys(item.keywords, 1),
            "user_properties": list(item.user_properties),
            "start": start,
            "stop": stop,
        }
        reason = self._xfail_reason(item)
        if reason is not None:
            longrepr: Any = (str(item.location[0]), (item.location[1] or 0) + 1, f"{message} ({reason})")
            call = pytest.TestReport(outcome="skipped", longrepr=longrepr, when="call", duration=stop - start, **common)
            call.wasxfail = reason  # type: ignore[attr-defined]
        else:
            call = pytest.TestReport(outcome="failed", longrepr=message, when="call", duration=stop - start, **common)
        return [
            pytest.TestReport(outcome="passed", longrepr=None, when="setup", duration=0.0, **common),
            call,
            pytest.TestReport(outcome="passed", longrepr=None, when="teardown", duration=0.0, **common),
        ]


def _serve(session: pytest.Session, conn: Connection) -> None:
    """The worker's loop: run the items the parent names, send their reports back."""
    from _pytest.runner import runtestprotocol

    config = session.config
    capman = config.pluginmanager.getplugin("capturemanager")
    if capman is not None:
        # The capture files are shared with the parent after fork: take private ones.
        capman.stop_global_capturing()
        capman.start_global_capturing()
        capman.suspend_global_capture()
    while True:
        try:
            command, index, following = conn.recv()
        except (EOFError, OSError):
            return
        if command == "stop":
            conn.send("stopped")
            return
        try:
            item = session.items[index]
            nextitem = session.items[following] if following is not None else None
            reports = runtestprotocol(item, nextitem=nextitem, log=False)
            payload: Any = [config.hook.pytest_report_to_serializable(config=config, report=r) for r in reports]
        except BaseException:
            payload = traceback.format_exc()
        conn.send(payload)
