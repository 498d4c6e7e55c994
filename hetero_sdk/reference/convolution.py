"""Reference kernels of the convolution family (being written)."""

from __future__ import annotations
