"""Reference kernels of the reduction family (being written)."""

from __future__ import annotations
