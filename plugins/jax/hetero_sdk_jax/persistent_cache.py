"""``CACHE_DIR`` on the XLA device: each executable is kept in JAX's persistent compilation cache when XLA
compiles it, and a later compile of the same program (in this process or another) reads it from there
instead of compiling.

The device lists ``CACHE_DIR`` among its properties, so the Core passes the folder to it instead of
storing the compiled model's blob when ``compile_model`` returns (OpenVINO does the same with
``ov::cache_dir`` for a device that caches itself): a model with dynamic input dimensions compiles its
executables later, one per input shape, and each is cached when it is made.

The entries are XLA executables: machine code that runs when it is read back, so the folder must be one
only the user can write (:func:`cache_folder` refuses others). JAX's cache is one per process: a compile
with ``CACHE_DIR`` points it at ``<CACHE_DIR>/xla`` for the time of that compile, under a lock, and sets
back whatever was set before.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import jax
import jax.monitoring
from hetero_sdk.errors import PropertyValueError
from jax.experimental.compilation_cache import compilation_cache

__all__ = ["cache_folder", "compiling_with_cache"]

_SUBFOLDER = "xla"
_HIT = "/jax/compilation_cache/cache_hits"
_SETTINGS = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs")
_lock = threading.Lock()
_active: list[str | None] = [None]  # the folder JAX's cache was last opened on (reset when it changes)
_hits = threading.local()


def _count_hit(event: str, **_: object) -> None:
    if event == _HIT:
        _hits.count = getattr(_hits, "count", 0) + 1


jax.monitoring.register_event_listener(_count_hit)


def cache_folder(cache_dir: str) -> Path:
    """``<cache_dir>/xla``, made when absent, checked to be writable by its owner alone.

    :raises PropertyValueError: when the folder cannot be made, or it or ``cache_dir`` belongs to
        another user or other users may write to it (executables read from it run as machine code).
    """
    folder = Path(cache_dir).expanduser() / _SUBFOLDER
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise PropertyValueError(f"CACHE_DIR {cache_dir!r}: cannot make {folder}: {exc}") from exc
    if hasattr(os, "getuid"):
        for path in (folder, folder.parent):
            info = path.stat()
            if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                raise PropertyValueError(
                    f"CACHE_DIR {cache_dir!r}: {path} belongs to another user or other users may write to it; the "
                    "XLA device keeps compiled machine code there, which runs when it is read back: use a folder "
                    f"only you can write (chmod go-w {path})"
                )
    return folder


@contextlib.contextmanager
def compiling_with_cache(folder: Path | None) -> Iterator[list[int]]:
    """JAX's persistent compilation cache at ``folder`` (every compile cached, however short) while the
    block compiles; nothing when ``folder`` is None. Yields a list that holds, after the block, the
    number of executables read from the cache instead of compiled."""
    read = [0]
    if folder is None:
        yield read
        return
    with _lock:
        before = {name: getattr(jax.config, name) for name in _SETTINGS}
        jax.config.update("jax_compilation_cache_dir", str(folder))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        if _active[0] != str(folder):
            compilation_cache.reset_cache()  # JAX opens its cache once, on the folder set at that time
            _active[0] = str(folder)
        start = getattr(_hits, "count", 0)
        try:
            yield read
        finally:
            read[0] = getattr(_hits, "count", 0) - start
            for name, value in before.items():
                jax.config.update(name, value)
            if before["jax_compilation_cache_dir"] not in (None, str(folder)):
                compilation_cache.reset_cache()  # the caller's own cache opens again on its folder
                _active[0] = None
