"""Finding the Ray cluster to join, and starting a local one without forking this process.

Ray's ``ray.init()`` starts a local instance by forking this process for each of its node processes
(GCS, raylet, ...), with Python code run in the child before ``exec``; with JAX's threads running here
that may deadlock (JAX warns: ``os.fork() was called ... JAX is multithreaded``). So a local instance
is started by a helper process of its own (``python -m hetero_sdk_ray.local_head``, started by
``subprocess`` without a ``preexec_fn``, so no Python code runs between fork and exec), and this
process joins it as a driver. The helper lives as long as this process: it stops its instance when its stdin
closes (this process exited or called :meth:`LocalHead.stop`).

Run as a script, this module is that helper.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import tempfile
import threading
from typing import IO, Any

import ray
from ray._private.utils import read_ray_address  # Ray's reader of its record (there is no public one)

__all__ = ["LocalHead", "live_local_cluster"]

_START_TIMEOUT_S = 120.0


def live_local_cluster() -> str | None:
    """The GCS address of the Ray cluster recorded on this machine by ``ray start`` when it still answers,
    else None (no record, or the record of a cluster that has since died or was stopped).

    The record is Ray's own (``ray_current_cluster`` in Ray's temp folder, ``RAY_TMPDIR`` or /tmp);
    a cluster answers when its GCS port accepts a connection.
    """
    recorded = read_ray_address()
    if not recorded:
        return None
    host, _, port = recorded.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=1.0):
            return recorded
    except (OSError, ValueError):
        return None


class LocalHead:
    """A local Ray instance run by a helper process; :attr:`address` is its GCS address.

    :param num_cpus: the CPUs the instance offers.
    :raises RuntimeError: when the helper cannot start the instance (its message says why).
    """

    def __init__(self, num_cpus: int) -> None:
        env = dict(os.environ)
        env.pop("RAY_ADDRESS", None)
        # a file, not a pipe nobody reads that could fill up; closed by stop()
        self._errors = tempfile.TemporaryFile("w+")  # noqa: SIM115
        self._process = subprocess.Popen(
            [sys.executable, "-m", "hetero_sdk_ray.local_head", str(num_cpus)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._errors,
            env=env,
            text=True,
        )
        answer = self._read_answer()
        if "address" not in answer:
            self.stop()
            raise RuntimeError(answer.get("error") or "the helper process that starts Ray exited")
        self.address: str = answer["address"]

    def _read_answer(self) -> dict[str, Any]:
        out: IO[str] = self._process.stdout  # type: ignore[assignment]
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.append(out.readline()), daemon=True)
        reader.start()
        reader.join(_START_TIMEOUT_S)
        if not lines or not lines[0]:
            self._process.kill()
            self._process.wait()
            self._errors.seek(0)
            return {"error": f"no answer in {_START_TIMEOUT_S:.0f} s: {self._errors.read().strip()[-2000:]}"}
        try:
            answer = json.loads(lines[0])
        except ValueError:
            return {"error": f"unexpected answer {lines[0][:200]!r}"}
        return answer if isinstance(answer, dict) else {"error": f"unexpected answer {lines[0][:200]!r}"}

    def stop(self) -> None:
        """Stops the instance (closing the helper's stdin) and waits for the helper to exit."""
        with contextlib.suppress(OSError):
            if self._process.stdin is not None:
                self._process.stdin.close()
        try:
            self._process.wait(30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for stream in (self._process.stdout, self._errors):
            if stream is not None:
                stream.close()


def _serve(num_cpus: int) -> int:
    """The helper: starts the instance, prints its address as one JSON line, waits for stdin to close."""
    try:
        ray.init(
            address="local", num_cpus=num_cpus, include_dashboard=False, logging_level=logging.ERROR,
            log_to_driver=False,
        )  # fmt: skip
        address = ray.get_runtime_context().gcs_address
    except Exception as exc:
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
        return 1
    print(json.dumps({"address": address}), flush=True)
    sys.stdin.read()  # until the driver closes it or exits
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(_serve(int(sys.argv[1])))
