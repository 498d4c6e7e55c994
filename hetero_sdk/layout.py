"""``Layout``: what each dimension of a tensor means (``"NCHW"``), as OpenVINO's ``ov.Layout``."""

from __future__ import annotations

import re

from hetero_sdk.errors import ModelValidationError

__all__ = [
    "Layout",
    "get_batch_index",
    "get_channels_index",
    "get_height_index",
    "get_width_index",
    "has_batch",
    "has_channels",
    "has_height",
    "has_width",
]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ELLIPSIS = "..."
_UNKNOWN = "?"
_ALIASES = {"BATCH": "N", "CHANNELS": "C", "HEIGHT": "H", "WIDTH": "W", "DEPTH": "D"}
"""OpenVINO's long names for the usual dimensions, kept in their short form."""


def _key(name: str) -> str:
    upper = name.upper()
    return _ALIASES.get(upper, upper)


class Layout:
    """The meaning of a tensor's dimensions, written as OpenVINO writes it.

    ``"NCHW"`` (one letter per dimension), ``"[N,C,H,W]"`` (names of any length), ``"?"`` (a dimension
    of no given meaning), ``"...C"`` or ``"[...,C]"`` (any number of dimensions, then ``C``),
    ``""`` (no layout, the same as ``"..."``). Names are case-insensitive (kept upper-case); ``BATCH``, ``CHANNELS``,
    ``HEIGHT``, ``WIDTH`` and ``DEPTH`` are ``N``, ``C``, ``H``, ``W`` and ``D``. A name after ``...`` has a
    negative index (``Layout("...C").get_index_by_name("C") == -1``).

    :param layout: the layout string.
    :raises ModelValidationError: for a malformed string (a bad name, a name twice, two ``...``), naming it.
    """

    __slots__ = ("_dims",)

    def __init__(self, layout: str = "") -> None:
        if not isinstance(layout, str):
            raise TypeError(f"Layout takes a string such as 'NCHW' or '[N,C,H,W]', not {type(layout).__name__}")
        text = layout.strip()
        if text.startswith("["):
            if not text.endswith("]"):
                raise ModelValidationError(f"layout {layout!r}: a '[' without its closing ']'")
            inner = text[1:-1].strip()
            dims = [d.strip() for d in inner.split(",")] if inner else []
        else:
            dims, rest = [], text
            while rest:
                if rest.startswith(_ELLIPSIS):
                    dims.append(_ELLIPSIS)
                    rest = rest[3:]
                else:
                    dims.append(rest[0])
                    rest = rest[1:]
        self._dims: tuple[str, ...] = tuple(d if d in (_ELLIPSIS, _UNKNOWN) else _key(d) for d in dims)
        for dim in self._dims:
            if dim not in (_ELLIPSIS, _UNKNOWN) and not _NAME.match(dim):
                raise ModelValidationError(
                    f"layout {layout!r}: {dim!r} is not a dimension name (letters, digits, '_'; '?' or '...')"
                )
        named = [d for d in self._dims if d not in (_ELLIPSIS, _UNKNOWN)]
        if len(set(named)) != len(named):
            twice = sorted({d for d in named if named.count(d) > 1})
            raise ModelValidationError(f"layout {layout!r} names {', '.join(twice)} more than once")
        if self._dims.count(_ELLIPSIS) > 1:
            raise ModelValidationError(f"layout {layout!r} has more than one '...'")
        if not self._dims:
            self._dims = (_ELLIPSIS,)  # as OpenVINO's: no layout says "any dimensions"

    @property
    def names(self) -> tuple[str, ...]:
        """The dimensions in order: names, ``"?"`` and ``"..."``."""
        return self._dims

    @property
    def rank(self) -> int | None:
        """The number of dimensions, or None when the layout has ``...``."""
        return None if _ELLIPSIS in self._dims else len(self._dims)

    @property
    def empty(self) -> bool:
        """True for the layout ``""`` (or ``"..."``), which says nothing."""
        return self._dims == (_ELLIPSIS,)

    def has_name(self, name: str) -> bool:
        """True when a dimension is called ``name`` (case-insensitive)."""
        return _key(name) in self._dims

    def get_index_by_name(self, name: str) -> int:
        """The index of dimension ``name``: from the start, or negative when it follows ``...``.

        :raises ModelValidationError: when the layout has no such dimension, listing those it has.
        """
        key = _key(name)
        if key not in self._dims:
            raise ModelValidationError(
                f"layout {self} has no dimension {name!r}; it has {', '.join(self._dims) or 'none'}"
            )
        index = self._dims.index(key)
        if _ELLIPSIS in self._dims and index > self._dims.index(_ELLIPSIS):
            return index - len(self._dims)
        return index

    def index_in(self, name: str, rank: int) -> int:
        """The non-negative index of ``name`` in a tensor of ``rank`` dimensions with this layout.

        :raises ModelValidationError: when the layout has no such dimension or does not fit ``rank``.
        """
        self.check_rank(rank)
        return self.get_index_by_name(name) % rank

    def check_rank(self, rank: int) -> None:
        """:raises ModelValidationError: when a tensor of ``rank`` dimensions cannot have this layout."""
        fixed = len(self._dims) - self._dims.count(_ELLIPSIS)
        if (self.rank is not None and self.rank != rank) or fixed > rank:
            raise ModelValidationError(f"layout {self} does not fit a tensor of rank {rank}")

    def resolved(self, rank: int) -> tuple[str, ...]:
        """One entry per dimension of a tensor of ``rank`` dimensions (``"?"`` for those ``...`` covers)."""
        self.check_rank(rank)
        if _ELLIPSIS not in self._dims:
            return self._dims
        at = self._dims.index(_ELLIPSIS)
        return (*self._dims[:at], *([_UNKNOWN] * (rank - len(self._dims) + 1)), *self._dims[at + 1 :])

    def to_string(self) -> str:
        """The bracketed form, ``[N,C,H,W]``, as ``ov.Layout.to_string`` writes it."""
        return "[" + ",".join(self._dims) + "]"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = Layout(other)
        return isinstance(other, Layout) and other._dims == self._dims

    def __hash__(self) -> int:
        return hash(self._dims)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"<Layout: {self.to_string()}>"


def has_batch(layout: Layout) -> bool:
    """True when the layout has ``N``."""
    return layout.has_name("N")


def has_channels(layout: Layout) -> bool:
    """True when the layout has ``C``."""
    return layout.has_name("C")


def has_height(layout: Layout) -> bool:
    """True when the layout has ``H``."""
    return layout.has_name("H")


def has_width(layout: Layout) -> bool:
    """True when the layout has ``W``."""
    return layout.has_name("W")


def get_batch_index(layout: Layout) -> int:
    """The index of ``N`` (see :meth:`Layout.get_index_by_name`)."""
    return layout.get_index_by_name("N")


def get_channels_index(layout: Layout) -> int:
    """The index of ``C``."""
    return layout.get_index_by_name("C")


def get_height_index(layout: Layout) -> int:
    """The index of ``H``."""
    return layout.get_index_by_name("H")


def get_width_index(layout: Layout) -> int:
    """The index of ``W``."""
    return layout.get_index_by_name("W")
