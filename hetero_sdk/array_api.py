"""The array namespace of a kernel's inputs: ``numpy`` for numpy arrays, ``jax.numpy`` for JAX arrays.

Kernels written once against the Python array API standard (:attr:`~hetero_sdk.graph.OpDef.evaluate`)
take their namespace from their inputs, so TEMPLATE runs them on numpy and XLA traces them with JAX.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["namespace", "widened"]


def namespace(*arrays: Any) -> ModuleType:
    """The array API namespace of the first input that has one; numpy when none has (Python scalars)."""
    for array in arrays:
        get = getattr(array, "__array_namespace__", None)
        if get is not None:
            return get()  # type: ignore[no-any-return]
    return np


def widened(x: Any) -> Any:
    """``x`` in f32 when it is a float narrower than f32 (f16, bf16, the 8- and 4-bit ones), else
    unchanged: kernels compute narrow floats in f32 and round the result back, as reference backends do."""
    dtype = np.dtype(x.dtype)
    if dtype.itemsize < 4 and (dtype.kind == "f" or dtype.name.startswith(("bfloat", "float"))):
        return namespace(x).astype(x, np.float32)  # ml_dtypes' bfloat16 and float8 have kind "V"
    return x
