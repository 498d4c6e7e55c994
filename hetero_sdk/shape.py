"""Partial shapes: static or dynamic (``-1``) dimensions, like ``ov.PartialShape``; in rare cases (the output
of an ``If`` whose branches give different ranks) the rank itself is dynamic: :meth:`PartialShape.dynamic`."""

from __future__ import annotations

import numbers
import operator
from collections.abc import Iterable, Iterator
from typing import Any, overload

from hetero_sdk.errors import DynamicRankError, ModelValidationError

__all__ = ["DYNAMIC", "MAX_DIMENSION", "PartialShape"]

DYNAMIC = -1
"""The value of a dynamic dimension."""

MAX_DIMENSION = 2**63 - 1
"""The largest dimension: shapes are read as int64 (``ShapeOf``, folding), as in ONNX and OpenVINO."""


class PartialShape:
    """An immutable shape whose dimensions are non-negative ints or ``-1`` (dynamic).

    The rank is known but for one case: an ``If`` whose branches give different ranks, whose output
    has a dynamic rank (:meth:`dynamic`, printed ``[...]``) until it runs. Such a shape is dynamic and
    compatible with any other; reading its :attr:`dims` or :attr:`rank` raises a
    :class:`~hetero_sdk.errors.DynamicRankError` (a ``ModelValidationError``), so an op that needs the
    rank of its input says so instead of guessing (check :attr:`rank_is_static` first where a dynamic
    rank can be handled).
    """

    __slots__ = ("_dims",)
    _dims: tuple[int, ...] | None

    def __init__(self, dims: Iterable[int] = ()) -> None:
        """:param dims: the dimensions: integers (numpy's too, or their strings), ``-1`` for a dynamic one.
        :raises ModelValidationError: for ``dims`` that is not a sequence of such integers, or a
            dimension below -1 or above :data:`MAX_DIMENSION`, naming it.
        """
        if isinstance(dims, (str, bytes)) or not isinstance(dims, Iterable):
            raise ModelValidationError(f"a shape is a list of dimensions (ints, -1 for a dynamic one), not {dims!r}")
        given = list(dims)
        parsed = tuple(_dimension(d, given) for d in given)
        for d in parsed:
            if d < DYNAMIC:
                raise ModelValidationError(f"dimension {d} in {given} is negative; use -1 for a dynamic dimension")
            if d > MAX_DIMENSION:
                raise ModelValidationError(
                    f"dimension {d} in {given} is larger than {MAX_DIMENSION} (2**63 - 1), the most a shape of "
                    "int64 dimensions holds; the sizes it was computed from are likely wrong"
                )
        self._dims = parsed

    @classmethod
    def dynamic(cls) -> PartialShape:
        """A shape of dynamic rank (``ov.PartialShape.dynamic()``): any rank, any dimensions."""
        shape = cls()
        shape._dims = None
        return shape

    @property
    def rank_is_static(self) -> bool:
        """False for a shape of dynamic rank (:meth:`dynamic`)."""
        return self._dims is not None

    def _known(self) -> tuple[int, ...]:
        if self._dims is None:
            raise DynamicRankError(
                "an input has a dynamic rank (an If whose branches give different ranks gives it), and this "
                "needs its rank; fix the rank before this op, or freeze the input that decides the If "
                "(convert_model(..., input={name: np.array(value)}))"
            )
        return self._dims

    @classmethod
    def of(cls, value: PartialShape | Iterable[int]) -> PartialShape:
        """Returns ``value`` as a PartialShape (a list or tuple of ints is converted).

        :raises ModelValidationError: as the constructor does.
        """
        return value if isinstance(value, PartialShape) else cls(value)

    @property
    def dims(self) -> tuple[int, ...]:
        """The dimensions, ``-1`` where dynamic. :raises DynamicRankError: for a dynamic rank."""
        return self._known()

    @property
    def rank(self) -> int:
        """The number of dimensions. :raises DynamicRankError: for a dynamic rank."""
        return len(self._known())

    @property
    def is_static(self) -> bool:
        """True when no dimension (and not the rank) is dynamic."""
        return self._dims is not None and DYNAMIC not in self._dims

    @property
    def is_dynamic(self) -> bool:
        """True when some dimension is dynamic."""
        return not self.is_static

    def to_shape(self) -> tuple[int, ...]:
        """The static shape. :raises ValueError: when a dimension is dynamic."""
        if not self.is_static:
            raise ValueError(f"shape {self} has dynamic dimensions")
        return self._known()

    def compatible(self, shape: PartialShape | Iterable[int]) -> bool:
        """True when a concrete (or partial) ``shape`` can be an instance of this one."""
        dims = shape._dims if isinstance(shape, PartialShape) else tuple(shape)
        if self._dims is None or dims is None:
            return True
        if dims == self._dims:
            return True
        if len(dims) != len(self._dims):
            return False
        return all(a == b or DYNAMIC in (a, b) for a, b in zip(self._dims, dims))

    def merge(self, other: PartialShape) -> PartialShape | None:
        """The most precise shape compatible with both, or None when they conflict."""
        if not self.compatible(other):
            return None
        if self._dims is None or other._dims is None:
            return other if self._dims is None else self
        return PartialShape(b if a == DYNAMIC else a for a, b in zip(self._dims, other._dims))

    def __iter__(self) -> Iterator[int]:
        return iter(self._known())

    def __len__(self) -> int:
        return len(self._known())

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> PartialShape: ...
    def __getitem__(self, index: int | slice) -> int | PartialShape:
        if isinstance(index, slice):
            return PartialShape(self._known()[index])
        return self._known()[index]

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, PartialShape):
            return self._dims == other._dims
        if isinstance(other, (list, tuple)):
            return self._dims is not None and self._dims == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._dims)

    def __repr__(self) -> str:
        return f"<PartialShape: {self}>"

    def __str__(self) -> str:
        if self._dims is None:
            return "[...]"
        return "[" + ",".join("?" if d == DYNAMIC else str(d) for d in self._dims) + "]"


def broadcast_shapes(a: PartialShape, b: PartialShape) -> PartialShape | None:
    """Numpy-style broadcast of two partial shapes, or None when they cannot broadcast (a dynamic rank
    broadcasts to a dynamic rank)."""
    if not (a.rank_is_static and b.rank_is_static):
        return PartialShape.dynamic()
    rank = max(a.rank, b.rank)
    left = (1,) * (rank - a.rank) + a.dims
    right = (1,) * (rank - b.rank) + b.dims
    dims = []
    for x, y in zip(left, right):
        if x == y or y == 1:
            dims.append(x)
        elif x in (1, DYNAMIC):
            dims.append(y)
        elif y == DYNAMIC:
            dims.append(x)
        else:
            return None
    return PartialShape(dims)


def _dimension(value: Any, dims: list[Any]) -> int:
    """One dimension as an int: an integer (not a bool), a float without a fraction, or a string of an int."""
    if not isinstance(value, bool):
        try:
            return int(value) if isinstance(value, str) else operator.index(value)
        except (TypeError, ValueError):
            if isinstance(value, numbers.Real) and float(value).is_integer():
                return int(float(value))
    raise ModelValidationError(
        f"dimension {value!r} in {dims} is not an integer; dimensions are ints, -1 for a dynamic one"
    )
