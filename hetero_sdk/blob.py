"""A framed, checksummed container for exported compiled models.

Layout: magic ``HSDKBLOB``, format version (u16), device-name length (u16), frame count (u32), the
device name, then the frames. A frame is its name length (u16), its payload length (u64) and the
SHA-256 of its name and payload, then the name and the payload. The frame count makes a blob cut at a frame
boundary detectable, and nothing may follow the last frame. Nothing in a blob is ever executed:
payloads are bytes that the importing plugin parses itself (JSON, the native model format, StableHLO).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping
from typing import Any

from hetero_sdk.errors import BlobFormatError

__all__ = ["BLOB_VERSION", "blob_device", "check_header_fields", "pack_blob", "unpack_blob"]

BLOB_VERSION = 1
_MAGIC = b"HSDKBLOB"
_HEAD = struct.Struct("<8sHHI")  # magic, version, device-name length, frame count
_FRAME = struct.Struct("<HQ32s")  # name length, payload length, sha256


def pack_blob(device: str, frames: Mapping[str, bytes]) -> bytes:
    """Packs named payloads for ``device`` into one checksummed blob."""
    device_bytes = device.encode()
    parts = [_HEAD.pack(_MAGIC, BLOB_VERSION, len(device_bytes), len(frames)), device_bytes]
    for name, payload in frames.items():
        name_bytes = name.encode()
        digest = hashlib.sha256(name_bytes + payload).digest()
        parts += [_FRAME.pack(len(name_bytes), len(payload), digest), name_bytes, payload]
    return b"".join(parts)


def blob_device(blob: bytes | bytearray | memoryview) -> str | None:
    """The device name a blob made by :func:`pack_blob` was packed for, or None when ``blob`` is not one."""
    data = memoryview(blob)
    if bytes(data[:8]) != _MAGIC or len(data) < _HEAD.size:
        return None
    _, _, name_len, _ = _HEAD.unpack_from(data)
    return bytes(data[_HEAD.size : _HEAD.size + name_len]).decode(errors="replace")


def unpack_blob(blob: bytes, device: str) -> dict[str, bytes]:
    """Unpacks a blob made by :func:`pack_blob` for ``device``, verifying every frame.

    :raises BlobFormatError: when the blob is not a hetero-sdk blob, comes from another device or a
        newer format version, is truncated or has bytes after its last frame, or a frame's checksum
        does not match (naming the frame and its byte offset).
    """
    data = memoryview(bytes(blob))
    if bytes(data[:8]) != _MAGIC:
        raise BlobFormatError("not a hetero-sdk blob (bad magic at offset 0); export it with compiled.export_model()")
    _take(data, 0, _HEAD.size, "header")
    _, version, name_len, count = _HEAD.unpack_from(data)
    if version > BLOB_VERSION:
        raise BlobFormatError(
            f"blob format version {version} is newer than this hetero-sdk reads ({BLOB_VERSION}); upgrade hetero-sdk"
        )
    if version < 1:
        raise BlobFormatError(f"blob format version {version} at offset 8 does not exist; the blob is corrupted")
    offset = _HEAD.size
    owner = _take(data, offset, name_len, "device name").decode(errors="replace")
    offset += name_len
    if owner != device:
        raise BlobFormatError(f"blob was exported by device {owner!r}; import it on {owner!r}, not {device!r}")
    frames: dict[str, bytes] = {}
    for _ in range(count):
        start = offset
        header = _take(data, offset, _FRAME.size, "frame header")
        name_len, size, digest = _FRAME.unpack(header)
        offset += _FRAME.size
        name_bytes = _take(data, offset, name_len, "frame name")
        name = name_bytes.decode(errors="replace")
        offset += name_len
        payload = _take(data, offset, size, f"frame {name!r}")
        offset += size
        checksum = hashlib.sha256(name_bytes)
        checksum.update(payload)  # (not name + payload: a frame of weights is not copied once more)
        if checksum.digest() != digest:
            raise BlobFormatError(
                f"frame {name!r} at offset {start} is corrupted (checksum mismatch); export the model again"
            )
        if name in frames:
            raise BlobFormatError(f"frame {name!r} at offset {start} appears twice; the blob is corrupted")
        frames[name] = payload
    if offset != len(data):
        raise BlobFormatError(
            f"blob has {len(data) - offset} unexpected bytes at offset {offset} after its {count} frame(s)"
        )
    return frames


def _take(data: memoryview, offset: int, size: int, what: str) -> bytes:
    if offset + size > len(data):
        raise BlobFormatError(
            f"blob is truncated: {what} at offset {offset} needs {size} bytes, {len(data) - offset} remain"
        )
    return bytes(data[offset : offset + size])


_JSON_NAMES = {str: "string", bool: "boolean", int: "integer", dict: "object", list: "array"}


def check_header_fields(header: Any, fields: Mapping[str, type], where: str) -> dict[str, Any]:
    """A blob's parsed JSON header, checked to be an object whose ``fields`` hold values of their JSON
    types (a boolean is not taken for an integer).

    :param header: what the header frame parsed to.
    :param fields: field name to ``str``, ``bool``, ``int``, ``dict`` or ``list``.
    :param where: the blob, for the message (``"XLA blob"``).
    :raises BlobFormatError: naming the first field that is missing or of another type, and what it holds.
    """
    if not isinstance(header, dict):
        raise BlobFormatError(f"{where} frame 'header' is a JSON {type(header).__name__}, not an object")
    for field, kind in fields.items():
        value = header.get(field)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise BlobFormatError(f"{where} header field {field!r} is {value!r:.200}, not a JSON {_JSON_NAMES[kind]}")
    return header
