"""IR files read and written here: round trips keep names, shapes, types and rt_info; malformed files
raise ModelFormatError naming the element, attribute or byte offset; ops without an IR form are refused."""

from __future__ import annotations

import contextlib
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelFormatError, UnknownOpTypeError, UnsupportedOperationError
from hetero_sdk.reference import evaluate

GOOD = """<?xml version="1.0"?>
<net name="tiny" version="11">
  <layers>
    <layer id="0" name="x" type="Parameter" version="opset1">
      <data shape="?,3" element_type="f32"/>
      <rt_info><attribute name="layout" version="0" layout="[N,C]"/></rt_info>
      <output><port id="0" precision="FP32" names="x,input\\,0"><dim>-1</dim><dim>3</dim></port></output>
    </layer>
    <layer id="1" name="w" type="Const" version="opset1">
      <data element_type="f32" shape="3" offset="0" size="12"/>
      <output><port id="0" precision="FP32"><dim>3</dim></port></output>
    </layer>
    <layer id="2" name="sum" type="Add" version="opset1">
      <data auto_broadcast="numpy"/>
      <input><port id="0"><dim>-1</dim><dim>3</dim></port><port id="1"><dim>3</dim></port></input>
      <output><port id="2" precision="FP32" names="y"><dim>-1</dim><dim>3</dim></port></output>
    </layer>
    <layer id="3" name="out" type="Result" version="opset1">
      <input><port id="0"><dim>-1</dim><dim>3</dim></port></input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
    <edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
    <edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
  </edges>
  <rt_info><framework><name value="test"/></framework></rt_info>
</net>
"""
WEIGHTS = np.array([1.0, 2.0, -3.0], np.float32)


def write(folder: Path, xml: str, weights: bytes = WEIGHTS.tobytes()) -> Path:
    path = folder / "model.xml"
    path.write_text(xml)
    path.with_suffix(".bin").write_bytes(weights)
    return path


def test_a_hand_written_ir_reads_with_names_layout_dynamic_dims_and_rt_info(tmp_path: Path) -> None:
    model = hs.Core().read_model(write(tmp_path, GOOD))
    (x,) = model.get_parameters()
    assert x.friendly_name == "x" and x.output(0).get_names() == {"x", "input,0"}
    assert x.get_output_partial_shape(0) == [-1, 3]
    assert x.get_rt_info()["layout"] == "[N,C]"
    assert model.get_rt_info()["framework"] == {"name": "test"}
    assert model.outputs[0].get_names() == {"y"}
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    (out,) = evaluate(model, [data])
    np.testing.assert_array_equal(out, data + WEIGHTS)


@pytest.mark.parametrize("version", ["10", "11"])
def test_ir_v10_and_v11_read_and_a_path_without_suffix_is_told_by_its_content(version: str, tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace('version="11"', f'version="{version}"', 1))
    bare = tmp_path / "model"
    bare.write_bytes(path.read_bytes())
    model = hs.Core().read_model(bare, weights=path.with_suffix(".bin"))
    (out,) = evaluate(model, [np.ones((1, 3), np.float32)])
    np.testing.assert_array_equal(out, [1 + WEIGHTS])


def test_a_layer_with_a_sub_graph_is_refused_naming_it(tmp_path: Path) -> None:
    xml = GOOD.replace('<data auto_broadcast="numpy"/>', '<data auto_broadcast="numpy"/><body><layers/></body>', 1)
    with pytest.raises(UnknownOpTypeError, match=r"layer 2 \('sum', Add opset1\).*sub-graphs"):
        hs.Core().read_model(write(tmp_path, xml))


def test_weights_are_read_only_views_of_the_mapped_bin(tmp_path: Path) -> None:
    model = hs.Core().read_model(write(tmp_path, GOOD))
    const = next(n for n in model.get_ops() if n.type_name == "Constant")
    value = const.attrs["value"]
    assert not value.flags.writeable and not value.flags.owndata


