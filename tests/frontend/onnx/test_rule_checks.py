"""Attribute values ONNX forbids (a zero group, negative pads, a split into more parts than elements) are
refused while translating with a ModelValidationError naming the node, rather than failing deep inside a
kernel (ZeroDivisionError, MemoryError) or computing something ONNX Runtime would refuse."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx import ModelProto, helper, numpy_helper
from onnx_models import FEW, check, value_info

import hetero_sdk as hs
from hetero_sdk.errors import ModelValidationError

F32, I64 = np.float32, np.int64


def _model(
    op_type: str,
    inputs: dict[str, tuple[type, list[int]]],
    outputs: int,
    opset: int,
    initializers: dict[str, np.ndarray] | None = None,
    rank: int = 1,
    **attributes: object,
) -> ModelProto:
    """A one-node model (its node named ``n``) without ONNX's shape inference, which refuses some of these;
    its outputs are float32 of rank ``rank``."""
    node = helper.make_node(op_type, [*inputs, *(initializers or {})], [f"y{i}" for i in range(outputs)],
                            name="n", **attributes)  # fmt: skip
    graph = helper.make_graph(
        [node],
        "g",
        [value_info(k, dtype, shape) for k, (dtype, shape) in inputs.items()],
        [value_info(f"y{i}", F32, [f"d{i}"] * rank) for i in range(outputs)],
        [numpy_helper.from_array(v, k) for k, v in (initializers or {}).items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


@pytest.mark.parametrize("num_outputs", [0, -1, 2**31, 3])
def test_split_18_num_outputs_must_match_the_listed_outputs(num_outputs: int) -> None:
    model = _model("Split", {"x": (F32, [6])}, 2, 18, num_outputs=num_outputs)
    with pytest.raises(ModelValidationError, match=rf"Split 'n'.*num_outputs is {num_outputs} but the node lists 2"):
        hs.convert_model(model)


def test_split_18_into_parts_that_leave_the_last_negative_is_refused_as_onnxruntime_does() -> None:
    model = _model("Split", {"x": (F32, [7])}, 5, 18, num_outputs=5)
    with pytest.raises(ModelValidationError, match=r"Split 'n'.*5 outputs.*7 element\(s\).*negative length"):
        hs.convert_model(model)


def test_split_18_with_num_outputs_and_lengths_is_refused() -> None:
    model = _model("Split", {"x": (F32, [6])}, 2, 18, {"s": np.array([3, 3], I64)}, num_outputs=2)
    with pytest.raises(ModelValidationError, match=r"Split 'n'.*num_outputs and the split input are both given"):
        hs.convert_model(model)


def test_split_18_of_two_elements_into_three_gives_an_empty_last_part() -> None:
    model = _model("Split", {"x": (F32, [2])}, 3, 18, num_outputs=3)
    x = np.array([1.0, 2.0], F32)
    check(model, {"x": x}, expected=[x[:1], x[1:], x[2:]])


@pytest.mark.parametrize(("group", "problem"), [(0, "group is 0"), (-2, "group is -2"), (3, "group 3 does not divide")])
@pytest.mark.parametrize("op_type", ["Conv", "ConvTranspose"])
def test_conv_group_must_be_positive_and_divide_the_channels(op_type: str, group: int, problem: str) -> None:
    weights = {"w": np.ones((4, 1, 1, 1), F32)}
    model = _model(op_type, {"x": (F32, [1, 4, 3, 3])}, 1, 17, weights, rank=4, group=group)
    with pytest.raises(ModelValidationError, match=rf"{op_type} 'n'.*{problem}"):
        hs.convert_model(model)


@pytest.mark.parametrize(
    ("op_type", "attributes"),
    [
        ("Conv", {}),
        ("ConvTranspose", {}),
        ("MaxPool", {"kernel_shape": [1, 1]}),
        ("AveragePool", {"kernel_shape": [1, 1]}),
        ("LpPool", {"kernel_shape": [1, 1]}),
    ],
)
def test_negative_pads_are_refused_as_onnxruntime_refuses_them(op_type: str, attributes: dict[str, object]) -> None:
    weights = {"w": np.ones((1, 1, 1, 1), F32)} if op_type.startswith("Conv") else {}
    model = _model(op_type, {"x": (F32, [1, 1, 3, 3])}, 1, 17, weights, rank=4, pads=[-1, -1, 0, 0], **attributes)
    with pytest.raises(ModelValidationError, match=rf"{op_type} 'n'.*pads \[-1, -1, 0, 0\] are negative"):
        hs.convert_model(model)


def test_conv_with_zero_pads_and_a_dividing_group_still_computes_the_depthwise_product() -> None:
    x = np.arange(8, dtype=F32).reshape(1, 2, 2, 2)
    model = _model("Conv", {"x": (F32, [1, 2, 2, 2])}, 1, 17, {"w": np.array([2, 3], F32).reshape(2, 1, 1, 1)},
                   rank=4, group=2, pads=[0, 0, 0, 0])  # fmt: skip
    check(model, {"x": x}, expected=[x * np.array([2, 3], F32).reshape(1, 2, 1, 1)])


@pytest.mark.parametrize("depth", [0, -3])
def test_one_hot_with_a_constant_depth_below_1_is_refused(depth: int) -> None:
    constants = {"d": np.array(depth, I64), "v": np.array([0, 1], F32)}
    model = _model("OneHot", {"i": (I64, [2])}, 1, 11, constants, rank=2)
    with pytest.raises(ModelValidationError, match=rf"OneHot 'n'.*depth is {depth}"):
        hs.convert_model(model)


# -- attributes outside their domain, axes of scalars, counts beyond the inputs --------------------------


def _scan_body(states: int, scanned: int, rank: int = 0) -> onnx.GraphProto:
    """A Scan body passing each state and slice through (slices of ``rank`` dims)."""
    names = [f"s{i}" for i in range(states)] + [f"x{i}" for i in range(scanned)]
    nodes = [helper.make_node("Identity", [n], [f"{n}_out"]) for n in names]
    shape: list[str] = ["d"] * rank
    return helper.make_graph(
        nodes, "body", [value_info(n, F32, shape) for n in names], [value_info(f"{n}_out", F32, shape) for n in names]
    )


@pytest.mark.parametrize("count", [2, 3, 2**31, 2**62, 0, -1])
def test_scan_with_num_scan_inputs_outside_1_to_the_inputs_is_refused_naming_it(count: int) -> None:
    model = _model("Scan", {"x": (F32, [3, 2])}, 1, 11, rank=2, body=_scan_body(0, 1, 1), num_scan_inputs=count)
    with pytest.raises(ModelValidationError, match=rf"Scan 'n'.*num_scan_inputs={count} is outside its domain"):
        hs.convert_model(model)


@pytest.mark.parametrize(
    ("op_type", "inputs", "opset", "attributes"),
    [
        ("Scan", {"x": (F32, [])}, 11, {"body": _scan_body(0, 1), "num_scan_inputs": 1}),
        ("DFT", {"x": (F32, [])}, 17, {}),
        ("TensorScatter", {"past": (F32, []), "update": (F32, [])}, 24, {}),
        ("Hardmax", {"x": (F32, [2, 3])}, 13, {"axis": 2**62}),
        ("Hardmax", {"x": (F32, [2, 3])}, 11, {"axis": -3}),
        ("LayerNormalization", {"x": (F32, [2, 3]), "s": (F32, [3])}, 17, {"axis": 2}),
        ("Split", {"x": (F32, [4])}, 13, {"axis": 1}),
        ("Compress", {"x": (F32, [4]), "c": (np.bool_, [4])}, 11, {"axis": 1}),
    ],
)
def test_an_axis_outside_the_rank_is_refused_naming_the_node(
    op_type: str, inputs: dict[str, tuple[type, list[int]]], opset: int, attributes: dict[str, object]
) -> None:
    model = _model(op_type, inputs, 1, opset, **attributes)
    with pytest.raises(ModelValidationError, match=rf"{op_type} 'n'.*axis .* is out of range for rank"):
        hs.convert_model(model)


@pytest.mark.parametrize(
    ("op_type", "inputs", "opset", "attribute"),
    [
        ("ReduceSum", {"x": (F32, [2, 3])}, 11, "keepdims"),
        ("MaxPool", {"x": (F32, [1, 1, 4, 4])}, 12, "ceil_mode"),
        ("AveragePool", {"x": (F32, [1, 1, 4, 4])}, 19, "count_include_pad"),
        ("CumSum", {"x": (F32, [4]), "a": (I64, [])}, 14, "reverse"),
        ("HannWindow", {"size": (I64, [])}, 17, "periodic"),  # translated through its ONNX function body
        ("Trilu", {"x": (F32, [3, 3])}, 14, "upper"),
    ],
)
@FEW
@given(value=st.integers(-(2**63), 2**63 - 1).filter(lambda v: v not in (0, 1)))
def test_a_boolean_attribute_other_than_0_or_1_is_refused_naming_node_and_value(
    op_type: str, inputs: dict[str, tuple[type, list[int]]], opset: int, attribute: str, value: int
) -> None:
    window = {"kernel_shape": [2, 2]} if "Pool" in op_type else {}
    model = _model(op_type, inputs, 1, opset, **window, **{attribute: value})
    with pytest.raises(
        ModelValidationError, match=rf"{op_type} 'n'.*attribute {attribute}={value} is outside its domain"
    ):
        hs.convert_model(model)


def test_average_pool_with_a_zero_stride_is_refused() -> None:
    for auto_pad in ("NOTSET", "SAME_UPPER", "VALID"):
        model = _model("AveragePool", {"x": (F32, [1, 1, 4, 4])}, 1, 19, rank=4, kernel_shape=[2, 2],
                       strides=[0, 1], auto_pad=auto_pad)  # fmt: skip
        with pytest.raises(ModelValidationError, match=r"AveragePool 'n'.*strides"):
            hs.convert_model(model)


# -- work in proportion to a declared size is bounded before it starts -----------------------------------


def test_scan_8_over_a_huge_declared_batch_is_refused_before_unrolling_it() -> None:
    inputs = {"": (F32, []), "x": (F32, [100_000, 3, 2])}
    node = helper.make_node("Scan", ["", "x"], ["y0"], name="n", body=_scan_body(0, 1, 1), num_scan_inputs=1)
    graph = helper.make_graph([node], "g", [value_info("x", F32, inputs["x"][1])], [value_info("y0", F32, ["a"] * 3)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)], ir_version=8)
    with pytest.raises(ModelValidationError, match=r"Scan 'n'.*100,000 copies.*UNROLLED_COPIES"):
        hs.convert_model(model)


def test_dft_of_a_huge_declared_signal_is_refused_before_building_its_matrices() -> None:
    model = _model("DFT", {"x": (F32, [1, 1_000_000, 1])}, 1, 17, rank=3)
    with pytest.raises(ModelValidationError, match=r"DFT 'n'.*CONSTANT_ELEMENTS"):
        hs.convert_model(model)


def test_split_to_sequence_of_a_huge_declared_dimension_is_refused_before_listing_its_slices() -> None:
    node = helper.make_node("SplitToSequence", ["x"], ["s"], name="n")
    at = helper.make_node("SequenceAt", ["s", "i"], ["y0"])
    graph = helper.make_graph([node, at], "g", [value_info("x", F32, [10_000_000])], [value_info("y0", F32, [])],
                              [numpy_helper.from_array(np.array(0, I64), "i")])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    with pytest.raises(ModelValidationError, match=r"SplitToSequence 'n'.*LISTED_VALUES"):
        hs.convert_model(model)


def _tfidf(skips: int, low: int = 1, high: int = 2) -> ModelProto:
    return _model("TfIdfVectorizer", {"x": (I64, [1, 8])}, 1, 9, rank=2, mode="TF", min_gram_length=low,
                  max_gram_length=high, max_skip_count=skips, ngram_counts=[0, 2], ngram_indexes=[0, 1, 2],
                  pool_int64s=[1, 2, 1, 2])  # fmt: skip


@pytest.mark.parametrize("skips", [2**62, 2**31, 50])
def test_tfidf_with_a_huge_max_skip_count_counts_only_the_skips_that_fit_in_the_tokens(skips: int) -> None:
    # a bigram's tokens are at most 7 apart in 8 tokens: ONNX Runtime counts the same for any max_skip_count
    # from 6 on (and takes seconds per 2**31 skips, so it is asked with 6)
    feeds = {"x": np.array([[1, 2, 3, 1, 2, 4, 2, 1]], I64)}
    expected = check(_tfidf(6), feeds)
    check(_tfidf(skips), feeds, expected=expected)


@pytest.mark.parametrize(("low", "high", "skips"), [(0, 2, 0), (3, 2, 0), (1, 2, -1)])
def test_tfidf_gram_lengths_and_skips_outside_their_domains_are_refused(low: int, high: int, skips: int) -> None:
    model = _tfidf(skips, low, high)
    with pytest.raises(ModelValidationError, match=r"TfIdfVectorizer 'n'.*outside their domains"):
        hs.convert_model(model)


# -- Compress ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_compress_with_a_condition_longer_than_the_axis_drops_the_extra_entries_as_onnxruntime_does(
    axis: int | None,
) -> None:
    x = np.arange(6, dtype=F32).reshape(2, 3)
    condition = np.array([True, False, True, True, True, False, True, True])
    attributes = {} if axis is None else {"axis": axis}
    model = _model("Compress", {"x": (F32, [2, 3]), "c": (np.bool_, [8])}, 1, 11,
                   rank=1 if axis is None else 2, **attributes)  # fmt: skip
    feeds = {"x": x, "c": condition}
    size = x.size if axis is None else x.shape[axis]
    expected = np.compress(condition[:size], x, axis=axis)
    assert check(model, feeds)[0].shape == expected.shape
    check(model, feeds, expected=[expected])


@pytest.mark.parametrize("direction", [2, -1, 2**40])
def test_a_scan_direction_other_than_0_or_1_is_refused_by_the_ops_declared_domain(direction: int) -> None:
    model = _model("Scan", {"x": (F32, [3, 2])}, 1, 11, rank=2, body=_scan_body(0, 1, 1), num_scan_inputs=1,
                   scan_input_directions=[direction])  # fmt: skip
    with pytest.raises(
        ModelValidationError, match=rf"Scan.*scan_input_directions=\[{direction}\] is outside its domain 0..1"
    ):
        hs.convert_model(model)


def _feeding(producer: onnx.NodeProto, consumer: str, constants: dict[str, np.ndarray]) -> ModelProto:
    """``consumer(x, producer(...))``: a value of a declared size used as a shape or lengths input."""
    node = helper.make_node(consumer, ["x", "made"], ["y0"], name="n")
    graph = helper.make_graph([producer, node], "g", [value_info("x", F32, [2])], [value_info("y0", F32, ["a"])],
                              [numpy_helper.from_array(v, k) for k, v in constants.items()])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("size", [2**20, 2**34])
def test_a_shape_input_of_a_huge_declared_length_is_refused_without_computing_it(size: int) -> None:
    # folding the Range would allocate size * 8 bytes (128 GiB for 2**34): it is skipped, and the rank refused
    made = helper.make_node("Range", ["a", "b", "c"], ["made"])
    bounds = {"a": np.array(0, I64), "b": np.array(size, I64), "c": np.array(1, I64)}
    with pytest.raises(ModelValidationError, match=rf"Reshape 'n'.*{size:,} dimensions.*limits.RANK"):
        hs.convert_model(_feeding(made, "Reshape", bounds))


def test_split_lengths_of_a_huge_declared_length_are_refused_without_computing_them() -> None:
    made = helper.make_node("ConstantOfShape", ["s"], ["made"], value=numpy_helper.from_array(np.array([1], I64)))
    with pytest.raises(ModelValidationError, match=r"Split 'n'.*17,179,869,184 listed values.*LISTED_VALUES"):
        hs.convert_model(_feeding(made, "Split", {"s": np.array([2**34], I64)}))


def _attention(softcap: float) -> ModelProto:
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"], name="n", softcap=softcap)
    graph = helper.make_graph(
        [node], "g", [value_info(n, F32, [2, 3, 4 if n == "q" else 6, 8]) for n in "qkv"],
        [value_info("y", F32, [2, 3, 4, 8])],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])


@pytest.mark.parametrize("softcap", [-1.0, -0.25, float("nan"), float("inf")])
def test_an_attention_soft_cap_that_is_negative_or_not_finite_is_refused(softcap: float) -> None:
    """ONNX's function body caps at |softcap| (NaN everywhere for NaN), ONNX Runtime and onnx.reference
    only at a positive one: once read as the body says, a result neither of them gives (fuzzing)."""
    with pytest.raises(
        ModelValidationError, match=rf"Attention 'n'.*attribute softcap={softcap!r} is outside its domain"
    ):
        hs.convert_model(_attention(softcap))


@pytest.mark.parametrize("softcap", [0.0, 0.5, 2.0])
def test_an_attention_soft_cap_of_0_or_positive_matches_onnxruntime(softcap: float) -> None:
    rng = np.random.default_rng(5)
    feeds = {n: (3 * rng.standard_normal((2, 3, 4 if n == "q" else 6, 8))).astype(F32) for n in "qkv"}
    check(_attention(softcap), feeds, rtol=1e-4, atol=1e-5)


def _masked_attention(mask_type: type) -> ModelProto:
    node = helper.make_node("Attention", ["q", "k", "v", "mask"], ["y"], name="n")
    inputs = [value_info(n, F32, [2, 3, 4 if n == "q" else 6, 8]) for n in "qkv"]
    graph = helper.make_graph(
        [node], "g", [*inputs, value_info("mask", mask_type, [4, 6])], [value_info("y", F32, [2, 3, 4, 8])]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])


@pytest.mark.parametrize("mask_type", [np.int64, np.int32, np.uint8])
def test_an_integer_attention_mask_is_refused_naming_its_type(mask_type: type) -> None:
    """ONNX's text: a mask is boolean or Q's float type; its type constraint admits integers, which ONNX
    Runtime reads one way and onnx.reference cannot read (fuzzing)."""
    with pytest.raises(ModelValidationError, match=r"Attention 'n'.*attn_mask is [iu]\d+; a mask is boolean"):
        hs.convert_model(_masked_attention(mask_type))


@pytest.mark.parametrize("mask_type", [np.bool_, F32])
def test_a_boolean_or_additive_attention_mask_matches_onnxruntime(mask_type: type) -> None:
    rng = np.random.default_rng(6)
    feeds = {n: rng.standard_normal((2, 3, 4 if n == "q" else 6, 8)).astype(F32) for n in "qkv"}
    keep = rng.random((4, 6)) < 0.7
    keep[:, 0] = True
    feeds["mask"] = keep if mask_type is np.bool_ else np.where(keep, 0.0, -1e9).astype(F32)
    check(_masked_attention(mask_type), feeds, rtol=1e-4, atol=1e-5)
