"""The BLAS library under numpy's matrix products, which TEMPLATE's convolutions and MatMuls run in:
its thread pools (``INFERENCE_NUM_THREADS`` limits them), what it is (the ``TEMPLATE_BLAS`` property),
and whether its kernels leave the CPU's vector width unused.

OpenBLAS, which numpy's wheels bundle, picks its kernels from the CPU model it recognises. On a CPU it
does not recognise, as virtual machines often report theirs ("AMD EPYC"), it falls back to older ones:
on such a machine with AVX-512 it ran its Haswell (AVX2) kernels, and ``OPENBLAS_CORETYPE=SkylakeX``
made TEMPLATE 1.2-1.4x faster on real convnets. The variable must be set before numpy loads, so the
SDK only says so (:func:`warn_if_slow`), once per process.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from threadpoolctl import ThreadpoolController

__all__ = ["AVX512_KERNELS", "coretype_hint", "describe", "pools", "threadpools", "warn_if_slow"]

AVX512_KERNELS = frozenset({"skylakex", "cooperlake", "sapphirerapids"})
"""OpenBLAS's kernel sets (``threadpoolctl``'s ``architecture``, lower case) that use AVX-512."""

_SKYLAKEX_FLAGS = frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})
"""The CPU flags OpenBLAS's SkylakeX kernels need."""

_logger = logging.getLogger(__name__)


@functools.cache
def threadpools() -> ThreadpoolController:
    """The process's thread pools (inspected once: threadpoolctl reads the loaded libraries)."""
    return ThreadpoolController()


def pools() -> list[dict[str, Any]]:
    """threadpoolctl's description of each BLAS library loaded (``internal_api``, ``version``,
    ``architecture``, ``num_threads``...)."""
    return threadpools().select(user_api="blas").info()


def describe() -> str:
    """``TEMPLATE_BLAS``: each BLAS library with its version and kernels (``openblas 0.3.31, Haswell
    kernels``), then the :func:`coretype_hint` when there is one."""
    found = [
        f"{pool['internal_api']} {pool.get('version') or '(version unknown)'}"
        + (f", {pool['architecture']} kernels" if pool.get("architecture") else "")
        for pool in pools()
    ]
    hint = _process_hint()
    return "; ".join(found or ["no BLAS library found"]) + (f" ({hint})" if hint else "")


def coretype_hint(found: Sequence[Mapping[str, Any]], cpu_flags: Iterable[str]) -> str | None:
    """What to set when an OpenBLAS in ``found`` runs kernels without AVX-512 on a CPU whose
    ``cpu_flags`` (``/proc/cpuinfo``'s) have what its SkylakeX kernels need; else None."""
    if not set(cpu_flags) >= _SKYLAKEX_FLAGS:
        return None
    slow = [
        pool
        for pool in found
        if pool.get("internal_api") == "openblas" and str(pool.get("architecture", "")).lower() not in AVX512_KERNELS
    ]
    if not slow:
        return None
    return (
        f"numpy's OpenBLAS runs its {slow[0].get('architecture') or 'generic'} kernels on this CPU, which has "
        "AVX-512: set OPENBLAS_CORETYPE=SkylakeX before Python starts for faster TEMPLATE convolutions and MatMuls"
    )


def warn_if_slow() -> None:
    """Logs the :func:`coretype_hint` of this process as a warning, the first time only."""
    hint = _process_hint()
    if hint is not None:
        _warn_once(hint)


@functools.cache
def _warn_once(hint: str) -> None:
    _logger.warning("TEMPLATE: %s", hint)


@functools.cache
def _process_hint() -> str | None:
    return coretype_hint(pools(), _cpu_flags())


def _cpu_flags() -> set[str]:
    """The CPU's feature flags (Linux's ``/proc/cpuinfo``; none elsewhere)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()
