"""Reference kernels of the normalization family (being written)."""

from __future__ import annotations
