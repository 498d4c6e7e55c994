"""The BLAS library under numpy's matrix products, which TEMPLATE's convolutions and MatMuls run in:
its thread pools (``INFERENCE_NUM_THREADS`` limits them) and what it is (the ``TEMPLATE_BLAS`` property).

OpenBLAS, which numpy's wheels bundle, picks its kernels for the CPU it detects unless the environment
variable ``OPENBLAS_CORETYPE`` names them; the property says which kernels run and whether that variable
chose them (a machine that sets ``OPENBLAS_CORETYPE=Haswell`` for older OpenBLAS builds holds a current
numpy to its AVX2 kernels on an AVX-512 CPU).
"""

from __future__ import annotations

import functools
import os
from typing import Any

from threadpoolctl import ThreadpoolController

__all__ = ["CORETYPE", "describe", "pools", "threadpools"]

CORETYPE = "OPENBLAS_CORETYPE"
"""The environment variable that makes OpenBLAS use the named kernels instead of the detected CPU's."""


@functools.cache
def threadpools() -> ThreadpoolController:
    """The process's thread pools (inspected once: threadpoolctl reads the loaded libraries)."""
    return ThreadpoolController()


def pools() -> list[dict[str, Any]]:
    """threadpoolctl's description of each BLAS library loaded (``internal_api``, ``version``,
    ``architecture``, ``num_threads``...)."""
    return threadpools().select(user_api="blas").info()


def describe() -> str:
    """``TEMPLATE_BLAS``: each BLAS library with its version and kernels (``openblas 0.3.31, SkylakeX
    kernels``), and for OpenBLAS whether ``OPENBLAS_CORETYPE`` chose them."""
    chosen = os.environ.get(CORETYPE)
    found = []
    for pool in pools():
        text = f"{pool['internal_api']} {pool.get('version') or '(version unknown)'}"
        if pool.get("architecture"):
            text += f", {pool['architecture']} kernels"
            if pool["internal_api"] == "openblas" and chosen:
                text += f" ({CORETYPE}={chosen})"
        found.append(text)
    return "; ".join(found or ["no BLAS library found"])
