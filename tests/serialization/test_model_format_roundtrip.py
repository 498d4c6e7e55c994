"""Claims: save_model then read_model (and model_to_bytes then model_from_bytes) gives back the same model."""

from __future__ import annotations

import json
import math
import struct
import zlib

import ml_dtypes
import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelFormatError
from hetero_sdk.graph.node import Node
from hetero_sdk.reference import evaluate
from hetero_sdk.serialization import model_from_bytes, model_to_bytes, read_model, save_model

BF16 = np.dtype(ml_dtypes.bfloat16)


def _mixed_model() -> hs.Model:
    """Dynamic dims, constants of many element types, Convert, elementwise and activation ops."""
    x = opset.parameter([-1, 3], hs.Type.f32, name="x")
    flags = opset.parameter([-1, 3], hs.Type.boolean, name="flags")
    w_bf16 = opset.constant(np.array([1.5, -0.0078125, 3e38], BF16), name="w_bf16")
    w_f16 = opset.constant(np.array([0.5, -2.0, 65504.0], np.float16), name="w_f16")
    w_i8 = opset.constant(np.array([-128, 0, 127], np.int8), name="w_i8")
    mask = opset.constant(np.array([True, False, True]), name="mask")
    offset = opset.constant(np.array(2.0, np.float64), name="offset")
    bf16_path = opset.convert(opset.multiply(opset.convert(x, hs.Type.bf16, name="to_bf16"), w_bf16), "f32")
    f16_path = opset.convert(opset.add(opset.convert(x, "f16", name="to_f16"), w_f16, name="f16_add"), "f32")
    i8_path = opset.convert(w_i8, hs.Type.f32, name="i8_as_f32")
    summed = opset.add(opset.add(bf16_path, f16_path, name="sum1"), i8_path, name="sum2")
    chosen = opset.select(opset.logical_and(flags, mask, name="both"), summed, opset.negative(summed), name="chosen")
    wide = opset.add(opset.convert(chosen, hs.Type.f64, name="widen"), offset, name="wide")
    out = opset.sigmoid(wide, name="out")
    out.output(0).set_names({"probabilities", "out"})
    chosen.get_rt_info()["affinity"] = "XLA"
    out.get_rt_info().update({"affinity": "TEMPLATE", "note": {"layers": [1, 2.5, None, True], "tag": "é"}})
    model = hs.Model([out, opset.relu(summed, name="relu_out")], [x, flags], name="mixed")
    model.get_rt_info().update({"framework": "hand", "version": [1, 0]})
    return model


@np.errstate(over="ignore")
def _expected_mixed(x: np.ndarray, flags: np.ndarray) -> list[np.ndarray]:
    bf16 = (x.astype(BF16) * np.array([1.5, -0.0078125, 3e38], BF16)).astype(np.float32)
    f16 = (x.astype(np.float16) + np.array([0.5, -2.0, 65504.0], np.float16)).astype(np.float32)
    summed = bf16 + f16 + np.array([-128, 0, 127], np.float32)
    chosen = np.where(flags & np.array([True, False, True]), summed, -summed)
    wide = chosen.astype(np.float64) + 2.0
    return [1.0 / (1.0 + np.exp(-wide)), np.maximum(summed, 0)]


def test_file_round_trip_keeps_everything_and_computes_the_same(tmp_path, same_model):
    model = _mixed_model()
    save_model(model, tmp_path / "model.json")
    loaded = read_model(tmp_path / "model.json")
    same_model(model, loaded)
    assert loaded.is_dynamic() and loaded.inputs[0].partial_shape == [-1, 3]
    assert loaded.outputs[0].names == {"probabilities", "out"}
    by_name = {n.friendly_name: n for n in loaded.get_ops()}
    assert by_name["chosen"].get_rt_info() == {"affinity": "XLA"}
    assert by_name["out"].get_rt_info()["note"] == {"layers": [1, 2.5, None, True], "tag": "é"}
    x = np.array([[0.1, -3.0, 7.0], [2.0, 0.0, -0.5]], np.float32)
    flags = np.array([[True, True, False], [False, True, True]])
    got = evaluate(loaded, {"x": x, "flags": flags})
    for value, expected in zip(got, _expected_mixed(x, flags)):
        np.testing.assert_allclose(value, expected, rtol=1e-6)


def test_bytes_round_trip_keeps_everything(same_model, bit_equal):
    model = _mixed_model()
    loaded = model_from_bytes(model_to_bytes(model))
    same_model(model, loaded)
    x = np.array([[1.0, 2.0, 3.0]], np.float32)
    flags = np.array([[True, False, True]])
    assert all(bit_equal(a, b) for a, b in zip(evaluate(model, [x, flags]), evaluate(loaded, [x, flags])))


