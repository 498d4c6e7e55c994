"""Op definitions of the image family (being written)."""

from __future__ import annotations

__all__: list[str] = []
