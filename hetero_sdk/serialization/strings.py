"""``string`` arrays in the weights buffer: UTF-8 text behind a table of lengths, never pickled.

An array of ``n`` strings (C order) is stored as ``n`` little-endian ``u64`` byte lengths, then the
UTF-8 bytes of every string, one after another::

    [len_0][len_1]...[len_{n-1}][utf8_0][utf8_1]...[utf8_{n-1}]

The record's ``size`` is the whole: ``8 * n`` plus the sum of the lengths. Empty strings take a
length of 0 and no bytes; any Unicode text round-trips (surrogates, which UTF-8 cannot hold, are
refused when saving).
"""

from __future__ import annotations

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.serialization.schema import format_error

__all__ = ["STRING_DTYPE", "decode_strings", "encode_strings"]

STRING_DTYPE = Type.string.numpy
"""The numpy dtype of ``string`` arrays (StringDType)."""

_LENGTH = np.dtype("<u8")


def encode_strings(array: np.ndarray, where: str = "", source: str = "") -> bytes:
    """The stored bytes of a ``string`` array (see the module's docs).

    :raises ModelFormatError: naming ``where`` when a string cannot be UTF-8 encoded (a lone surrogate).
    """
    try:
        encoded = [str(s).encode("utf-8") for s in np.ravel(array)]
    except UnicodeEncodeError as exc:
        raise format_error(source, where, f"a string cannot be stored as UTF-8 ({exc.reason})", "") from None
    lengths = np.array([len(e) for e in encoded], _LENGTH)
    return lengths.tobytes() + b"".join(encoded)


def decode_strings(raw: bytes | memoryview, shape: tuple[int, ...], source: str, start: int, where: str) -> np.ndarray:
    """The read-only ``string`` array stored in ``raw`` (the record's bytes, at byte ``start`` of ``source``).

    :raises ModelFormatError: giving the byte offset when the lengths do not fit the bytes, or the
        bytes are not UTF-8.
    """
    count = int(np.prod(shape, dtype=np.int64))
    table = count * _LENGTH.itemsize
    if len(raw) < table:
        raise format_error(
            source, f"byte offset {start + len(raw)} ({where})", f"the {count} string lengths need {table} bytes"
        )
    lengths = np.frombuffer(raw[:table], _LENGTH)
    ends = np.cumsum(lengths, dtype=np.uint64) if count else np.zeros(0, np.uint64)
    body = len(raw) - table
    if count and (int(ends[-1]) != body or int(lengths.max()) > body):
        raise format_error(
            source,
            f"byte offset {start}..{start + len(raw)} ({where})",
            f"the string lengths add up to {int(ends[-1]) if lengths.max() <= body else 'more'} bytes, "
            f"the record holds {body} after its length table",
        )
    data = bytes(raw[table:])
    out = np.empty(count, STRING_DTYPE)
    begin = 0
    for i, end in enumerate(ends.tolist()):
        try:
            out[i] = data[begin:end].decode("utf-8")
        except UnicodeDecodeError as exc:
            offset = start + table + begin + exc.start
            raise format_error(source, f"byte offset {offset} ({where})", f"string {i} is not UTF-8") from None
        begin = end
    out = out.reshape(shape)
    out.setflags(write=False)
    return out
