"""Op definitions of the reduction family (being written)."""

from __future__ import annotations

__all__: list[str] = []