def test_weights_passed_explicitly_are_used(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    other = tmp_path / "elsewhere.bin"
    other.write_bytes(np.array([5.0, 5.0, 5.0], np.float32).tobytes())
    path.with_suffix(".bin").unlink()
    model = hs.read_model(path, weights=other) if hasattr(hs, "read_model") else hs.Core().read_model(path, other)
    (out,) = evaluate(model, [np.zeros((1, 3), np.float32)])
    np.testing.assert_array_equal(out, [[5.0, 5.0, 5.0]])


def _roundtrip(model: hs.Model, folder: Path) -> hs.Model:
    path = folder / "rt.xml"
    hs.save_model(model, path)
    return hs.Core().read_model(path)


def test_read_save_read_keeps_names_shapes_types_and_rt_info(tmp_path: Path) -> None:
    first = hs.Core().read_model(write(tmp_path, GOOD))
    second = _roundtrip(first, tmp_path)
    for a, b in zip(first.get_ordered_ops(), second.get_ordered_ops(), strict=True):
        assert (a.friendly_name, a.type_name) == (b.friendly_name, b.type_name)
        assert a.get_rt_info() == b.get_rt_info()
        for pa, pb in zip(a.outputs(), b.outputs(), strict=True):
            assert (pa.element_type, pa.partial_shape, pa.get_names()) == (
                pb.element_type,
                pb.partial_shape,
                pb.get_names(),
            )
    assert second.get_rt_info() == first.get_rt_info()


@settings(max_examples=15, deadline=None)
@given(
    dtype=st.sampled_from([np.float32, np.float16, ml_dtypes.bfloat16, np.int8, np.uint8, np.int64, bool,
                           ml_dtypes.int4, ml_dtypes.uint4]),
    shape=st.lists(st.integers(0, 5), max_size=3),
    seed=st.integers(0, 2**32 - 1),
)  # fmt: skip
def test_constants_of_every_weight_type_round_trip_exactly(dtype: type, shape: list[int], seed: int) -> None:
    import tempfile

    rng = np.random.default_rng(seed)
    info = ml_dtypes.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    raw = rng.integers(int(info.min), int(info.max) + 1, size=shape) if info is not None else rng.standard_normal(shape)
    value = (raw > 0 if dtype is bool else raw).astype(dtype)
    model = hs.Model([opset.result(opset.constant(value, name="c"), name="r")], [], "consts")
    with tempfile.TemporaryDirectory() as folder:
        back = _roundtrip(model, Path(folder))
        stored = next(n for n in back.get_ops() if n.type_name == "Constant").attrs["value"]
        assert stored.dtype == value.dtype and stored.shape == value.shape
        np.testing.assert_array_equal(stored.astype(np.float64), value.astype(np.float64))


def test_inputs_and_outputs_keep_their_order_whatever_the_graph_order(tmp_path: Path) -> None:
    a = opset.parameter([2], np.float32, name="a")
    b = opset.parameter([2], np.float32, name="b")
    late = opset.relu(opset.add(a, b), name="late")
    early = opset.negative(a, name="early")
    model = hs.Model([opset.result(late, name="r_late"), opset.result(early, name="r_early")], [b, a])
    back = _roundtrip(model, tmp_path)
    assert [p.friendly_name for p in back.get_parameters()] == ["b", "a"]
    assert [r.friendly_name for r in back.get_results()] == ["r_late", "r_early"]
    ov = pytest.importorskip("openvino")
    theirs = ov.Core().read_model(tmp_path / "rt.xml")
    assert [p.get_friendly_name() for p in theirs.get_parameters()] == ["b", "a"]
    assert [r.get_friendly_name() for r in theirs.get_results()] == ["r_late", "r_early"]


def test_saving_an_op_without_an_ir_form_names_the_node(tmp_path: Path) -> None:
    x = opset.parameter([2, 2], np.float32, name="x")
    model = hs.Model([opset.det(x, name="determinant")], [x])
    with pytest.raises(UnsupportedOperationError, match=r"'determinant' \(Det onnx11\)"):
        hs.save_model(model, tmp_path / "m.xml")


# -- malformed files ------------------------------------------------------------------------------------

BAD = {
    "doctype": (GOOD.replace("<net", '<!DOCTYPE net [<!ENTITY big "x">]>\n<net', 1), "DOCTYPE"),
    "external entity": (
        GOOD.replace("<net", '<!DOCTYPE net [<!ENTITY ext SYSTEM "file:///etc/passwd">]>\n<net', 1),
        "DOCTYPE",
    ),
    "not xml": (GOOD[:200], "malformed XML"),
    "processing instruction": (GOOD.replace("<layers>", "<layers><?evil x?>", 1), "processing instruction"),
    "old version": (GOOD.replace('version="11"', 'version="7"', 1), "IR version '7'"),
    "missing type": (GOOD.replace('type="Add" ', "", 1), "layer 2 \\('sum'\\).*has no 'type'"),
    "unknown type": (GOOD.replace('type="Add"', 'type="Frobnicate"', 1), "layer 2 .*Frobnicate"),
    "other version": (GOOD.replace('type="Add" version="opset1"', 'type="Add" version="opset99"', 1), "opset99"),
    "missing port": (GOOD.replace('to-layer="2" to-port="1"', 'to-layer="2" to-port="7"', 1), "input port 7"),
    "missing layer": (GOOD.replace('from-layer="2" from-port="2"', 'from-layer="9" from-port="2"', 1), "layer 9"),
    "bad attribute": (GOOD.replace('auto_broadcast="numpy"', 'auto_broadcast="sideways"', 1), "sum"),
    "unknown attribute": (GOOD.replace('auto_broadcast="numpy"', 'colour="red"', 1), "'colour'"),
    "beyond the bin": (GOOD.replace('offset="0" size="12"', 'offset="8" size="12"', 1), "bytes 8..20 lie beyond"),
    "size mismatch": (GOOD.replace('offset="0" size="12"', 'offset="0" size="8"', 1), "size is 8 bytes"),
    "missing const field": (GOOD.replace(' offset="0"', "", 1), "'offset'"),
    "negative offset": (GOOD.replace('offset="0"', 'offset="-4"', 1), "non-negative"),
    "bad dims": (GOOD.replace("<dim>3</dim></port></output>", "<dim>4</dim></port></output>", 1), "layer 0.*shape"),
    "bad precision": (GOOD.replace('precision="FP32" names="y"', 'precision="I32" names="y"', 1), "precision I32"),
    "cycle": (GOOD.replace('from-layer="0" from-port="0"', 'from-layer="2" from-port="2"', 1), "cycle"),
    "no parameter shape": (GOOD.replace('shape="?,3" ', "", 1), "'shape'"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_files_raise_model_format_error_naming_the_place(case: str, tmp_path: Path) -> None:
    xml, pattern = BAD[case]
    with pytest.raises(ModelFormatError, match=pattern):
        hs.Core().read_model(write(tmp_path, xml))


def test_an_unknown_layer_type_is_an_unknown_op_type_error(tmp_path: Path) -> None:
    with pytest.raises(UnknownOpTypeError, match="Frobnicate"):
        hs.Core().read_model(write(tmp_path, BAD["unknown type"][0]))


def test_a_missing_bin_names_it(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    path.with_suffix(".bin").unlink()
    with pytest.raises(ModelFormatError, match=r"model\.bin"):
        hs.Core().read_model(path)


@settings(max_examples=40, deadline=None)
@given(cut=st.integers(0, len(GOOD)), junk=st.binary(max_size=8))
def test_any_truncated_or_spliced_file_gives_a_model_format_error_or_a_model(cut: int, junk: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.xml"
        path.write_bytes(GOOD.encode()[:cut] + junk + GOOD.encode()[cut:])
        path.with_suffix(".bin").write_bytes(WEIGHTS.tobytes())
        with contextlib.suppress(ModelFormatError):  # a splice may still leave a valid file
            hs.Core().read_model(path)
