"""Op definitions of the normalization family (being written)."""

from __future__ import annotations

__all__: list[str] = []
