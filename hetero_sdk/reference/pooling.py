"""Reference kernels of the pooling family (being written)."""

from __future__ import annotations
