"""Reference kernels of the image family (being written)."""

from __future__ import annotations
