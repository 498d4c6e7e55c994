"""Strings across devices: XLA declines every node with a string input or output, HETERO:XLA,TEMPLATE
runs the numbers on XLA and the strings on TEMPLATE; the ONNX exporter writes the string ops back."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.frontend.onnx_export import export_model

hetero_sdk_jax = pytest.importorskip("hetero_sdk_jax", reason="the XLA plugin (plugins/jax) is not installed")

S = np.dtypes.StringDType()


def _mixed() -> hs.Model:
    """``labels`` (strings) -> LabelEncoder -> i64 -> f32 * scale + bias (numbers) -> Convert to text -> concat."""
    labels = opset.parameter([4], hs.Type.string, name="labels")
    scale = opset.parameter([4], hs.Type.f32, name="scale")
    ids = opset.label_encoder(labels, np.array(["cat", "dog", "émeu"], S), np.array([1, 2, 3]), 0, name="ids")
    scaled = opset.multiply(opset.convert(ids, hs.Type.f32, name="as_f32"), scale, name="scaled")
    shifted = opset.add(scaled, opset.constant(np.float32(0.5)), name="shifted")
    text = opset.convert(shifted, hs.Type.string, name="as_text")
    tagged = opset.string_concat(opset.constant(np.array("id=", S)), text, name="tagged")
    return hs.Model([shifted.output(0), tagged.output(0)], [labels, scale], "mixed")


FEEDS = {"labels": np.array(["dog", "cat", "?", "émeu"], object), "scale": np.array([2, 3, 4, 5], np.float32)}
EXPECTED_NUMBERS = np.array([4.5, 3.5, 0.5, 15.5], np.float32)  # (2, 1, 0, 3) * scale + 0.5
EXPECTED_TEXT = ["id=4.5", "id=3.5", "id=0.5", "id=15.5"]


def test_xla_declines_every_node_with_a_string_port() -> None:
    core = hs.Core()
    answer = core.query_model(_mixed(), "XLA")
    assert {"scaled", "shifted"} <= set(answer)
    assert not {"ids", "as_text", "tagged"} & set(answer)
    with pytest.raises(UnsupportedOperationError, match="string"):
        core.compile_model(_mixed(), "XLA")


def test_hetero_runs_numbers_on_xla_and_strings_on_template() -> None:
    core = hs.Core()
    answer = core.query_model(_mixed(), "HETERO:XLA,TEMPLATE")
    assert answer["scaled"] == "XLA" and answer["shifted"] == "XLA"
    assert answer["ids"] == "TEMPLATE" and answer["tagged"] == "TEMPLATE" and answer["as_text"] == "TEMPLATE"
    compiled = core.compile_model(_mixed(), "HETERO:XLA,TEMPLATE")
    assert compiled.get_property("HETERO_NUMBER_OF_SUBMODELS") >= 2
    out = compiled(FEEDS)
    np.testing.assert_array_equal(out[0], EXPECTED_NUMBERS)
    assert out[1].dtype == S and out[1].tolist() == EXPECTED_TEXT
    again = core.import_model(compiled.export_model(), "HETERO")
    assert again(FEEDS)[1].tolist() == EXPECTED_TEXT


def test_exported_onnx_computes_what_onnx_reference_computes() -> None:
    x = opset.parameter([3], hs.Type.string, name="x")
    parts = opset.string_split(opset.string_normalizer(x, "LOWER"), " ", name="split")
    matched = opset.regex_full_match(opset.string_concat(x, x), "(ab)+|", name="matched")
    model = hs.Model([parts.output(0), parts.output(1), matched.output(0)], [x])
    proto = export_model(model)
    onnx.checker.check_model(proto)
    feeds = {"x": np.array(["AB c", "d", "ab"], object)}  # ASCII, no "": onnx.reference drops "" and accents
    expected = ReferenceEvaluator(proto).run(None, feeds)
    assert [e.tolist() for e in expected] == [[["ab", "c"], ["d", ""], ["ab", ""]], [2, 1, 1], [False, False, True]]
    got = hs.Core().compile_model(hs.convert_model(proto), "TEMPLATE")(feeds)
    assert [np.asarray(got[i]).tolist() for i in range(3)] == [e.tolist() for e in expected]


def test_label_encoder_exports_to_ai_onnx_ml() -> None:
    x = opset.parameter([2], hs.Type.string, name="x")
    model = hs.Model([opset.label_encoder(x, np.array(["a"], S), np.array([7]), -1)], [x])
    proto = export_model(model)
    assert {(i.domain, i.version) for i in proto.opset_import} >= {("ai.onnx.ml", 4)}
    assert ReferenceEvaluator(proto).run(None, {"x": np.array(["a", "b"], object)})[0].tolist() == [7, -1]


@pytest.mark.parametrize(
    ("keys", "values", "default", "x", "expected"),
    [
        ([3, -1, 7], [0.5, 1.5, 2.5], -0.0, [7, 3, 4, -1], [2.5, 0.5, -0.0, 1.5]),
        ([np.nan, 2.0], [10, 20], -1, [2.0, np.nan, 0.0], [20, 10, -1]),
        ([], [], 9, [1, 2], [9, 9]),
    ],
)
def test_xla_lowers_label_encoder_on_numbers(
    keys: list, values: list, default: object, x: list, expected: list
) -> None:
    key_dtype = np.float32 if any(isinstance(k, float) for k in keys) else np.int32
    value_dtype = np.float32 if isinstance(default, float) else np.int32
    inputs = opset.parameter([len(x)], hs.Type.of(key_dtype), name="x")
    node = opset.label_encoder(inputs, np.array(keys, key_dtype), np.array(values, value_dtype), default, name="enc")
    model = hs.Model([node], [inputs])
    assert hs.Core().query_model(model, "XLA").get("enc") == "XLA"
    got = hs.Core().compile_model(model, "XLA")({"x": np.array(x, key_dtype)})[0]
    np.testing.assert_array_equal(got, np.array(expected, value_dtype))


def test_convert_to_and_from_strings_exports_as_cast() -> None:
    x = opset.parameter([3], hs.Type.string, name="x")
    as_f32 = opset.convert(x, hs.Type.f32, name="f")
    as_i32 = opset.convert(x, hs.Type.i32, name="i")
    back = opset.convert(opset.convert(as_f32, hs.Type.i64), hs.Type.string, name="s")
    model = hs.Model([as_f32, as_i32, back], [x])
    feeds = {"x": np.array(["1.5e1", "-2", "300"], object)}
    expected = [[15.0, -2.0, 300.0], [15, -2, 300], ["15", "-2", "300"]]
    feeds_i = {"x": np.array(["15", "-2", "300"], object)}  # onnx.reference reads integers only as integers
    oracle = ReferenceEvaluator(export_model(model)).run(None, feeds_i)
    assert [o.tolist() for o in oracle] == expected
    got = hs.Core().compile_model(model, "TEMPLATE")(feeds)
    assert [got[i].tolist() for i in range(3)] == expected
