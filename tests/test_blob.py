"""The blob container: checksummed frames that never run code; every corruption is a BlobFormatError."""

from __future__ import annotations

import hashlib
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetero_sdk.blob import BLOB_VERSION, pack_blob, unpack_blob
from hetero_sdk.errors import BlobFormatError

FRAMES = {"config": b'{"PERF_COUNT": false}', "model": bytes(range(256)) * 3, "empty": b""}


def test_round_trip_keeps_every_frame() -> None:
    assert unpack_blob(pack_blob("DEV", FRAMES), "DEV") == FRAMES


def test_layout_starts_with_magic_version_and_device() -> None:
    blob = pack_blob("DEV", {"a": b"xyz"})
    magic, version, name_len, count = struct.unpack_from("<8sHHI", blob)
    assert (magic, version, name_len, count) == (b"HSDKBLOB", BLOB_VERSION, 3, 1)
    assert blob[16:19] == b"DEV"
    assert hashlib.sha256(b"a" + b"xyz").digest() in blob


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=8), st.binary(max_size=64), max_size=4))
def test_any_frames_round_trip(frames: dict[str, bytes]) -> None:
    assert unpack_blob(pack_blob("TEMPLATE", frames), "TEMPLATE") == frames


def test_every_single_byte_flip_is_detected() -> None:
    blob = pack_blob("DEV", {"config": b"{}", "model": b"graph-and-weights" * 4})
    for position in range(len(blob)):
        for mask in (0x01, 0x80, 0xFF):
            damaged = bytearray(blob)
            damaged[position] ^= mask
            with pytest.raises(BlobFormatError):
                unpack_blob(bytes(damaged), "DEV")


def test_every_truncation_is_detected() -> None:
    blob = pack_blob("DEV", {"config": b"{}", "model": b"weights" * 8})
    for length in range(len(blob)):
        with pytest.raises(BlobFormatError):
            unpack_blob(blob[:length], "DEV")


def test_truncation_names_the_part_and_offset() -> None:
    blob = pack_blob("DEV", {"model": b"x" * 100})
    with pytest.raises(BlobFormatError, match=r"truncated: frame 'model' at offset \d+ needs 100 bytes"):
        unpack_blob(blob[:-1], "DEV")


def test_trailing_bytes_are_rejected() -> None:
    with pytest.raises(BlobFormatError, match="unexpected bytes"):
        unpack_blob(pack_blob("DEV", {"a": b"1"}) + b"\0", "DEV")


def test_checksum_mismatch_names_the_frame() -> None:
    blob = bytearray(pack_blob("DEV", {"model": b"abcdef"}))
    blob[-1] ^= 0x20
    with pytest.raises(BlobFormatError, match=r"frame 'model' at offset \d+ is corrupted"):
        unpack_blob(bytes(blob), "DEV")


def test_foreign_device_blob_names_both_devices() -> None:
    with pytest.raises(BlobFormatError, match=r"exported by device 'XLA'.*not 'TEMPLATE'"):
        unpack_blob(pack_blob("XLA", FRAMES), "TEMPLATE")


def test_newer_format_version_asks_for_an_upgrade() -> None:
    blob = bytearray(pack_blob("DEV", FRAMES))
    struct.pack_into("<H", blob, 8, BLOB_VERSION + 1)
    with pytest.raises(BlobFormatError, match=r"newer.*upgrade"):
        unpack_blob(bytes(blob), "DEV")


@pytest.mark.parametrize("garbage", [b"", b"HSDK", b"PK\x03\x04" + b"\0" * 40, b"\x80\x04\x95" + b"\0" * 40])
def test_non_blobs_are_rejected(garbage: bytes) -> None:
    with pytest.raises(BlobFormatError):
        unpack_blob(garbage, "DEV")


def test_blob_format_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        unpack_blob(b"nonsense", "DEV")
