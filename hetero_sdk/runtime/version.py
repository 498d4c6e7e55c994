"""Plugin version records, as returned by ``core.get_versions``."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SDK_VERSION", "Version"]

SDK_VERSION = "0.1.0"
"""The version of hetero-sdk (``hetero_sdk.__version__``)."""


@dataclass(frozen=True, slots=True)
class Version:
    """A plugin build: ``build_number`` (e.g. ``"0.1.0"``) and a one-line ``description``."""

    build_number: str
    description: str
