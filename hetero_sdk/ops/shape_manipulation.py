"""Op definitions of the shape_manipulation family (being written)."""

from __future__ import annotations

__all__: list[str] = []
