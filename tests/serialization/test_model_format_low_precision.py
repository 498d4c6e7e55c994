"""Claims: the 8-, 4- and 2-bit element types go through the model format (files and blobs) bit for bit,
and a 4- or 2-bit element with bits set above its own is refused."""

from __future__ import annotations

import hashlib
import json
import zlib
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelFormatError
from hetero_sdk.serialization import model_from_bytes, model_to_bytes, read_model, save_model

T = hs.Type
EIGHT_BIT = [T.f8e4m3, T.f8e5m2, T.f8e4m3fnuz, T.f8e5m2fnuz, T.f8e8m0]
SUB_BYTE = {T.f4e2m1: 4, T.i4: 4, T.u4: 4, T.i2: 2, T.u2: 2}


def every_code(element_type: hs.Type) -> np.ndarray:
    """Each bit pattern of the type, an element a byte in the low bits (as ml_dtypes keeps them)."""
    bits = SUB_BYTE.get(element_type, 8)
    return np.arange(1 << bits, dtype=np.uint8).view(element_type.numpy)


def _model(element_type: hs.Type) -> hs.Model:
    x = opset.parameter([-1], element_type, name="x")
    c = opset.constant(every_code(element_type), name="c")
    return hs.Model([opset.convert(c, T.f32, name="c32"), opset.convert(x, T.f32, name="x32")], [x])


@pytest.mark.parametrize("element_type", EIGHT_BIT + list(SUB_BYTE))
def test_every_code_round_trips_through_a_file_and_a_blob(tmp_path: Path, element_type: hs.Type, same_model) -> None:
    model = _model(element_type)
    save_model(model, tmp_path / "m.json")
    for back in (read_model(tmp_path / "m.json"), model_from_bytes(model_to_bytes(model))):
        same_model(model, back)
        (constant,) = [n for n in back.get_ops() if n.friendly_name == "c"]
        value = constant.attrs["value"]
        assert value.dtype == element_type.numpy
        assert value.view(np.uint8).tolist() == list(range(1 << SUB_BYTE.get(element_type, 8)))
        assert back.get_parameters()[0].get_output_element_type(0) is element_type
    document = json.loads((tmp_path / "m.json").read_text("utf-8"))
    assert document["nodes"][0]["outputs"][0]["element_type"] == element_type.value


def test_the_round_trip_computes_the_values_ml_dtypes_gives() -> None:
    back = model_from_bytes(model_to_bytes(_model(T.i4)))
    x = np.array([-8, 7, -1], ml_dtypes.int4)
    out = hs.Core().compile_model(back, "TEMPLATE")({"x": x})
    np.testing.assert_array_equal(out["c32"], np.arange(16, dtype=np.uint8).view(ml_dtypes.int4).astype(np.float32))
    np.testing.assert_array_equal(out["x32"], [-8.0, 7.0, -1.0])


@pytest.mark.parametrize(("element_type", "bits"), SUB_BYTE.items())
def test_a_sub_byte_element_with_high_bits_set_is_refused(tmp_path: Path, element_type: hs.Type, bits: int) -> None:
    save_model(_model(element_type), tmp_path / "m.json")
    weights = bytearray((tmp_path / "m.bin").read_bytes())
    weights[1] |= 1 << bits  # the second element, one bit above its own
    (tmp_path / "m.bin").write_bytes(bytes(weights))
    document = json.loads((tmp_path / "m.json").read_text("utf-8"))
    record = next(n for n in document["nodes"] if n["name"] == "c")["attrs"]["value"]
    record["crc32"] = zlib.crc32(weights[record["offset"] : record["offset"] + record["size"]])
    document["weights"]["sha256"] = hashlib.sha256(weights).hexdigest()  # a consistent, hand-made file
    (tmp_path / "m.json").write_text(json.dumps(document), "utf-8")
    with pytest.raises(ModelFormatError, match=f"bits set above its low {bits}") as info:
        read_model(tmp_path / "m.json")
    assert "Constant 'c'" in str(info.value)
