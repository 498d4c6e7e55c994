"""Input values that are not numpy arrays of the model's type: Python numbers and lists, numpy scalars,
and strings, made into the array an input takes, or refused with an :class:`InferenceError`."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetero_sdk.element_type import Type, as_strings
from hetero_sdk.errors import InferenceError
from hetero_sdk.graph.node import Output

__all__ = ["checked_strings", "from_python"]

_TAKES = {"b": "booleans", "i": "integers", "u": "integers", "f": "floats", "U": "strings", "S": "bytes"}


def from_python(port: Output, value: Any) -> np.ndarray:
    """``value`` (a Python number, a nested list or tuple of them, a numpy scalar) as an array of
    ``port``'s element type.

    The values are read as numpy reads them (``np.asarray`` without a type), then converted only when no
    value changes kind or range: booleans into any numeric type, integers into integer and floating
    types, floats into floating types. A float into an integer input, a string into a number, an
    integer out of the type's range or a float too big for it is refused rather than rounded or wrapped.

    :raises InferenceError: naming the input and the type it expects.
    """
    expected = port.element_type
    where = f"input {port.any_name!r} ({expected.value})"
    try:
        array = np.asarray(value)
    except (ValueError, OverflowError) as exc:  # ragged lists
        raise InferenceError(f"{where}: {type(value).__name__} is not a regular array of numbers ({exc})") from None
    kind = array.dtype.kind
    numeric = expected.is_real or expected.is_integral
    fits = (kind == "b" and (numeric or expected == Type.boolean)) or (kind in "iu" and numeric)
    fits = fits or (kind == "f" and expected.is_real)
    if not fits:
        what = _TAKES.get(kind, f"values numpy reads as {array.dtype}")
        raise InferenceError(
            f"{where}: the {type(value).__name__} holds {what}, which do not convert to {expected.value} without "
            f"changing their values; pass {expected.value} values (or a numpy array of np.{expected.numpy})"
        )
    with np.errstate(all="ignore"):
        converted = array.astype(expected.numpy)
        if kind in "iu" and expected.is_integral:
            changed = not np.array_equal(converted.astype(array.dtype), array)
        else:  # a finite value made inf (or nan, for types without inf)
            changed = bool(np.any(np.isfinite(array) & ~np.isfinite(converted.astype(np.float64))))
    if changed:
        raise InferenceError(
            f"{where}: the {type(value).__name__} holds values outside the range of {expected.value}; "
            f"pass values that fit it, or convert the model's input"
        )
    return converted


def checked_strings(port: Output, array: np.ndarray) -> np.ndarray:
    """A ``string`` input as StringDType, from StringDType, ``<U`` or object arrays of ``str``."""
    strings = as_strings(array)
    if strings is None:
        what = "an object array holding non-str items (bytes? decode them)" if array.dtype == object else array.dtype
        raise InferenceError(
            f"input {port.any_name!r} is {what}; the model expects string: pass "
            "np.array([...], dtype=np.dtypes.StringDType()), a <U array or an object array of str"
        )
    return strings
