"""The array namespace of a kernel's inputs: ``numpy`` for numpy arrays, ``jax.numpy`` for JAX arrays.

Kernels written once against the Python array API standard (:attr:`~hetero_sdk.graph.OpDef.evaluate`)
take their namespace from their inputs, so TEMPLATE runs them on numpy and XLA traces them with JAX.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["namespace"]


def namespace(*arrays: Any) -> ModuleType:
    """The array API namespace of the first input that has one; numpy when none has (Python scalars)."""
    for array in arrays:
        get = getattr(array, "__array_namespace__", None)
        if get is not None:
            return get()  # type: ignore[no-any-return]
    return np
