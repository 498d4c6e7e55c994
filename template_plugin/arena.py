"""Buffers that one infer request keeps between its inferences, so that the kernels that can write into
them do not allocate (fresh large arrays cost page faults on every inference)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["Arena", "Donation", "root_of"]


def root_of(value: Any) -> Any:
    """The array that owns ``value``'s memory (``value`` itself when it owns it or is no array)."""
    while isinstance(value, np.ndarray):
        base = value.base
        if isinstance(base, np.ndarray):
            value = base
        elif base is not None and isinstance(getattr(base, "base", None), np.ndarray):
            value = base.base  # as_strided's interface object in between
        else:
            return value
    return value


class Arena:
    """The reusable buffers of one infer request (never shared by two requests, so never used by two
    inferences at once).

    - :meth:`output` lends a result buffer; the execution plan gives it back with :meth:`give_back`
      once no live value is (a view of) it, and the next :meth:`output` of the same shape and dtype
      reuses it, in this inference or the next one. A model output leaves the arena
      (:meth:`hand_over`): the caller keeps it.
    - :meth:`temporary` keeps one growing buffer per name for a kernel's temporaries.

    :ivar nbytes: the bytes of every buffer the arena holds (lent, free and temporaries).
    """

    __slots__ = ("_free", "_lent", "_temporaries", "nbytes")

    def __init__(self) -> None:
        self._free: dict[tuple[int, np.dtype[Any]], list[np.ndarray]] = {}
        self._lent: dict[int, np.ndarray] = {}
        self._temporaries: dict[tuple[str, np.dtype[Any]], np.ndarray] = {}
        self.nbytes = 0

    def output(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """A result buffer of ``shape`` and ``dtype`` (contents undefined), lent until given back: a
        view of a flat buffer, reused for any shape of the same size."""
        size, kind = math.prod(shape), np.dtype(dtype)
        pool = self._free.get((size, kind))
        if pool:
            flat = pool.pop()
        else:
            flat = np.empty(size, kind)
            self.nbytes += flat.nbytes
        self._lent[id(flat)] = flat
        return flat.reshape(shape)

    def temporary(self, name: str, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """The memory kept for ``name`` and ``dtype`` (grown to the largest shape asked), as ``shape``;
        contents undefined, the caller's until it returns."""
        size, key = math.prod(shape), (name, np.dtype(dtype))
        flat = self._temporaries.get(key)
        if flat is None or flat.size < size:
            self.nbytes -= 0 if flat is None else flat.nbytes
            flat = self._temporaries[key] = np.empty(size, key[1])
            self.nbytes += flat.nbytes
        return flat[:size].reshape(shape)

    @property
    def lent_buffers(self) -> dict[int, np.ndarray]:
        """The buffers lent now, by ``id`` (read it, never change it): what :meth:`owner` looks an
        array that owns its memory up in, for callers that inline that common case."""
        return self._lent

    def owner(self, value: Any) -> np.ndarray | None:
        """The lent buffer that ``value`` is a view of, else None."""
        base = value.base if type(value) is np.ndarray else value
        if base is None:  # an array that owns its memory (most results)
            root = value
        elif type(base) is np.ndarray and base.base is None and base is not value:  # a view, as lent
            root = base
        else:
            root = root_of(value)
        buffer = self._lent.get(id(root))
        return buffer if buffer is root else None

    def lent(self, value: Any) -> bool:
        """True when ``value`` is a view of a buffer :meth:`output` lent."""
        return self.owner(value) is not None

    def give_back(self, buffer: np.ndarray) -> None:
        """Returns a lent buffer (as :meth:`owner` names it) to the free ones."""
        del self._lent[id(buffer)]
        self._free.setdefault((buffer.size, buffer.dtype), []).append(buffer)

    def hand_over(self, buffer: np.ndarray) -> None:
        """A lent buffer leaves the arena for good (a model output the caller keeps)."""
        del self._lent[id(buffer)]
        self.nbytes -= buffer.nbytes

    def reclaim(self) -> None:
        """Every buffer still lent is free again (after a run: its values are dropped)."""
        for buffer in list(self._lent.values()):
            self.give_back(buffer)


class Donation:
    """An arena whose next :meth:`output` of a dying value's shape and dtype is that value itself: an
    elementwise kernel then writes its result over its input (the caller donates a value that no other
    live value is or views)."""

    __slots__ = ("_arena", "_value")

    def __init__(self, arena: Arena, value: np.ndarray) -> None:
        self._arena = arena
        self._value: np.ndarray | None = value

    def output(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """The donated value when it has ``shape`` and ``dtype`` (once), else the arena's :meth:`Arena.output`."""
        value = self._value
        if value is not None and value.shape == tuple(shape) and value.dtype == np.dtype(dtype):
            self._value = None
            return value
        return self._arena.output(shape, dtype)

    def temporary(self, name: str, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """The arena's :meth:`Arena.temporary`."""
        return self._arena.temporary(name, shape, dtype)

    def lent(self, value: Any) -> bool:
        """The arena's :meth:`Arena.lent`."""
        return self._arena.lent(value)
