"""Op definitions of the convolution family (being written)."""

from __future__ import annotations

__all__: list[str] = []
