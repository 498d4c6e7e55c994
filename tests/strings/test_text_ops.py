"""The string ops on TEMPLATE: values written here, and onnx.reference as an oracle on ONNX models."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper
from onnx.reference import ReferenceEvaluator

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError, UnsupportedOperationError

ort = pytest.importorskip("onnxruntime")
S = np.dtypes.StringDType()


def _run(node: hs.Node, feeds: dict[str, np.ndarray], params: list[hs.Node]) -> list[np.ndarray]:
    model = hs.Model([node.output(i) for i in range(node.get_output_size())], params)
    results = hs.Core().compile_model(model, "TEMPLATE")(feeds)
    return [results[i] for i in range(node.get_output_size())]


def _param(shape: list[int], name: str = "x") -> hs.Node:
    return opset.parameter(shape, hs.Type.string, name=name)


def test_normalizer_removes_stopwords_in_any_case_then_upper_cases() -> None:
    x = _param([1, 4])
    node = opset.string_normalizer(x, "UPPER", False, ["monday"])
    (got,) = _run(node, {"x": np.array([["Monday", "tuesday", "MONDAY", "ünïcode"]])}, [x])
    assert got.dtype == S and got.tolist() == [["TUESDAY", "ÜNÏCODE"]]


def test_normalizer_keeps_one_empty_string_when_every_string_goes() -> None:
    x = _param([2])
    (got,) = _run(opset.string_normalizer(x, "LOWER", True, ["a"]), {"x": np.array(["a", "a"])}, [x])
    assert got.tolist() == [""]


def test_normalizer_keeps_empty_strings_as_onnxruntime_does() -> None:
    """The spec removes stop words only; onnx.reference also drops empty strings, ONNX Runtime keeps them."""
    node = helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action="LOWER", stopwords=["x"], locale="C")
    model = _onnx_model(node, [("y", onnx.TensorProto.STRING, 1)])
    _agree(model, ["AB", "", "x", "Cd"], "onnxruntime")  # ASCII: locale "C" lowers only ASCII


def test_split_pads_to_the_longest_split_and_counts_parts() -> None:
    x = _param([3])
    parts, counts = _run(opset.string_split(x, ",", 1), {"x": np.array(["a,b,c", "", "é"], object)}, [x])
    assert parts.tolist() == [["a", "b,c"], ["", ""], ["é", ""]]
    assert counts.dtype == np.int64 and counts.tolist() == [2, 1, 1]


def test_split_without_delimiter_splits_whitespace_runs() -> None:
    x = _param([2])
    parts, counts = _run(opset.string_split(x), {"x": np.array(["  a  b ", ""])}, [x])
    assert parts.tolist() == [["a", "b"], ["", ""]] and counts.tolist() == [2, 0]


def test_concat_broadcasts() -> None:
    a, b = _param([2, 1], "a"), _param([3], "b")
    (got,) = _run(opset.string_concat(a, b), {"a": np.array([["x"], [""]]), "b": np.array(["1", "", "ß"])}, [a, b])
    assert got.tolist() == [["x1", "x", "xß"], ["1", "", "ß"]]


def test_regex_full_match_is_anchored_and_ascii_for_classes() -> None:
    x = _param([4])
    node = opset.regex_full_match(x, r"\w+@\w+\.com")
    (got,) = _run(node, {"x": np.array(["a@b.com", "a@b.com!", "é@b.com", ""])}, [x])
    assert got.tolist() == [True, False, False, False]  # RE2's \w is ASCII


@pytest.mark.parametrize("pattern", [r"\p{L}+", r"(?=a)a", r"(a)\1", "[[:alpha:]]", r"a\z", "a++", "("])
def test_regex_patterns_re_reads_otherwise_are_refused(pattern: str) -> None:
    with pytest.raises(ModelValidationError, match="pattern"):
        opset.regex_full_match(_param([1]), pattern)


def test_label_encoder_maps_strings_to_ints_with_default() -> None:
    x = _param([4])
    node = opset.label_encoder(x, np.array(["a", "b", ""], S), np.array([1, 2, 3]), -1)
    (got,) = _run(node, {"x": np.array(["b", "z", "", "a"])}, [x])
    assert got.dtype == np.int64 and got.tolist() == [2, -1, 3, 1]


def test_label_encoder_matches_nan_keys() -> None:
    x = opset.parameter([3], hs.Type.f32, name="x")
    node = opset.label_encoder(x, np.array([np.nan, 1.5], np.float32), np.array(["nan", "one"], S), "none")
    (got,) = _run(node, {"x": np.array([1.5, np.nan, 2.0], np.float32)}, [x])
    assert got.tolist() == ["one", "nan", "none"]


def test_convert_between_strings_and_numbers() -> None:
    x = _param([4])
    (got,) = _run(opset.convert(x, hs.Type.f32), {"x": np.array(["1.5", "-INF", "1e3", "NaN"])}, [x])
    np.testing.assert_array_equal(got, np.array([1.5, -np.inf, 1000.0, np.nan], np.float32))
    y = opset.parameter([3], hs.Type.i64, name="y")
    (text,) = _run(opset.convert(y, hs.Type.string), {"y": np.array([-7, 0, 2**62])}, [y])
    assert text.tolist() == ["-7", "0", str(2**62)]


def test_string_inputs_of_another_dtype_get_a_typed_error() -> None:
    x = _param([2])
    compiled = hs.Core().compile_model(hs.Model([opset.string_concat(x, x)], [x]), "TEMPLATE")
    with pytest.raises(hs.errors.InferenceError, match="expects string"):
        compiled({"x": np.array([1, 2])})
    with pytest.raises(hs.errors.InferenceError, match="bytes"):
        compiled({"x": np.array([b"a", b"b"], object)})
    assert compiled({"x": ["a", "b"]})[0].tolist() == ["aa", "bb"]


def test_label_encoder_rejects_keys_of_another_type() -> None:
    with pytest.raises(ModelValidationError, match="keys are i64"):
        opset.label_encoder(_param([1]), np.array([1]), np.array([1]), 0)


# -- onnx.reference as the oracle, through the ONNX frontend ----------------------------------------------

_TEXT = st.text(alphabet=st.sampled_from(list("ab ,.Éé😀\t")), max_size=6)


def _onnx_model(node: onnx.NodeProto, outputs: list[tuple[str, int, int]], opset_version: int = 20) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.STRING, [None])],
        [helper.make_tensor_value_info(name, code, [None] * rank) for name, code, rank in outputs],
    )
    imports = [helper.make_opsetid("", opset_version), helper.make_opsetid("ai.onnx.ml", 4)]
    return helper.make_model(graph, opset_imports=imports)


def _agree(model: onnx.ModelProto, values: list[str], oracle: str = "onnx.reference") -> None:
    x = np.array(values, object)
    if oracle == "onnxruntime":  # RE2, as ONNX specifies; onnx.reference runs Python's re with Unicode \w
        model.ir_version = 9
        expected = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    else:
        expected = ReferenceEvaluator(model).run(None, {"x": x})
    compiled = hs.Core().compile_model(hs.convert_model(model), "TEMPLATE")
    got = compiled({"x": x})
    for i, e in enumerate(expected):
        assert np.asarray(got[i]).tolist() == e.tolist()


@settings(max_examples=25, deadline=None)
@given(values=st.lists(_TEXT, min_size=1, max_size=4), delimiter=st.sampled_from(["", ",", "ab"]))
def test_string_split_agrees_with_onnx_reference(values: list[str], delimiter: str) -> None:
    node = helper.make_node("StringSplit", ["x"], ["y", "n"], delimiter=delimiter)
    _agree(_onnx_model(node, [("y", onnx.TensorProto.STRING, 2), ("n", onnx.TensorProto.INT64, 1)]), values)


@settings(max_examples=25, deadline=None)
@given(values=st.lists(_TEXT, min_size=1, max_size=4), pattern=st.sampled_from([r"a+", r"[ab]*\s?", r".*é.*", "\\w*"]))
def test_regex_full_match_agrees_with_onnxruntime_re2(values: list[str], pattern: str) -> None:
    node = helper.make_node("RegexFullMatch", ["x"], ["y"], pattern=pattern)
    _agree(_onnx_model(node, [("y", onnx.TensorProto.BOOL, 1)]), values, "onnxruntime")


@settings(max_examples=25, deadline=None)
@given(values=st.lists(_TEXT, min_size=1, max_size=4))
def test_label_encoder_agrees_with_onnx_reference(values: list[str]) -> None:
    node = helper.make_node(
        "LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", keys_strings=["a", "é", ""], values_int64s=[1, 2, 3]
    )
    _agree(_onnx_model(node, [("y", onnx.TensorProto.INT64, 1)]), values)


def test_unsupported_pattern_is_unsupported_in_the_frontend() -> None:
    node = helper.make_node("RegexFullMatch", ["x"], ["y"], pattern=r"\p{Greek}")
    with pytest.raises(UnsupportedOperationError, match="Unicode classes"):
        hs.convert_model(_onnx_model(node, [("y", onnx.TensorProto.BOOL, 1)]))


def test_tfidf_vectorizer_counts_string_tokens() -> None:
    """Unigrams a, b, é (weights 1, 2, 3) and bigrams (a b), (b é) (4, 5), one skip allowed."""
    node = helper.make_node(
        "TfIdfVectorizer", ["x"], ["y"], mode="TFIDF", min_gram_length=1, max_gram_length=2, max_skip_count=1,
        ngram_counts=[0, 3], ngram_indexes=[0, 1, 2, 3, 4], pool_strings=["a", "b", "é", "a", "b", "b", "é"],
        weights=[1.0, 2.0, 3.0, 4.0, 5.0],
    )  # fmt: skip
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.STRING, [2, 5])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 5])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    x = np.array([["a", "b", "z", "a", "b"], ["é", "b", "é", "", "a"]], object)
    expected = np.array([[2, 4, 0, 8, 0], [1, 2, 6, 0, 5]], np.float32)  # counts times weights
    np.testing.assert_array_equal(ReferenceEvaluator(model).run(None, {"x": x})[0], expected)
    np.testing.assert_array_equal(hs.Core().compile_model(hs.convert_model(model), "TEMPLATE")({"x": x})[0], expected)


@pytest.mark.parametrize("value_type", [np.int16, np.int64, np.float32, np.float64])
def test_label_encoder_without_a_default_gives_the_specs_default_as_onnxruntime(value_type: type) -> None:
    """default_tensor left out: -1 for any integral type, -0.0 for floats (once 0 for int16, fuzzing)."""
    keys = onnx.numpy_helper.from_array(np.array(["a", "b", "c"], dtype=object), "keys_tensor")
    values = onnx.numpy_helper.from_array(np.array([7, 8, 9], value_type), "values_tensor")
    node = helper.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", keys_tensor=keys, values_tensor=values)
    out_type = helper.np_dtype_to_tensor_dtype(np.dtype(value_type))
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.STRING, [4])],
        [helper.make_tensor_value_info("y", out_type, [4])],
    )  # fmt: skip
    imports = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 4)]
    model = helper.make_model(graph, opset_imports=imports)
    got = hs.Core().compile_model(model, "TEMPLATE")({"x": np.array(["a", "z", "c", "q"])})["y"]
    expected = np.array([7, -1, 9, -1] if np.dtype(value_type).kind == "i" else [7.0, -0.0, 9.0, -0.0], value_type)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    assert list(np.signbit(got)) == list(np.signbit(expected))
