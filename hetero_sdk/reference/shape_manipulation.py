"""Reference kernels of the shape_manipulation family (being written)."""

from __future__ import annotations
