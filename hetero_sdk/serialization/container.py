"""The single-byte-string form of a model (for blobs): a fixed header, the JSON document, then the weights.

Layout (little-endian)::

    0   magic        8 bytes  b"HSDKMODL"
    8   version      u32      the format version
    12  header size  u32      72
    16  JSON size    u64
    24  weights at   u64      (aligned to ALIGNMENT)
    32  weights size u64
    40  JSON sha256  32 bytes
    72  JSON document (UTF-8), zero padding, weights

The weights carry their own checksums (in the document); the header's sha256 covers the document.
"""

from __future__ import annotations

import hashlib
import struct

from hetero_sdk.serialization.schema import ALIGNMENT, FORMAT_VERSION, check_version, format_error

__all__ = ["MAGIC", "pack", "unpack"]

MAGIC = b"HSDKMODL"
"""The first bytes of every model byte string."""

_HEADER = struct.Struct("<8sIIQQQ32s")


def pack(document: bytes, weights: bytes, version: int = FORMAT_VERSION) -> bytes:
    """One byte string holding ``document`` and ``weights``.

    :param version: the format version the document is written in (the header repeats it).
    """
    start = _HEADER.size + len(document)
    weights_at = start + (-start % ALIGNMENT)
    header = _HEADER.pack(
        MAGIC, version, _HEADER.size, len(document), weights_at, len(weights), hashlib.sha256(document).digest()
    )
    return b"".join((header, document, bytes(weights_at - start), weights))


def unpack(data: bytes, source: str) -> tuple[memoryview, memoryview, int]:
    """The document, the weights and the weights' offset in ``data``, after checking the header.

    :raises ModelFormatError: naming ``source`` and the byte offset for a truncated, foreign,
        newer-version or corrupted byte string.
    """
    if len(data) < len(MAGIC) or data[: len(MAGIC)] != MAGIC:
        raise format_error(
            source,
            "byte offset 0",
            f"is not a hetero-sdk model (it starts with {bytes(data[:8])!r}, expected {MAGIC!r})",
            "pass the bytes hetero_sdk.serialization.model_to_bytes returned",
        )
    if len(data) >= 12:
        (version,) = struct.unpack_from("<I", data, 8)
        check_version(version, source, "byte offset 8", "export the model again")
    if len(data) < _HEADER.size:
        raise format_error(
            source, "", f"is truncated: {len(data)} bytes, shorter than the {_HEADER.size}-byte header", _COPY_HINT
        )
    _, _, header_size, doc_size, weights_at, weights_size, digest = _HEADER.unpack_from(data)
    if header_size != _HEADER.size:
        raise format_error(source, "byte offset 12", f"header size {header_size} should be {_HEADER.size}")
    doc_end = _HEADER.size + doc_size
    if weights_at < doc_end:
        raise format_error(source, "byte offset 24", f"the weights ({weights_at}) overlap the document (..{doc_end})")
    if weights_at + weights_size > len(data):
        raise format_error(
            source,
            f"byte offset {len(data)}",
            f"is truncated: {len(data)} bytes, the header announces {weights_at + weights_size}",
            _COPY_HINT,
        )
    if weights_at + weights_size < len(data):
        raise format_error(
            source,
            f"byte offset {weights_at + weights_size}",
            f"{len(data) - weights_at - weights_size} unexpected bytes follow the weights",
            "pass exactly the bytes hetero_sdk.serialization.model_to_bytes returned",
        )
    view = memoryview(data)
    document = view[_HEADER.size : doc_end]
    if hashlib.sha256(document).digest() != digest:
        raise format_error(
            source,
            f"byte offset {_HEADER.size}..{doc_end}",
            "the model document is corrupted (its sha256 differs from the header's)",
            _COPY_HINT,
        )
    return document, view[weights_at : weights_at + weights_size], weights_at


_COPY_HINT = "the bytes were cut or changed in transit; export the model again"
