"""Op definitions of the detection family (being written)."""

from __future__ import annotations

__all__: list[str] = []
