"""Attribute and rt_info values to JSON and back.

Attribute values are stored exactly: JSON's own types stand for themselves, and a one-key-tagged
object stands for the rest::

    float nan/inf   {"$float": "nan" | "inf" | "-inf", "bits": "7ff8000000000000"}   (bits: nan only)
    tuple           {"$tuple": [...]}
    Type            {"$type": "f32"}
    PartialShape    {"$shape": [1, -1, 3]}   ({"$shape": null}: a dynamic rank)
    numpy scalar    {"$scalar": "f16", "hex": "003c"}            (little-endian bytes)
    numpy array     {"$tensor": "f32", "shape": [2, 3], "offset": 0, "size": 24, "crc32": ...}

rt_info values must be plain JSON (str, finite numbers, bool, None, lists, dicts with str keys) and are
stored as they are.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.serialization.schema import DTYPES, dtype_name, format_error
from hetero_sdk.serialization.weights import little_endian, to_le_bytes
from hetero_sdk.shape import PartialShape

__all__ = ["MAX_DEPTH", "decode_attr", "encode_attr", "rt_info_to_json"]

MAX_DEPTH = 64
"""The deepest nesting of lists a value may have (a guard against crafted documents)."""

ArraySink = Callable[[np.ndarray, str], dict[str, Any]]
"""Stores an array in the weights and returns its record (``offset``, ``size``, ``crc32``)."""

ArraySource = Callable[[np.dtype[Any], tuple[int, ...], dict[str, Any], str], np.ndarray]
"""Reads the array a record points at: ``(dtype, shape, record, where) -> array``."""

_SUPPORTED = "int, float, str, bool, None, list, tuple, Type, PartialShape, numpy scalar or np.ndarray (not a subclass)"
_NONFINITE = {"inf": math.inf, "-inf": -math.inf}


def encode_attr(value: Any, where: str, source: str, sink: ArraySink, depth: int = 0) -> Any:
    """The JSON form of an attribute value; arrays go to ``sink``.

    :raises ModelFormatError: naming ``where`` when the value (or an item of it) cannot be stored.
    """
    if depth > MAX_DEPTH:
        raise format_error(source, where, f"is nested deeper than {MAX_DEPTH} levels", "flatten the attribute")
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        if math.isfinite(value):
            return value
        if math.isnan(value):
            return {"$float": "nan", "bits": struct.pack(">d", value).hex()}
        return {"$float": "inf" if value > 0 else "-inf"}
    if type(value) in (list, tuple):
        items = [encode_attr(v, f"{where}[{i}]", source, sink, depth + 1) for i, v in enumerate(value)]
        return items if type(value) is list else {"$tuple": items}
    if isinstance(value, Type):
        return {"$type": value.value}
    if isinstance(value, PartialShape):
        return {"$shape": list(value.dims) if value.rank_is_static else None}
    if type(value) is np.ndarray or isinstance(value, np.generic):
        name = dtype_name(value.dtype)
        if name is None:
            raise format_error(
                source, where, f"numpy dtype {value.dtype} cannot be stored", f"use one of: {', '.join(DTYPES)}"
            )
        if isinstance(value, np.generic):
            return {"$scalar": name, "hex": to_le_bytes(np.asarray(value)).hex()}
        return {"$tensor": name, "shape": list(value.shape), **sink(value, where)}
    raise format_error(
        source, where, f"a value of type {type(value).__name__} cannot be stored", f"attributes may be: {_SUPPORTED}"
    )


def decode_attr(value: Any, where: str, source: str, arrays: ArraySource, depth: int = 0) -> Any:
    """The attribute value a JSON form stands for (the inverse of :func:`encode_attr`).

    Only the tags above are recognised; nothing in the document is imported, evaluated or unpickled.

    :raises ModelFormatError: naming ``where`` for an unknown tag or a malformed value.
    """
    if depth > MAX_DEPTH:
        raise format_error(source, where, f"is nested deeper than {MAX_DEPTH} levels")
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) is list:
        return [decode_attr(v, f"{where}[{i}]", source, arrays, depth + 1) for i, v in enumerate(value)]
    if type(value) is not dict:
        raise format_error(source, where, f"unexpected JSON value of type {type(value).__name__}")
    tags = [k for k in value if k.startswith("$")]
    if len(tags) != 1:
        raise format_error(source, where, f"an object value needs exactly one tag ({', '.join(_DECODERS)}), got {tags}")
    tag = tags[0]
    decoder = _DECODERS.get(tag)
    if decoder is None:
        raise format_error(source, where, f"unknown value tag {tag!r}; known: {', '.join(_DECODERS)}")
    return decoder(value, where, source, arrays, depth)


def rt_info_to_json(info: Any, where: str, source: str, depth: int = 0) -> Any:
    """Checks that an rt_info value is plain JSON and returns a copy of it.

    :raises ModelFormatError: naming ``where`` for anything JSON cannot hold exactly (tuples, sets,
        objects, non-finite floats, non-string keys); such values are never dropped silently.
    """
    if depth > MAX_DEPTH:
        raise format_error(source, where, f"is nested deeper than {MAX_DEPTH} levels", "flatten the rt_info value")
    if info is None or type(info) in (bool, int, str):
        return info
    if type(info) is float:
        if not math.isfinite(info):
            raise format_error(source, where, f"{info} has no JSON form", "store it as a string in rt_info")
        return info
    if type(info) is list:
        return [rt_info_to_json(v, f"{where}[{i}]", source, depth + 1) for i, v in enumerate(info)]
    if type(info) is dict:
        for key in info:
            if type(key) is not str:
                raise format_error(source, where, f"key {key!r} is not a string", "rt_info dicts need str keys")
        return {k: rt_info_to_json(v, f"{where}[{k!r}]", source, depth + 1) for k, v in info.items()}
    raise format_error(
        source,
        where,
        f"a value of type {type(info).__name__} is not JSON-compatible",
        "rt_info values may be str, finite int or float, bool, None, lists and dicts with str keys "
        "(use a list for a tuple, a str for anything else)",
    )


def _dtype(name: Any, where: str, source: str) -> np.dtype[Any]:
    if type(name) is not str or name not in DTYPES:
        raise format_error(source, where, f"unknown element type {name!r}; known: {', '.join(DTYPES)}")
    return DTYPES[name]


def _expect_keys(value: dict[str, Any], keys: set[str], where: str, source: str) -> None:
    if set(value) != keys:
        raise format_error(source, where, f"expects the keys {sorted(keys)}, got {sorted(value)}")


def _decode_float(value: dict[str, Any], where: str, source: str, arrays: ArraySource, depth: int) -> float:
    kind = value["$float"]
    if kind == "nan":
        _expect_keys(value, {"$float", "bits"}, where, source)
        bits = value["bits"]
        try:
            decoded: float = struct.unpack(">d", bytes.fromhex(bits))[0]
        except (TypeError, ValueError, struct.error):
            raise format_error(source, where, f"bits {bits!r} are not 16 hex digits") from None
        if not math.isnan(decoded):
            raise format_error(source, where, f"bits {bits!r} are not a nan")
        return decoded
    _expect_keys(value, {"$float"}, where, source)
    if kind not in _NONFINITE:
        raise format_error(source, where, f"$float must be 'nan', 'inf' or '-inf', got {kind!r}")
    return _NONFINITE[kind]


def _decode_tuple(value: dict[str, Any], where: str, source: str, arrays: ArraySource, depth: int) -> tuple[Any, ...]:
    _expect_keys(value, {"$tuple"}, where, source)
    items = value["$tuple"]
    if type(items) is not list:
        raise format_error(source, where, "$tuple must hold a list")
    return tuple(decode_attr(v, f"{where}[{i}]", source, arrays, depth + 1) for i, v in enumerate(items))


def _decode_type(value: dict[str, Any], where: str, source: str, arrays: ArraySource, depth: int) -> Type:
    _expect_keys(value, {"$type"}, where, source)
    name = value["$type"]
    if type(name) is not str or name not in Type.__members__:
        raise format_error(source, where, f"unknown element type {name!r}; known: {', '.join(Type.__members__)}")
    return Type[name]


def _decode_shape(value: dict[str, Any], where: str, source: str, arrays: ArraySource, depth: int) -> PartialShape:
    _expect_keys(value, {"$shape"}, where, source)
    if value["$shape"] is None:
        return PartialShape.dynamic()
    return PartialShape(_dims(value["$shape"], where, source, dynamic=True))


def _decode_scalar(value: dict[str, Any], where: str, source: str, arrays: ArraySource, depth: int) -> np.generic:
    _expect_keys(value, {"$scalar", "hex"}, where, source)
    dtype = _dtype(value["$scalar"], where, source)
    try:
        raw = bytes.fromhex(value["hex"])
    except (TypeError, ValueError):
        raise format_error(source, where, f"hex {value['hex']!r} is not hexadecimal") from None
    if len(raw) != dtype.itemsize:
        raise format_error(source, where, f"a {value['$scalar']} scalar takes {dtype.itemsize} bytes, got {len(raw)}")
    return np.frombuffer(raw, dtype=little_endian(dtype)).astype(dtype)[0]


def _decode_tensor(value: dict[str, Any], where: str, source: str, arrays: ArraySource, depth: int) -> np.ndarray:
    _expect_keys(value, {"$tensor", "shape", "offset", "size", "crc32"}, where, source)
    dtype = _dtype(value["$tensor"], where, source)
    shape = _dims(value["shape"], where, source, dynamic=False)
    return arrays(dtype, shape, value, where)


def _dims(dims: Any, where: str, source: str, *, dynamic: bool) -> tuple[int, ...]:
    lowest = -1 if dynamic else 0
    if type(dims) is not list or any(type(d) is not int or d < lowest for d in dims):
        what = "non-negative integers or -1 (dynamic)" if dynamic else "non-negative integers"
        raise format_error(source, where, f"shape {dims!r} must be a list of {what}")
    return tuple(dims)


_DECODERS: dict[str, Callable[[dict[str, Any], str, str, ArraySource, int], Any]] = {
    "$float": _decode_float,
    "$tuple": _decode_tuple,
    "$type": _decode_type,
    "$shape": _decode_shape,
    "$scalar": _decode_scalar,
    "$tensor": _decode_tensor,
}
