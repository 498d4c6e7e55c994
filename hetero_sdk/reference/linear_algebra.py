"""Reference kernels of the linear_algebra family (being written)."""

from __future__ import annotations
