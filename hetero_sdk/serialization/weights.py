"""The weights buffer: arrays packed little-endian at aligned offsets, each with a crc32, the whole with a sha256."""

from __future__ import annotations

import hashlib
import math
import mmap
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.serialization.schema import ALIGNMENT, field, format_error
from hetero_sdk.serialization.strings import STRING_DTYPE, decode_strings, encode_strings

__all__ = ["WeightsBuilder", "WeightsView", "little_endian", "to_le_bytes"]


_SUB_BYTE_BITS: dict[np.dtype[Any], int] = {t.numpy: t.bitwidth for t in Type if t.bitwidth < 8}
"""The 4- and 2-bit types, stored one element a byte in the low bits (as ``ml_dtypes`` holds them)."""


def little_endian(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """``dtype`` in little-endian byte order (the order of the weights); one-byte dtypes unchanged."""
    return dtype.newbyteorder("<") if dtype.byteorder in "=<>" else dtype


def to_le_bytes(array: np.ndarray) -> bytes:
    """The C-order, little-endian bytes of ``array`` (``string`` arrays: see :mod:`.strings`)."""
    if array.dtype == STRING_DTYPE:
        return encode_strings(array)
    return np.ascontiguousarray(array).astype(little_endian(array.dtype), copy=False).tobytes()


def _le_buffer(array: np.ndarray) -> bytes | memoryview:
    """What :func:`to_le_bytes` gives, as a view of ``array`` itself where it is already C-ordered and
    little-endian (a weight is then hashed and written without a copy)."""
    if array.dtype == STRING_DTYPE:
        return encode_strings(array)
    flat = np.ascontiguousarray(array).astype(little_endian(array.dtype), copy=False).reshape(-1)
    return flat.view(np.uint8).data


class WeightsBuilder:
    """Packs arrays into one buffer; an array object added twice is stored once. The buffer's pieces
    are views of the arrays where their bytes are already in the stored order, not copies."""

    def __init__(self) -> None:
        self._parts: list[bytes | memoryview] = []
        self._size = 0
        self._sha256 = hashlib.sha256()
        self._stored: dict[int, tuple[np.ndarray, dict[str, Any]]] = {}

    def add(self, array: np.ndarray, where: str = "") -> dict[str, Any]:
        """Stores ``array`` and returns its record: ``offset``, ``size`` (bytes) and ``crc32``."""
        seen = self._stored.get(id(array))
        if seen is not None:
            return dict(seen[1])
        padding = -self._size % ALIGNMENT
        if padding:
            self._append(bytes(padding))
        data = _le_buffer(array)
        record = {"offset": self._size, "size": len(data), "crc32": zlib.crc32(data)}
        self._append(data)
        self._stored[id(array)] = (array, record)  # keeps the array alive so its id stays unique
        return dict(record)

    def _append(self, data: bytes | memoryview) -> None:
        self._parts.append(data)
        self._size += len(data)
        self._sha256.update(data)

    @property
    def size(self) -> int:
        """The buffer's length in bytes."""
        return self._size

    def summary(self) -> dict[str, Any]:
        """The document's ``weights`` entry: ``size``, ``sha256`` and ``alignment``."""
        return {"size": self._size, "sha256": self._sha256.hexdigest(), "alignment": ALIGNMENT}

    def chunks(self) -> Iterator[bytes | memoryview]:
        """The buffer, piece by piece (to write it without joining it first)."""
        return iter(self._parts)

    def getvalue(self) -> bytes:
        """The whole buffer."""
        return b"".join(self._parts)


class WeightsView:
    """Checked, read-only access to a weights buffer described by a document's ``weights`` entry.

    :param data: the buffer.
    :param summary: the document's ``weights`` entry (checked here: size first, sha256 in :meth:`verify`).
    :param doc_source: the document's name, for errors about records.
    :param bin_source: the buffer's name (a file, or a blob section), for errors about its bytes.
    :param base: the buffer's offset inside ``bin_source``, so errors give absolute byte offsets.
    """

    def __init__(
        self,
        data: bytes | memoryview | mmap.mmap,
        summary: dict[str, Any],
        doc_source: str,
        bin_source: str,
        base: int = 0,
    ) -> None:
        self._data = data
        self._doc = doc_source
        self._bin = bin_source
        self._base = base
        self._size = _count(field(summary, "size", int, doc_source, "weights"), doc_source, "weights.size")
        self._sha256 = field(summary, "sha256", str, doc_source, "weights")
        if len(data) < self._size:
            raise format_error(
                bin_source,
                "",
                f"is truncated at byte offset {base + len(data)}: it has {len(data)} bytes of weights, "
                f"{doc_source} expects {self._size}",
                "copy the complete file again, or re-save the model",
            )
        if len(data) > self._size:
            raise format_error(
                bin_source,
                "",
                f"has {len(data)} bytes of weights, {doc_source} expects {self._size}: it belongs to another "
                "model or was appended to",
                "keep each .json beside the .bin saved with it, or re-save the model",
            )

    def array(self, dtype: np.dtype[Any], shape: tuple[int, ...], record: dict[str, Any], where: str) -> np.ndarray:
        """The read-only array ``record`` points at, after checking its bounds, size and crc32.

        :raises ModelFormatError: naming ``where`` (the attribute) and the byte range at fault.
        """
        offset = _count(field(record, "offset", int, self._doc, where), self._doc, f"{where}.offset")
        size = _count(field(record, "size", int, self._doc, where), self._doc, f"{where}.size")
        crc = _count(field(record, "crc32", int, self._doc, where), self._doc, f"{where}.crc32")
        expected = math.prod(shape) * dtype.itemsize
        if size != expected and dtype != STRING_DTYPE:
            raise format_error(
                self._doc, where, f"size {size} does not fit shape {list(shape)} of {dtype} ({expected} bytes)"
            )
        if offset + size > self._size:
            raise format_error(
                self._doc,
                where,
                f"bytes {offset}..{offset + size} point past the end of {self._bin} ({self._size} bytes of weights)",
            )
        raw = memoryview(self._data)[offset : offset + size]
        actual = zlib.crc32(raw)
        start = self._base + offset
        if actual != crc:
            raise format_error(
                self._bin,
                f"byte offset {start}..{start + size} ({where})",
                f"the weights are corrupted: crc32 is {actual:#010x}, {self._doc} records {crc:#010x}",
            )
        if dtype == STRING_DTYPE:
            return decode_strings(raw, shape, self._bin, start, where)
        array = np.frombuffer(raw, dtype=little_endian(dtype)).astype(dtype, copy=False).reshape(shape)
        if dtype == np.bool_ and size and np.frombuffer(raw, np.uint8).max() > 1:
            raise format_error(self._bin, f"byte offset {start} ({where})", "a boolean byte is neither 0 nor 1")
        bits = _SUB_BYTE_BITS.get(dtype)
        if bits and size and (np.frombuffer(raw, np.uint8) >> bits).any():
            raise format_error(
                self._bin, f"byte offset {start} ({where})", f"a {dtype} byte has bits set above its low {bits}"
            )
        if array.flags.writeable:
            array.setflags(write=False)
        return array

    def verify(self) -> None:
        """Checks the sha256 of the whole buffer (padding included).

        :raises ModelFormatError: when it differs from the document's.
        """
        actual = hashlib.sha256(self._data).hexdigest()
        if actual != self._sha256:
            raise format_error(
                self._bin,
                f"byte offset {self._base}..{self._base + self._size}",
                f"the weights are corrupted: sha256 is {actual}, {self._doc} records {self._sha256}",
            )


def _count(value: int, source: str, where: str) -> int:
    if value < 0:
        raise format_error(source, where, f"must not be negative, got {value}")
    return value
