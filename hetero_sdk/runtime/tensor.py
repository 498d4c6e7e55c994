"""``Tensor``: a host tensor as OpenVINO's ``ov.Tensor``, a typed view on an ndarray."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hetero_sdk.element_type import Type

__all__ = ["Tensor"]


class Tensor:
    """A host tensor with an element type and a shape, as ``ov.Tensor``.

    ``Tensor(array)`` wraps a numpy array and shares its memory (writing through :attr:`data` writes
    the array); ``Tensor(element_type, shape)`` holds new zeros. numpy takes a Tensor wherever it takes
    an array (``np.asarray(tensor)`` is :attr:`data`), and so does every SDK call that takes an array
    (infer request inputs, variable states).

    :param array_or_type: an ndarray (or anything ``np.asarray`` reads), or an element type (a
        :class:`Type` or numpy dtype) with ``shape``.
    :param shape: the shape, when the first argument is an element type.
    :raises TypeError: for an element type without a shape, or a shape with an array.
    """

    __slots__ = ("_data", "_element_type")

    def __init__(self, array_or_type: Any, shape: Sequence[int] | None = None) -> None:
        if shape is not None:
            if isinstance(array_or_type, np.ndarray):
                raise TypeError("Tensor(array) takes no shape; reshape the array first")
            element_type = Type.of(array_or_type)
            self._data = np.zeros(tuple(int(d) for d in shape), element_type.numpy)
        elif isinstance(array_or_type, (Type, np.dtype, type)):
            raise TypeError("Tensor(element_type, shape) needs a shape")
        else:
            self._data = array_or_type.data if isinstance(array_or_type, Tensor) else np.asarray(array_or_type)
        self._element_type = Type.of(self._data.dtype)

    @property
    def data(self) -> np.ndarray:
        """The values: an ndarray view on the tensor's memory (writable when the memory is)."""
        return self._data

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape."""
        return tuple(self._data.shape)

    @property
    def element_type(self) -> Type:
        """The element type."""
        return self._element_type

    @property
    def size(self) -> int:
        """The number of elements."""
        return int(self._data.size)

    @property
    def byte_size(self) -> int:
        """The number of bytes the values take."""
        return int(self._data.nbytes)

    def get_shape(self) -> tuple[int, ...]:
        """The shape."""
        return self.shape

    def get_element_type(self) -> Type:
        """The element type."""
        return self._element_type

    def get_size(self) -> int:
        """The number of elements."""
        return self.size

    def get_byte_size(self) -> int:
        """The number of bytes the values take."""
        return self.byte_size

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if dtype is not None and np.dtype(dtype) != self._data.dtype:
            return self._data.astype(dtype)
        return self._data.copy() if copy else self._data

    def __repr__(self) -> str:
        return f"<Tensor: {self._element_type.value}{list(self.shape)}>"
