"""Op definitions of the pooling family (being written)."""

from __future__ import annotations

__all__: list[str] = []