def test_document_is_readable_and_weights_are_aligned_with_checksums(tmp_path):
    model = _mixed_model()
    save_model(model, tmp_path / "m.json")
    document = json.loads((tmp_path / "m.json").read_text("utf-8"))
    weights = (tmp_path / "m.bin").read_bytes()
    assert (document["format"], document["version"], document["name"]) == ("hetero-sdk-model", 1, "mixed")
    assert [n["name"] for n in document["nodes"]] == [n.friendly_name for n in model.get_ops()]
    assert document["parameters"] == ["x", "flags"]
    by_name = {n["name"]: n for n in document["nodes"]}
    assert by_name["x"]["attrs"]["shape"] == {"$shape": [-1, 3]}
    assert by_name["sum2"]["inputs"] == [["sum1", 0], ["i8_as_f32", 0]]
    assert by_name["out"]["outputs"][0]["names"] == ["out", "probabilities"]
    assert by_name["sum1"]["outputs"][0] == {"element_type": "f32", "shape": [-1, 3], "names": None}
    originals = {
        "w_bf16": np.array([1.5, -0.0078125, 3e38], BF16),
        "w_f16": np.array([0.5, -2.0, 65504.0], np.float16),
        "w_i8": np.array([-128, 0, 127], np.int8),
        "mask": np.array([True, False, True]),
        "offset": np.array(2.0, np.float64),
    }
    names = {"w_bf16": "bf16", "w_f16": "f16", "w_i8": "i8", "mask": "boolean", "offset": "f64"}
    for name, array in originals.items():
        record = by_name[name]["attrs"]["value"]
        assert record["$tensor"] == names[name] and record["shape"] == list(array.shape)
        assert record["offset"] % 64 == 0 and record["size"] == array.nbytes
        stored = weights[record["offset"] : record["offset"] + record["size"]]
        assert stored == array.astype(array.dtype.newbyteorder("<")).tobytes()
        assert record["crc32"] == zlib.crc32(stored)
    assert document["weights"]["size"] == len(weights)


def test_every_attribute_kind_round_trips_exactly(tmp_path, same_model, bit_equal, relu_taking):
    nan_with_payload = struct.unpack("<d", struct.pack("<Q", 0x7FF8_0000_0000_BEEF))[0]
    attrs = {
        "nan": math.nan,
        "payload_nan": nan_with_payload,
        "negative_nan": -math.nan,
        "inf": math.inf,
        "minus_inf": -math.inf,
        "minus_zero": -0.0,
        "tiny": 5e-324,
        "big_int": 2**80,
        "flag": False,
        "nothing": None,
        "text": 'ünïcode "quoted" \n line',
        "nested": [1, (2.5, [None, "a"], ()), [], [math.inf, (math.nan,)]],
        "pair": (3, -1),
        "element": hs.Type.bf16,
        "types": [hs.Type.boolean, hs.Type.i64],
        "shape": hs.PartialShape([-1, 0, 7]),
        "scalar_shape": hs.PartialShape([]),
        "f16_scalar": np.float16(-1.5),
        "bf16_scalar": BF16.type(0.1),
        "i64_scalar": np.int64(-(2**62)),
        "bool_scalar": np.bool_(True),
        "u16_array": np.arange(6, dtype=np.uint16).reshape(2, 3),
        "bf16_array": np.array([[np.nan, -np.inf], [1e-40, 7.0]], BF16),
        "empty": np.zeros((0, 4), np.float32),
        "zero_d": np.array(-7, np.int32),
        "fortran": np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4)),
    }
    relu_taking(*attrs)
    x = opset.parameter([2], hs.Type.f32, name="x")
    odd = Node("Relu", [x.output(0)], attrs, name="odd")
    clamp = opset.clamp(odd, -math.inf, math.inf, name="unbounded")
    model = hs.Model([clamp], [x], name="attrs")
    save_model(model, tmp_path / "attrs.json")
    loaded = read_model(tmp_path / "attrs.json")
    same_model(model, loaded)
    loaded_attrs = loaded.get_ops()[1].attrs
    assert math.copysign(1.0, loaded_attrs["negative_nan"]) == -1.0
    assert isinstance(loaded_attrs["nested"][1], tuple) and isinstance(loaded_attrs["nested"][1][1], list)
    assert not loaded_attrs["u16_array"].flags.writeable
    np.testing.assert_array_equal(loaded_attrs["fortran"], np.arange(12.0).reshape(3, 4))
    data = np.array([-np.inf, 5.0], np.float32)
    assert bit_equal(evaluate(loaded, [data])[0], np.array([0.0, 5.0], np.float32))
    assert loaded.get_ops()[2].attrs == {"min": -math.inf, "max": math.inf}


