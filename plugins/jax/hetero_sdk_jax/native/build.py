"""Compiling a native kernel's C++ source into a shared library, cached on disk.

The library is built with the system C++ compiler (``CXX``, else ``c++``) against the FFI headers of the
installed jaxlib (``jax.ffi.include_dir()``), with :data:`FLAGS`, into
``$XDG_CACHE_HOME/hetero-sdk/native/<key>/`` (``~/.cache`` when ``XDG_CACHE_HOME`` is unset), where the
key hashes the source and the headers beside it, the compiler's command (``CXX`` with any flags it
carries) and version, the flags, jaxlib's version and the CPU (``-march=native``
code must not run on another model, e.g. from a cache folder shared over the network): a change to any
of them builds again, and the same inputs reuse the library. The compiler writes to a temporary name in that
folder, renamed into place when it succeeds, so two processes building at once both end with a whole
library (the rename is atomic; the last one wins with identical bytes).

Each use of a cached library touches it; building a kernel again (a new source, compiler, jaxlib or CPU)
removes that kernel's other builds unused for :data:`UNUSED_DAYS` days, so the folder does not grow with
every upgrade. A library another process has loaded stays valid when its folder goes (the mapping holds it).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import jax.ffi
import jaxlib

__all__ = ["FLAGS", "UNUSED_DAYS", "BuildError", "build", "cache_root", "compiler_command", "cpu_identity"]

FLAGS = ("-O3", "-march=native", "-shared", "-fPIC", "-std=c++17")
"""The compiler flags of every native kernel (``-march=native``: the library is for this machine)."""

UNUSED_DAYS = 30
"""A kernel's builds for other keys not used for this many days are removed when it is built again."""

_COMPILE_LIMIT_S = 300.0


class BuildError(Exception):
    """A kernel could not be built: no compiler, or the compiler failed (the message says which)."""


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/hetero-sdk/native`` (``~/.cache/hetero-sdk/native`` without it)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hetero-sdk" / "native"


def compiler_command() -> list[str]:
    """The C++ compiler's command: ``CXX`` split as a shell would, else ``c++``.

    :raises BuildError: when it is not found on ``PATH``.
    """
    command = shlex.split(os.environ.get("CXX") or "c++")
    if not command or shutil.which(command[0]) is None:
        raise BuildError(f"no C++ compiler: {command[0] if command else 'CXX'!r} is not on PATH")
    return command


def _compiler_version(command: list[str]) -> str:
    try:
        done = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        raise BuildError(f"the C++ compiler {command[0]!r} does not run: {exc}") from exc
    return done.stdout


def cpu_identity() -> str:
    """What ``-march=native`` compiles for: the CPU's model name and feature flags (Linux's
    ``/proc/cpuinfo``, its first processor), else the platform's machine and processor names."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        text = ""
    wanted = ("model name", "flags", "Features", "CPU part")  # x86 and Arm spellings
    lines: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            if lines:
                break  # the first processor's record is enough
            continue
        name = line.split(":", 1)[0].strip()
        if name in wanted:
            lines.append(line.strip())
    return "\n".join(lines) or f"{platform.machine()} {platform.processor()}"


def build(source: Path) -> Path:
    """The shared library built from ``source`` (built now when not cached).

    :raises BuildError: when there is no compiler or it fails (its first error lines in the message).
    """
    command = compiler_command()
    include = jax.ffi.include_dir()
    text = b"".join([source.read_bytes(), *(header.read_bytes() for header in sorted(source.parent.glob("*.h")))])
    key = hashlib.sha256(
        b"\0".join(
            [
                text,
                " ".join([*command, *FLAGS]).encode(),
                _compiler_version(command).encode(),
                jaxlib.__version__.encode(),
                cpu_identity().encode(),
            ]
        )
    ).hexdigest()[:24]
    folder = cache_root() / f"{source.stem}-{key}"
    library = folder / f"{source.stem}.so"
    if library.is_file():
        _mark_used(library)
        return library
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise BuildError(f"cannot make the kernel cache folder {folder}: {exc}") from exc
    handle, temporary = tempfile.mkstemp(prefix=f".{source.stem}-", suffix=".so", dir=folder)
    os.close(handle)
    try:
        done = subprocess.run(
            [*command, *FLAGS, "-isystem", include, str(source), "-o", temporary],
            capture_output=True, text=True, timeout=_COMPILE_LIMIT_S, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            lines = [line for line in done.stderr.splitlines() if "error" in line] or done.stderr.splitlines()
            raise BuildError(f"{command[0]} failed on {source.name}: {' | '.join(lines[:3])[:500]}")
        os.replace(temporary, library)
    except (OSError, subprocess.SubprocessError) as exc:
        raise BuildError(f"{command[0]} did not build {source.name}: {exc}") from exc
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    _remove_unused_builds(source.stem, keep=folder)
    return library


def _mark_used(library: Path) -> None:
    with contextlib.suppress(OSError):  # a read-only shared cache: nothing is pruned there from here either
        os.utime(library)


def _remove_unused_builds(stem: str, keep: Path) -> None:
    """Removes ``stem``'s build folders other than ``keep`` whose library was last used (or, without one,
    the folder last changed) more than :data:`UNUSED_DAYS` days ago."""
    cutoff = time.time() - UNUSED_DAYS * 86400
    pattern = re.compile(re.escape(stem) + r"-[0-9a-f]{24}")
    for folder in keep.parent.iterdir():
        if folder == keep or not pattern.fullmatch(folder.name):
            continue
        library = folder / f"{stem}.so"
        try:
            used = (library if library.is_file() else folder).stat().st_mtime
        except OSError:
            continue
        if used < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
