"""Reference kernels of the detection family (being written)."""

from __future__ import annotations
