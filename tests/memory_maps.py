"""Test helper: which memory mapping an array's memory belongs to (to tell a mapped view from a copy)."""

from __future__ import annotations

import mmap

import numpy as np


def mapping_of(array: np.ndarray) -> mmap.mmap | None:
    """The memory mapping ``array``'s memory belongs to, following its bases; None when there is none."""
    base = array.base
    while base is not None:
        if isinstance(base, memoryview):
            base = base.obj
        if isinstance(base, mmap.mmap):
            return base
        base = getattr(base, "base", None)
    return None