def test_names_with_any_unicode_round_trip_in_a_utf8_file(tmp_path, same_model):
    x = opset.parameter([1], hs.Type.f32, name='entrée \ud800 "x"')
    model = hs.Model([opset.relu(x, name="名前")], [x], name="lone surrogate \udfff")
    model.get_rt_info()["\ud83d"] = "\x00 control"
    save_model(model, tmp_path / "u.json")
    (tmp_path / "u.json").read_bytes().decode("utf-8")
    same_model(model, read_model(tmp_path / "u.json"))
    same_model(model, model_from_bytes(model_to_bytes(model)))


def test_model_without_weights_needs_no_bin_file(tmp_path, same_model):
    x = opset.parameter([-1], hs.Type.i32, name="x")
    model = hs.Model([opset.abs(x, name="a")], [x], name="no_weights")
    save_model(model, tmp_path / "nw.json")
    assert (tmp_path / "nw.bin").read_bytes() == b""
    (tmp_path / "nw.bin").unlink()
    same_model(model, read_model(tmp_path / "nw.json"))


def test_one_array_object_used_twice_is_stored_once(tmp_path):
    shared = np.arange(16, dtype=np.float32)
    shared.setflags(write=False)
    x = opset.parameter([16], hs.Type.f32, name="x")
    first = Node("Constant", [], {"value": shared}, name="c1")
    second = Node("Constant", [], {"value": shared}, name="c2")
    model = hs.Model([opset.add(opset.add(x, first), second)], [x], name="shared")
    save_model(model, tmp_path / "s.json")
    assert (tmp_path / "s.bin").stat().st_size == shared.nbytes
    loaded = read_model(tmp_path / "s.json")
    np.testing.assert_array_equal(evaluate(loaded, [np.ones(16, np.float32)])[0], 1 + 2 * shared)


def test_saving_again_replaces_both_files(tmp_path, reference_model, same_model):
    path = tmp_path / "nested" / "dir" / "model.json"
    save_model(_mixed_model(), path)
    save_model(reference_model, path)
    same_model(reference_model, read_model(path))
    assert sorted(p.name for p in path.parent.iterdir()) == ["model.bin", "model.json"]


def test_weights_path_can_be_given(tmp_path, reference_model, same_model):
    save_model(reference_model, tmp_path / "a.json")
    (tmp_path / "a.bin").rename(tmp_path / "elsewhere.weights")
    same_model(reference_model, read_model(tmp_path / "a.json", weights=tmp_path / "elsewhere.weights"))


@pytest.mark.parametrize(
    ("where", "value", "mentions"),
    [
        ("node", {1, 2}, "set"),
        ("node", ("a", "b"), "tuple"),
        ("node", math.nan, "nan"),
        ("node", {3: "x"}, "key 3"),
        ("node", object(), "object"),
        ("model", [np.float32(1.0)], "float32"),
        ("model", {"deep": {"er": math.inf}}, "inf"),
    ],
)
def test_rt_info_that_is_not_plain_json_is_refused_at_save(tmp_path, reference_model, where, value, mentions):
    if where == "node":
        reference_model.get_ops()[2].get_rt_info()["bad"] = value
    else:
        reference_model.get_rt_info()["bad"] = value
    with pytest.raises(ModelFormatError) as info:
        save_model(reference_model, tmp_path / "r.json")
    message = str(info.value)
    assert "r.json" in message and "bad" in message and mentions in message
    if where == "node":
        assert "'scaled'" in message
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize(
    ("value", "mentions"),
    [
        ({"a": 1}, "dict"),
        ({1, 2}, "set"),
        (np.array(["text"]), "<U4"),
        ([1, object()], "object"),
        (1j, "complex"),
        (np.ma.masked_array([1.0]), "MaskedArray"),
    ],
)
def test_attribute_values_the_format_cannot_hold_are_refused_at_save(value, mentions, relu_taking):
    relu_taking("odd")
    x = opset.parameter([1], hs.Type.f32, name="x")
    model = hs.Model([Node("Relu", [x.output(0)], {"odd": value}, name="r")], [x], name="m")
    with pytest.raises(ModelFormatError) as info:
        model_to_bytes(model)
    message = str(info.value)
    assert "Relu 'r' attribute 'odd'" in message and mentions in message


def test_a_graph_file_named_like_the_weights_is_refused(tmp_path, reference_model):
    with pytest.raises(ModelFormatError, match=r"model\.bin.*\.bin"):
        save_model(reference_model, tmp_path / "model.bin")
