"""A framed, checksummed container for exported compiled models.

Layout: magic ``HSDKBLOB``, format version (u16), device name, then frames. A frame is its name, its
payload length (u64) and the payload's SHA-256, then the payload. Nothing in a blob is ever executed:
payloads are bytes that the importing plugin parses itself (JSON, the native model format, StableHLO).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping

from hetero_sdk.errors import BlobFormatError

__all__ = ["BLOB_VERSION", "pack_blob", "unpack_blob"]

BLOB_VERSION = 1
_MAGIC = b"HSDKBLOB"
_HEAD = struct.Struct("<8sHH")  # magic, version, device-name length
_FRAME = struct.Struct("<HQ32s")  # name length, payload length, sha256


def pack_blob(device: str, frames: Mapping[str, bytes]) -> bytes:
    """Packs named payloads for ``device`` into one checksummed blob."""
    device_bytes = device.encode()
    parts = [_HEAD.pack(_MAGIC, BLOB_VERSION, len(device_bytes)), device_bytes]
    for name, payload in frames.items():
        name_bytes = name.encode()
        parts += [_FRAME.pack(len(name_bytes), len(payload), hashlib.sha256(payload).digest()), name_bytes, payload]
    return b"".join(parts)


def unpack_blob(blob: bytes, device: str) -> dict[str, bytes]:
    """Unpacks a blob made by :func:`pack_blob` for ``device``, verifying every frame.

    :raises BlobFormatError: when the blob is not a hetero-sdk blob, comes from another device or a
        newer format version, is truncated, or a frame's checksum does not match (naming the frame
        and its byte offset).
    """
    data = memoryview(bytes(blob))
    if len(data) < _HEAD.size or bytes(data[:8]) != _MAGIC:
        raise BlobFormatError("not a hetero-sdk blob (bad magic at offset 0); export it with compiled.export_model()")
    _, version, name_len = _HEAD.unpack_from(data)
    if version > BLOB_VERSION:
        raise BlobFormatError(
            f"blob format version {version} is newer than this hetero-sdk reads ({BLOB_VERSION}); upgrade hetero-sdk"
        )
    offset = _HEAD.size
    owner = _take(data, offset, name_len, "device name").decode(errors="replace")
    offset += name_len
    if owner != device:
        raise BlobFormatError(f"blob was exported by device {owner!r}; import it on {owner!r}, not {device!r}")
    frames: dict[str, bytes] = {}
    while offset < len(data):
        start = offset
        header = _take(data, offset, _FRAME.size, "frame header")
        name_len, size, digest = _FRAME.unpack(header)
        offset += _FRAME.size
        name = _take(data, offset, name_len, "frame name").decode(errors="replace")
        offset += name_len
        payload = _take(data, offset, size, f"frame {name!r}")
        offset += size
        if hashlib.sha256(payload).digest() != digest:
            raise BlobFormatError(
                f"frame {name!r} at offset {start} is corrupted (checksum mismatch); export the model again"
            )
        frames[name] = payload
    return frames


def _take(data: memoryview, offset: int, size: int, what: str) -> bytes:
    if offset + size > len(data):
        raise BlobFormatError(
            f"blob is truncated: {what} at offset {offset} needs {size} bytes, {len(data) - offset} remain"
        )
    return bytes(data[offset : offset + size])
