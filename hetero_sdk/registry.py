"""One registry type for every name -> thing table of the SDK and its plugins.

Op definitions, each device's kernels and lowerings, the HETERO partitioners, blob formats and the
conformance kit's case recipes are all :class:`Registry` objects: one way to register (a call or a
decorator), one way to look up, one error when a name is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from hetero_sdk.errors import HeteroSDKError, did_you_mean

__all__ = ["Registry"]

T = TypeVar("T")

_LISTED_AT_MOST = 12
"""A longer table is counted, not listed, when a missing name has no close match."""


class Registry(Generic[T]):
    """Names mapped to things of one kind, each registered once.

    >>> kernels: Registry[str] = Registry("kernel")
    >>> kernels.register("Relu", "relu_kernel")
    'relu_kernel'
    >>> kernels.get("Relu")
    'relu_kernel'

    :param kind: what an entry is, for messages ("op type", "reference kernel"...).
    :param missing: the error :meth:`get` raises for an unknown name.
    :param hint: appended to that error: what to do about it.
    """

    def __init__(self, kind: str, missing: type[HeteroSDKError] = HeteroSDKError, hint: str = "") -> None:
        self.kind = kind
        self._missing = missing
        self._hint = hint
        self._entries: dict[str, T] = {}
        self._loader: Callable[[], object] | None = None

    def set_loader(self, loader: Callable[[], object] | None) -> None:
        """Makes :meth:`get` call ``loader`` when a name is missing, then look again: a higher layer
        that registers entries lazily (installed extensions defining ops) plugs in without this layer
        importing it. ``loader`` must be cheap to call again once it has loaded."""
        self._loader = loader

    def register(self, name: str, entry: T, *, replace: bool = False) -> T:
        """Adds ``entry`` under ``name`` and returns it.

        :param replace: allow replacing an existing entry (a plugin overriding a default).
        :raises ValueError: when ``name`` is taken and ``replace`` is False.
        """
        if not replace and name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered already")
        self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Removes the entry of ``name``, if any (an extension removed in a test or notebook)."""
        self._entries.pop(name, None)

    def __call__(self, *names: str) -> Callable[[T], T]:
        """A decorator registering the decorated object under each of ``names``."""

        def decorate(entry: T) -> T:
            for name in names:
                self.register(name, entry)
            return entry

        return decorate

    def get(self, name: str) -> T:
        """The entry of ``name``.

        :raises HeteroSDKError: (the registry's ``missing`` type) naming close matches or what exists.
        """
        if name not in self._entries and self._loader is not None:
            self._loader()
        try:
            return self._entries[name]
        except KeyError:
            if len(self._entries) > _LISTED_AT_MOST and not did_you_mean(name, self._entries).startswith("did"):
                known = f"{len(self._entries)} {self.kind}s are registered"
            else:
                known = did_you_mean(name, self._entries, listing="registered")
            hint = f"; {self._hint}" if self._hint else ""
            raise self._missing(f"unknown {self.kind} {name!r}; {known}{hint}") from None

    def find(self, name: str) -> T | None:
        """The entry of ``name``, or None."""
        return self._entries.get(name)

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        return sorted(self._entries)

    def items(self) -> list[tuple[str, T]]:
        """``(name, entry)`` pairs, sorted by name."""
        return sorted(self._entries.items())

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"<Registry of {len(self)} {self.kind}(s)>"
