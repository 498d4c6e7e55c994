"""What every typed property name is: a :class:`Property`, and whether it can be written."""

from __future__ import annotations

import enum
from typing import Any, overload

__all__ = ["Mutability", "Property"]


class Mutability(enum.StrEnum):
    """Whether a property can be read (RO), read and written (RW), or only written (WO)."""

    RO = "RO"
    RW = "RW"
    WO = "WO"


class Property(str):
    """A property key that can also build a ``(key, value)`` config entry when called."""

    __slots__ = ()

    @overload
    def __call__(self) -> str: ...
    @overload
    def __call__(self, value: Any, /, *more: Any) -> tuple[str, Any]: ...
    def __call__(self, *value: Any) -> str | tuple[str, Any]:
        if not value:
            return str(self)
        if len(value) > 1:
            return (str(self), ",".join(map(str, value)))  # device.priorities("GPU", "CPU")
        return (str(self), value[0])
