"""Claims: the one-byte-string form round-trips and rejects damaged bytes with ModelFormatError."""

from __future__ import annotations

import hashlib
import json
import struct

import numpy as np
import pytest

from hetero_sdk.errors import BlobFormatError, ModelFormatError, UnknownOpTypeError, UnsupportedOperationError
from hetero_sdk.reference import evaluate
from hetero_sdk.serialization import model_from_bytes, model_from_frame, model_to_bytes

HEADER = struct.Struct("<8sIIQQQ32s")  # magic, version, header size, JSON size, weights at, weights size, sha256


def _fails(data: bytes, *fragments: str, source: str = "<blob>") -> ModelFormatError:
    with pytest.raises(ModelFormatError) as info:
        model_from_bytes(data, source=source)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return info.value


def _repack(blob: bytes, document: dict) -> bytes:
    """A well-formed byte string with ``document`` in place of the original one (same weights)."""
    magic, version, size, _, weights_at, weights_size, _ = HEADER.unpack_from(blob)
    weights = blob[weights_at : weights_at + weights_size]
    text = json.dumps(document).encode()
    start = HEADER.size + len(text)
    at = start + (-start % 64)
    header = HEADER.pack(magic, version, size, len(text), at, len(weights), hashlib.sha256(text).digest())
    return header + text + bytes(at - start) + weights


def _document(blob: bytes) -> dict:
    _, _, _, json_size, _, _, _ = HEADER.unpack_from(blob)
    return json.loads(blob[HEADER.size : HEADER.size + json_size])


def test_layout_is_the_documented_one(reference_model):
    blob = model_to_bytes(reference_model)
    magic, version, size, json_size, weights_at, weights_size, digest = HEADER.unpack_from(blob)
    assert (magic, version, size) == (b"HSDKMODL", 1, 72)
    assert weights_at % 64 == 0 and weights_at >= 72 + json_size and weights_at + weights_size == len(blob)
    assert hashlib.sha256(blob[72 : 72 + json_size]).digest() == digest
    record = next(n for n in _document(blob)["nodes"] if n["name"] == "w")["attrs"]["value"]
    start = weights_at + record["offset"]
    assert blob[start : start + 16] == np.array([1.0, -2.0, 0.5, 4.0], "<f4").tobytes()


def test_bytes_round_trip_computes_the_same(reference_model, same_model):
    loaded = model_from_bytes(model_to_bytes(reference_model))
    same_model(reference_model, loaded)
    x = np.array([[1.0, 1.0, 1.0, 1.0], [-1.0, 2.0, 4.0, 0.0]], np.float32)
    expected = np.clip(np.maximum(x * [1.0, -2.0, 0.5, 4.0] + np.array([0.25, 0.0, -1.0, np.pi], np.float32), 0), 0, 3)
    np.testing.assert_allclose(evaluate(loaded, {"x": x})[0], expected, rtol=1e-6)


def test_mutable_buffers_are_copied_so_weights_stay_fixed(reference_model):
    buffer = bytearray(model_to_bytes(reference_model))
    loaded = model_from_bytes(memoryview(buffer))
    buffer[:] = bytes(len(buffer))
    weights = next(n for n in loaded.get_ops() if n.friendly_name == "w").attrs["value"]
    np.testing.assert_array_equal(weights, [1.0, -2.0, 0.5, 4.0])
    assert not weights.flags.writeable


def test_truncated_bytes(reference_model):
    blob = model_to_bytes(reference_model)
    _fails(blob[:-1], "<blob>", "truncated", f"announces {len(blob)}")
    _fails(blob[:40], "<blob>", "truncated", "72-byte header")


def test_trailing_bytes(reference_model):
    blob = model_to_bytes(reference_model)
    _fails(blob + b"xx", f"byte offset {len(blob)}", "2 unexpected bytes")


def test_foreign_bytes_name_the_source():
    blob = b"PK\x03\x04 a zip file"
    _fails(blob, "cache/entry.bin", "byte offset 0", "not a hetero-sdk model", source="cache/entry.bin")


def test_newer_version_in_the_header(reference_model):
    blob = bytearray(model_to_bytes(reference_model))
    blob[8:12] = struct.pack("<I", 7)
    _fails(bytes(blob), "byte offset 8", "format version 7", "up to 2")


def test_newer_version_in_the_document(reference_model):
    blob = model_to_bytes(reference_model)
    document = _document(blob)
    document["version"] = 3
    _fails(_repack(blob, document), "<blob>", "format version 3", "up to 2")


def test_flipped_byte_in_the_document(reference_model):
    blob = bytearray(model_to_bytes(reference_model))
    blob[HEADER.size + 20] ^= 0x01
    _fails(bytes(blob), "document is corrupted", "sha256")


def test_flipped_byte_in_the_weights_names_the_absolute_offset(reference_model):
    blob = model_to_bytes(reference_model)
    _, _, _, _, weights_at, _, _ = HEADER.unpack_from(blob)
    record = next(n for n in _document(blob)["nodes"] if n["name"] == "b")["attrs"]["value"]
    damaged = bytearray(blob)
    damaged[weights_at + record["offset"] + 3] ^= 0x80
    start = weights_at + record["offset"]
    _fails(bytes(damaged), f"byte offset {start}..{start + 16}", "Constant 'b'", "crc32")


def test_unknown_op_in_a_well_framed_blob(reference_model):
    blob = model_to_bytes(reference_model)
    document = _document(blob)
    document["nodes"][5]["type"] = "NotAnOp"
    error = _fails(_repack(blob, document), "<blob>", "nodes[5]", "unknown op type 'NotAnOp'")
    assert isinstance(error, UnsupportedOperationError)


def test_a_blob_frame_reports_its_defects_as_the_blobs(reference_model):
    blob = model_to_bytes(reference_model)
    with pytest.raises(BlobFormatError, match=r"^TEMPLATE blob frame 'model' is malformed: .*truncated") as info:
        model_from_frame(blob[:-1], "TEMPLATE blob")
    assert not isinstance(info.value, ModelFormatError)
    loaded = model_from_frame(blob, "TEMPLATE blob")
    assert [n.type_name for n in loaded.get_ordered_ops()] == [n.type_name for n in reference_model.get_ordered_ops()]


def test_a_blob_frame_with_an_unknown_op_is_not_called_malformed(reference_model):
    blob = model_to_bytes(reference_model)
    document = _document(blob)
    document["nodes"][5]["type"] = "NotAnOp"
    with pytest.raises(UnknownOpTypeError, match="unknown op type 'NotAnOp'") as info:
        model_from_frame(_repack(blob, document), "HETERO blob")
    assert not isinstance(info.value, BlobFormatError)
