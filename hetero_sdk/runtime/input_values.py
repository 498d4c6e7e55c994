"""Input values that are not numpy arrays of the model's type: Python numbers and lists, numpy scalars,
and strings, made into the array an input takes, or refused with an :class:`InferenceError`; and the
checks of what an infer request is given (inputs, output buffers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hetero_sdk.element_type import Type, as_strings
from hetero_sdk.errors import InferenceError
from hetero_sdk.graph.node import Output
from hetero_sdk.runtime.context import RemoteTensor
from hetero_sdk.runtime.tensor import Tensor

__all__ = ["checked_input", "checked_output_buffer", "checked_strings", "copied_inputs", "from_python"]

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


def checked_input(port: Output, tensor: Any) -> Any:
    """``tensor`` as the array (or remote tensor) input ``port`` takes: an ndarray or :class:`Tensor` of its
    element type and a shape it accepts, a remote tensor that fits, or Python values converted.

    :raises InferenceError: naming the input, for anything else.
    """
    expected = port.element_type
    if isinstance(tensor, Tensor):
        tensor = tensor.data
    if isinstance(tensor, np.ndarray):
        array = tensor
    elif isinstance(tensor, RemoteTensor):
        if tensor.element_type != expected or not port.partial_shape.compatible(tensor.shape):
            raise InferenceError(
                f"input {port.any_name!r}: remote tensor {tensor.element_type.value}{list(tensor.shape)} "
                f"does not fit {expected.value}{port.partial_shape}"
            )
        return tensor
    elif expected.is_string and isinstance(tensor, (list, tuple, str)):
        array = np.asarray(tensor, dtype=object)
    elif isinstance(tensor, (list, tuple, int, float, bool, np.generic)):
        array = from_python(port, tensor)
    else:
        raise InferenceError(f"input {port.any_name!r}: {type(tensor).__name__} is not a tensor; pass a numpy array")
    if expected.is_string:
        array = checked_strings(port, array)
    if array.dtype != expected.numpy:
        raise InferenceError(
            f"input {port.any_name!r} has element type {array.dtype}; the model expects {expected.value} "
            f"(convert with array.astype(np.{expected.numpy}))"
        )
    if not port.partial_shape.compatible(array.shape):
        raise InferenceError(
            f"input {port.any_name!r} has shape {list(array.shape)}; the model expects {port.partial_shape}"
        )
    return array


def checked_output_buffer(port: Output, buffer: Any) -> np.ndarray:
    """``buffer`` (an ndarray or :class:`Tensor`) as a writable array output ``port`` can be written into.

    :raises InferenceError: naming the output, for a read-only buffer or a wrong type or shape.
    """
    if isinstance(buffer, Tensor):
        buffer = buffer.data
    if not isinstance(buffer, np.ndarray) or not buffer.flags.writeable:
        raise InferenceError(f"output buffer for {port.any_name!r} must be a writable numpy array")
    if buffer.dtype != port.element_type.numpy or not port.partial_shape.compatible(buffer.shape):
        raise InferenceError(
            f"output buffer for {port.any_name!r} is {buffer.dtype}{list(buffer.shape)}; "
            f"expected {port.element_type.value}{port.partial_shape}"
        )
    return buffer


def copied_inputs(inputs: Any) -> Any:
    """``inputs`` (as ``InferRequest.infer`` takes them) with each host array copied."""

    def copy(value: Any) -> Any:
        if isinstance(value, Tensor):
            value = value.data
        return value.copy() if isinstance(value, np.ndarray) else value

    if isinstance(inputs, Mapping):
        return {key: copy(value) for key, value in inputs.items()}
    if isinstance(inputs, (list, tuple)):
        return [copy(value) for value in inputs]
    return copy(inputs)
