"""Element types of tensors (``hs.Type``), mirroring ``ov.Type``."""

from __future__ import annotations

import enum
from typing import Any

import ml_dtypes
import numpy as np

from hetero_sdk.errors import ElementTypeError

__all__ = ["Type", "as_strings"]


class Type(enum.Enum):
    """A tensor element type. Numpy dtypes are accepted wherever a ``Type`` is: see :meth:`of`.

    The 8-, 4- and 2-bit types (``f8e4m3``, ``f8e5m2``, ``f8e4m3fnuz``, ``f8e5m2fnuz``, ``f8e8m0``,
    ``f4e2m1``, ``i4``, ``u4``, ``i2``, ``u2``) are held by ``ml_dtypes``' numpy dtypes, one element a
    byte; their names are OpenVINO's where OpenVINO has the type.

    ``string`` (OpenVINO's ``string``: Unicode text, any length) is held by numpy 2's variable-width
    ``np.dtypes.StringDType()``: a dtype that says "text" (an object array could hold anything),
    whose arrays reshape, concatenate, gather, compare and cast to and from numbers as numpy arrays do,
    and that ``np.strings`` works on element by element. Object arrays of ``str`` (ONNX's and
    ``onnx.reference``'s form) and ``<U`` arrays convert to it: see :func:`as_strings`.
    """

    f32 = "f32"
    f16 = "f16"
    bf16 = "bf16"
    f64 = "f64"
    i8 = "i8"
    u8 = "u8"
    i16 = "i16"
    u16 = "u16"
    i32 = "i32"
    u32 = "u32"
    i64 = "i64"
    u64 = "u64"
    boolean = "boolean"
    f8e4m3 = "f8e4m3"
    f8e5m2 = "f8e5m2"
    f8e4m3fnuz = "f8e4m3fnuz"
    f8e5m2fnuz = "f8e5m2fnuz"
    f8e8m0 = "f8e8m0"
    f4e2m1 = "f4e2m1"
    i4 = "i4"
    u4 = "u4"
    i2 = "i2"
    u2 = "u2"
    string = "string"

    @property
    def numpy(self) -> np.dtype[Any]:
        """The numpy dtype that holds values of this type (``ml_dtypes.bfloat16`` for bf16, ``ml_dtypes``'
        dtypes for the 8-, 4- and 2-bit types)."""
        return _TO_NUMPY[self]

    @property
    def is_real(self) -> bool:
        """True for floating-point types."""
        return self in _REAL

    @property
    def is_integral(self) -> bool:
        """True for integer types (not boolean)."""
        return self in _INTEGRAL

    @property
    def is_signed(self) -> bool:
        """True for types that hold negative values (floating-point but f8e8m0, and signed integers)."""
        return (self.is_real and self is not Type.f8e8m0) or self in _SIGNED_INTEGRAL

    @property
    def is_string(self) -> bool:
        """True for ``string``, the one element type that is not a number."""
        return self is Type.string

    @property
    def bitwidth(self) -> int:
        """Bits per element (4 for f4e2m1, i4 and u4, 2 for i2 and u2, though numpy holds each in a byte;
        for ``string``, the bits of StringDType's fixed part, 128: the text itself lives outside it)."""
        return _SUB_BYTE.get(self, 8 if self is Type.boolean else self.numpy.itemsize * 8)

    def get_type_name(self) -> str:
        """The OpenVINO spelling of the type (``f32``, ``boolean``...)."""
        return self.value

    @classmethod
    def of(cls, value: Any) -> Type:
        """Converts a ``Type``, a numpy dtype (or anything ``np.dtype`` accepts) or a type name.

        :raises ElementTypeError: (a ``ModelValidationError`` and a ``TypeError``) when the value names no
            supported element type; the message lists them.
        """
        if isinstance(value, Type):
            return value
        if isinstance(value, str) and value in cls.__members__:
            return cls[value]
        try:
            dtype = np.dtype(value)
        except TypeError:
            dtype = None
        if dtype is not None and dtype in _FROM_NUMPY:
            return _FROM_NUMPY[dtype]
        if dtype is not None and dtype.kind in "TU":  # any StringDType (na_object, coerce) or <U
            return cls.string
        names = ", ".join(cls.__members__)
        raise ElementTypeError(f"{value!r} is not a supported element type; use one of: {names}")

    def __repr__(self) -> str:
        return f"<Type: {self.value}>"

    def __str__(self) -> str:
        return self.value


_TO_NUMPY: dict[Type, np.dtype[Any]] = {
    Type.f32: np.dtype(np.float32),
    Type.f16: np.dtype(np.float16),
    Type.bf16: np.dtype(ml_dtypes.bfloat16),
    Type.f64: np.dtype(np.float64),
    Type.i8: np.dtype(np.int8),
    Type.u8: np.dtype(np.uint8),
    Type.i16: np.dtype(np.int16),
    Type.u16: np.dtype(np.uint16),
    Type.i32: np.dtype(np.int32),
    Type.u32: np.dtype(np.uint32),
    Type.i64: np.dtype(np.int64),
    Type.u64: np.dtype(np.uint64),
    Type.boolean: np.dtype(np.bool_),
    Type.f8e4m3: np.dtype(ml_dtypes.float8_e4m3fn),
    Type.f8e5m2: np.dtype(ml_dtypes.float8_e5m2),
    Type.f8e4m3fnuz: np.dtype(ml_dtypes.float8_e4m3fnuz),
    Type.f8e5m2fnuz: np.dtype(ml_dtypes.float8_e5m2fnuz),
    Type.f8e8m0: np.dtype(ml_dtypes.float8_e8m0fnu),
    Type.f4e2m1: np.dtype(ml_dtypes.float4_e2m1fn),
    Type.i4: np.dtype(ml_dtypes.int4),
    Type.u4: np.dtype(ml_dtypes.uint4),
    Type.i2: np.dtype(ml_dtypes.int2),
    Type.u2: np.dtype(ml_dtypes.uint2),
    Type.string: np.dtype(np.dtypes.StringDType()),
}
_REAL = frozenset(
    {Type.f32, Type.f16, Type.bf16, Type.f64, Type.f8e4m3, Type.f8e5m2, Type.f8e4m3fnuz, Type.f8e5m2fnuz}
    | {Type.f8e8m0, Type.f4e2m1}
)
_SIGNED_INTEGRAL = frozenset({Type.i2, Type.i4, Type.i8, Type.i16, Type.i32, Type.i64})
_INTEGRAL = _SIGNED_INTEGRAL | {Type.u2, Type.u4, Type.u8, Type.u16, Type.u32, Type.u64}
_SUB_BYTE = {Type.f4e2m1: 4, Type.i4: 4, Type.u4: 4, Type.i2: 2, Type.u2: 2}
_FROM_NUMPY: dict[np.dtype[Any], Type] = {dtype: t for t, dtype in _TO_NUMPY.items()}


def as_strings(value: Any) -> np.ndarray | None:
    """``value`` as a ``string`` array (StringDType), or None when it is not text.

    Accepted: StringDType arrays (returned as they are), ``<U`` arrays, and object arrays (or lists)
    whose every item is a ``str``. Bytes, numbers and ``None`` are not text: the caller raises.
    """
    array = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=object)
    if array.dtype == _STRING:
        return array
    if array.dtype.kind in "TU" or (array.dtype == object and all(isinstance(v, str) for v in array.flat)):
        return array.astype(_STRING)
    return None


_STRING = _TO_NUMPY[Type.string]
