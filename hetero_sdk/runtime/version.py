"""Plugin version records, as returned by ``core.get_versions``."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Version"]


@dataclass(frozen=True, slots=True)
class Version:
    """A plugin build: ``build_number`` (e.g. ``"0.1.0"``) and a one-line ``description``."""

    build_number: str
    description: str
