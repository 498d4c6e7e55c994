"""String tensors in the model format and exported blobs: UTF-8 behind u64 lengths, lossless, checked."""

from __future__ import annotations

import hashlib
import json
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelFormatError
from hetero_sdk.serialization import model_from_bytes, model_to_bytes, read_model, save_model

S = np.dtypes.StringDType()
TEXTS = ["", "plain", "héllo wörld", "日本語", "😀 emoji", "nul\x00inside", ""]


def _model(values: list[str]) -> hs.Model:
    x = opset.parameter([len(values)], hs.Type.string, name="x")
    c = opset.constant(np.array(values, S), name="c")
    same = opset.equal(x, c, name="same")
    return hs.Model([same.output(0), opset.result(c, name="c_out").input_value(0)], [x], "strings")


def test_strings_round_trip_through_a_file(tmp_path: Path) -> None:
    save_model(_model(TEXTS), tmp_path / "m.json")
    back = read_model(tmp_path / "m.json")
    value = next(n for n in back.get_ops() if n.friendly_name == "c").attrs["value"]
    assert value.dtype == S and value.tolist() == TEXTS
    out = hs.Core().compile_model(back, "TEMPLATE")({"x": np.array([*TEXTS[:-1], "x"], object)})
    assert out[0].tolist() == [True] * 6 + [False]
    assert out[1].tolist() == TEXTS


def test_the_weights_hold_lengths_then_utf8_bytes(tmp_path: Path) -> None:
    save_model(_model(["", "é", "ab"]), tmp_path / "m.json")
    document = json.loads((tmp_path / "m.json").read_text("utf-8"))
    record = next(n for n in document["nodes"] if n["name"] == "c")["attrs"]["value"]
    assert record["$tensor"] == "string" and record["shape"] == [3]
    raw = (tmp_path / "m.bin").read_bytes()[record["offset"] : record["offset"] + record["size"]]
    assert raw == struct.pack("<3Q", 0, 2, 2) + "é".encode() + b"ab"


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.text(st.characters(exclude_categories=["Cs"]), max_size=8), min_size=1, max_size=6))
def test_any_text_round_trips_through_bytes(values: list[str]) -> None:
    back = model_from_bytes(model_to_bytes(_model(values)))
    value = next(n for n in back.get_ops() if n.friendly_name == "c").attrs["value"]
    assert value.tolist() == values


def test_strings_round_trip_through_an_exported_blob() -> None:
    core = hs.Core()
    compiled = core.compile_model(_model(TEXTS), "TEMPLATE")
    again = core.import_model(compiled.export_model(), "TEMPLATE")
    assert again({"x": TEXTS})[1].tolist() == TEXTS


def test_truncated_weights_name_the_offset(tmp_path: Path) -> None:
    save_model(_model(TEXTS), tmp_path / "m.json")
    weights = (tmp_path / "m.bin").read_bytes()
    (tmp_path / "m.bin").write_bytes(weights[:-3])
    with pytest.raises(ModelFormatError, match=f"truncated at byte offset {len(weights) - 3}"):
        read_model(tmp_path / "m.json")


def _rewrite(tmp_path: Path, change) -> None:
    """Edits the string record's bytes and makes the file consistent again (sizes, crc32, sha256)."""
    document = json.loads((tmp_path / "m.json").read_text("utf-8"))
    record = next(n for n in document["nodes"] if n["name"] == "c")["attrs"]["value"]
    weights = bytearray((tmp_path / "m.bin").read_bytes())
    start, end = record["offset"], record["offset"] + record["size"]
    new = change(bytes(weights[start:end]))
    weights[start:end] = new
    record["size"], record["crc32"] = len(new), zlib.crc32(new)
    document["weights"].update(size=len(weights), sha256=hashlib.sha256(weights).hexdigest())
    (tmp_path / "m.json").write_text(json.dumps(document), "utf-8")
    (tmp_path / "m.bin").write_bytes(bytes(weights))


def test_a_string_record_cut_short_names_its_byte_offsets(tmp_path: Path) -> None:
    save_model(_model(["ab", "cd"]), tmp_path / "m.json")
    _rewrite(tmp_path, lambda raw: raw[:-1])
    with pytest.raises(ModelFormatError, match=r"byte offset \d+\.\.\d+ .*lengths add up to 4 bytes.*holds 3"):
        read_model(tmp_path / "m.json")


def test_a_length_table_cut_short_names_its_end(tmp_path: Path) -> None:
    save_model(_model(["ab", "cd"]), tmp_path / "m.json")
    _rewrite(tmp_path, lambda raw: raw[:10])
    with pytest.raises(ModelFormatError, match=r"byte offset \d+ .*2 string lengths need 16 bytes"):
        read_model(tmp_path / "m.json")


def test_bytes_that_are_not_utf8_are_refused_with_their_offset(tmp_path: Path) -> None:
    save_model(_model(["ab"]), tmp_path / "m.json")
    _rewrite(tmp_path, lambda raw: raw[:8] + b"\xff\xfe")
    with pytest.raises(ModelFormatError, match=r"byte offset \d+ .*string 0 is not UTF-8"):
        read_model(tmp_path / "m.json")


@pytest.mark.parametrize("shape", [(), (0,), (2, 0), (1, 2)])
def test_string_arrays_of_any_shape_round_trip(shape: tuple[int, ...]) -> None:
    count = int(np.prod(shape))
    value = np.array(["ä" * i for i in range(count)], S).reshape(shape)
    x = opset.parameter(list(shape), hs.Type.string, name="x")
    c = opset.constant(value, name="c")
    back = model_from_bytes(model_to_bytes(hs.Model([opset.string_concat(x, c)], [x])))
    stored = next(n for n in back.get_ops() if n.friendly_name == "c").attrs["value"]
    assert stored.dtype == S and stored.shape == shape and stored.tolist() == value.tolist()
