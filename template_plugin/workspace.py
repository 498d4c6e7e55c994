"""The buffers TEMPLATE's kernels borrow from a request instead of allocating fresh arrays."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

__all__ = ["Workspace"]


class Workspace(Protocol):
    """Buffers a caller lends a kernel instead of fresh allocations (TEMPLATE's per-request arena)."""

    def output(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """A buffer for the kernel's result (contents undefined)."""
        ...

    def temporary(self, name: str, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """A temporary, the same memory for every call that names it (contents undefined); the
        kernel's result must not be a view of it."""
        ...

    def lent(self, value: np.ndarray) -> bool:
        """True when ``value`` is (a view of) a buffer :meth:`output` lent."""
        ...
