"""Reading a blob's StableHLO in a helper process before this process reads it.

MLIR's bytecode reader is native code, and corrupted modules can make it loop forever or corrupt its
memory: fuzzing found a flipped byte in an exported executable (checksums made right) that made it
never return, and another that aborted the process on a corrupted heap. So each module of an imported
blob is first read by a helper process (``python -m hetero_sdk_jax.stablehlo_check``, started once and
kept, without forking this process): a module that kills the helper, or that it does not finish
reading within the time limit, is refused before this process touches it.

The helper also lists the custom calls a module makes: :meth:`StableHloChecker.check` refuses any whose
target is not one of the device's own native kernels (:data:`hetero_sdk_jax.native.KERNELS`), so a blob
can only call code this package ships.

Run as a script, this module is the helper: it reads length-prefixed modules from stdin and answers
one line for each, ``ok <custom call targets, comma-separated>`` or ``error <message>``.
"""

from __future__ import annotations

import atexit
import select
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import IO

from hetero_sdk.errors import BlobFormatError, DeviceUnavailableError
from jax._src.interpreters.mlir import make_ir_context  # the context JAX reads StableHLO in (no public one)
from jax.extend import mlir as jax_mlir
from jaxlib.mlir import ir

from hetero_sdk_jax.native import KERNELS

__all__ = ["HELPER", "READ_LIMIT_S", "StableHloChecker", "custom_call_targets"]

READ_LIMIT_S = 5.0
"""The longest the helper may take to read one module, plus a second per MB of it."""
HELPER = (sys.executable, "-m", "hetero_sdk_jax.stablehlo_check")
"""The helper's command."""
_START_LIMIT_S = 300.0  # the helper imports JAX first
_LENGTH = struct.Struct("<Q")
_LATE = b"late"  # what _ask returns when the helper did not answer in time


class StableHloChecker:
    """Checks modules in a helper process, started on first use and again after one is refused.

    :param command: the helper's command (tests substitute a misbehaving one).
    """

    def __init__(self, command: Sequence[str] = HELPER) -> None:
        self._command = list(command)
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        atexit.register(self.stop)

    def check(self, module: bytes, frame: str) -> frozenset[str]:
        """The custom call targets of ``module``, once the helper read it.

        :raises BlobFormatError: naming ``frame``, when the helper cannot read the module, dies reading
            it, or does not finish within the limit, or the module calls a custom call target that is
            not one of our native kernels.
        """
        with self._lock:
            if self._process is None:
                self._process = self._start()
            limit = READ_LIMIT_S + len(module) / 1e6
            answer = self._ask(self._process, module, limit)
            if answer is None or answer == _LATE:
                code = self._stop_locked()
                how = f"did not finish within {limit:.0f} s" if answer == _LATE else f"died (exit code {code})"
                raise BlobFormatError(
                    f"XLA blob frame {frame!r}: MLIR's reader of its StableHLO {how} in a helper process; the module "
                    "is corrupted or crafted (export the model again)"
                )
            if not answer.startswith(b"ok"):
                message = answer.decode(errors="replace").removeprefix("error").strip()
                raise BlobFormatError(f"XLA blob frame {frame!r} holds StableHLO that cannot be read: {message}")
        listed = answer.decode(errors="replace").removeprefix("ok").strip()
        targets = frozenset(t for t in listed.split(",") if t)
        foreign = sorted(targets - KERNELS.keys())
        if foreign:
            raise BlobFormatError(
                f"XLA blob frame {frame!r} calls custom call target(s) {foreign[:5]}, which are not native kernels of "
                f"hetero-sdk-jax ({sorted(KERNELS)}); the blob was not exported by this device, or is crafted"
            )
        return targets

    def _start(self) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            self._command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )  # no preexec_fn: nothing runs between fork and exec in this (JAX-threaded) process
        if self._ask(process, b"", _START_LIMIT_S) in (None, _LATE):  # warm up: its imports are not a module's time
            process.kill()
            process.wait()
            raise DeviceUnavailableError(f"XLA cannot start its StableHLO reader ({' '.join(self._command)})")
        return process

    @staticmethod
    def _ask(process: subprocess.Popen[bytes], module: bytes, limit_s: float) -> bytes | None:
        """The helper's answer line; None when it died, :data:`_LATE` when it did not answer in time."""
        stdin: IO[bytes] = process.stdin  # type: ignore[assignment]
        stdout: IO[bytes] = process.stdout  # type: ignore[assignment]
        try:
            stdin.write(_LENGTH.pack(len(module)) + module)
            stdin.flush()
            ready, _, _ = select.select([stdout], [], [], limit_s)
            if not ready:
                return _LATE
            line = stdout.readline()
        except OSError:
            return None
        return line or None

    def _stop_locked(self) -> int | None:
        """Stops the helper (killed when it is still reading); its exit code when it had died."""
        process, self._process = self._process, None
        if process is None:
            return None
        try:
            code: int | None = process.wait(1)  # a helper that died has closed its output already
        except subprocess.TimeoutExpired:
            code = None
            process.kill()
            process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        return code

    def stop(self) -> None:
        """Stops the helper."""
        with self._lock:
            self._stop_locked()


def custom_call_targets(module: ir.Module) -> list[str]:
    """The target names of the ``stablehlo.custom_call`` ops of ``module`` (sorted, each once)."""
    found: set[str] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "stablehlo.custom_call":
            found.add(ir.StringAttr(op.attributes["call_target_name"]).value)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return sorted(found)


def _serve() -> None:
    """The helper's loop."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while len(head := stdin.read(_LENGTH.size)) == _LENGTH.size:
        module = stdin.read(_LENGTH.unpack(head)[0])
        try:
            with make_ir_context():
                targets = custom_call_targets(jax_mlir.deserialize_portable_artifact(module))
            listed = ",".join(" ".join(t.replace(",", " ").split()) for t in targets)  # one line, whatever the names
            stdout.write(b"ok " + listed.encode(errors="replace")[:4000] + b"\n")
        except Exception as exc:  # MLIR's errors: the module is not StableHLO
            stdout.write(b"error " + " ".join(str(exc).split())[:500].encode() + b"\n")
        stdout.flush()


if __name__ == "__main__":
    _serve()
