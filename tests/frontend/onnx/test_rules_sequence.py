"""Sequences and optionals resolved while translating: models that build, edit and read sequences
inside compute what ONNX Runtime computes; what would need a sequence at run time is a typed error."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_models import check, graph_model, value_info

import hetero_sdk as hs
from hetero_sdk.errors import ModelValidationError, UnsupportedOperationError

F32, I64 = np.float32, np.int64
RNG = np.random.default_rng(4)
DEVICES = ("TEMPLATE", "XLA")


def _x(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(F32)


def _node(op: str, inputs: list[str], outputs: list[str], **attrs: object) -> object:
    return helper.make_node(op, inputs, outputs, **attrs)


@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("new_axis", [0, 1])
def test_split_to_sequence_then_concat_from_sequence(keepdims: int, new_axis: int) -> None:
    x = _x(2, 3, 4)
    nodes = [
        _node("SplitToSequence", ["x"], ["seq"], axis=1, keepdims=keepdims),
        _node("ConcatFromSequence", ["seq"], ["y"], axis=-1, new_axis=new_axis),
        _node("SequenceLength", ["seq"], ["n"]),
    ]
    out_shape = ([2, 1, 4, 3] if keepdims else [2, 4, 3]) if new_axis else ([2, 1, 12] if keepdims else [2, 12])
    outputs = [value_info("y", F32, out_shape), value_info("n", I64, [])]
    model = graph_model(nodes, [value_info("x", F32, x.shape)], outputs, 17)
    want = check(model, {"x": x}, DEVICES)
    assert int(want[1]) == 3


@pytest.mark.parametrize("split", [np.array(2, I64), np.array([1, 3], I64)])
def test_split_to_sequence_by_chunk_size_and_by_lengths(split: np.ndarray) -> None:
    x = _x(3, 4)
    nodes = [
        _node("SplitToSequence", ["x", "split"], ["seq"], axis=-1),
        _node("SequenceAt", ["seq", "last"], ["y"]),
        _node("SequenceAt", ["seq", "first"], ["z"]),
    ]
    consts = {"split": split, "last": np.array(-1, I64), "first": np.array(0, I64)}
    outputs = [value_info(n, F32, [3, None]) for n in "yz"]
    model = graph_model(nodes, [value_info("x", F32, x.shape)], outputs, 17, consts, full_check=False)
    check(model, {"x": x}, DEVICES)


def test_construct_insert_erase_and_read_back() -> None:
    a, b, c, d = _x(2), _x(2), _x(2), _x(2)
    nodes = [
        _node("SequenceConstruct", ["a", "b", "c"], ["s0"]),
        _node("SequenceInsert", ["s0", "d", "one"], ["s1"]),  # a d b c
        _node("SequenceErase", ["s1", "minus_one"], ["s2"]),  # a d b
        _node("SequenceInsert", ["s2", "a"], ["s3"]),  # a d b a (at the back)
        _node("ConcatFromSequence", ["s3"], ["y"], axis=0, new_axis=1),
        _node("SequenceLength", ["s3"], ["n"]),
    ]
    consts = {"one": np.array(1, I64), "minus_one": np.array(-1, I64)}
    inputs = [value_info(n, F32, [2]) for n in "abcd"]
    model = graph_model(nodes, inputs, [value_info("y", F32, [4, 2]), value_info("n", I64, [])], 17, consts)
    want = check(model, {"a": a, "b": b, "c": c, "d": d}, DEVICES)
    np.testing.assert_array_equal(want[0], np.stack([a, d, b, a]))


def test_an_empty_sequence_grows_by_insertion() -> None:
    x = _x(3)
    nodes = [
        _node("SequenceEmpty", [], ["s0"], dtype=TensorProto.FLOAT),
        _node("SequenceInsert", ["s0", "x"], ["s1"]),
        _node("SequenceInsert", ["s1", "x", "zero"], ["s2"]),
        _node("ConcatFromSequence", ["s2"], ["y"], axis=0),
    ]
    model = graph_model(nodes, [value_info("x", F32, [3])], [value_info("y", F32, [6])], 17, {"zero": np.array(0, I64)})
    check(model, {"x": x}, DEVICES, expected=[np.concatenate([x, x])])


def test_optionals_hold_a_tensor_or_nothing() -> None:
    x = _x(2, 2)
    optional_type = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 2]))
    nodes = [
        _node("Optional", ["x"], ["full"]),
        helper.make_node("Optional", [], ["empty"], type=optional_type.optional_type.elem_type),
        _node("OptionalHasElement", ["full"], ["has_full"]),
        _node("OptionalHasElement", ["empty"], ["has_empty"]),
        _node("OptionalGetElement", ["full"], ["y"]),
        _node("Identity", ["full"], ["full_copy"]),
        _node("OptionalGetElement", ["full_copy"], ["z"]),
    ]
    outputs = [value_info("has_full", np.bool_, []), value_info("has_empty", np.bool_, [])]
    outputs += [value_info("y", F32, [2, 2]), value_info("z", F32, [2, 2])]
    model = graph_model(nodes, [value_info("x", F32, [2, 2])], outputs, 18)
    check(model, {"x": x}, DEVICES, expected=[np.array(True), np.array(False), x, x])


def test_an_optional_tensor_input_is_a_tensor_the_caller_feeds() -> None:
    x = _x(3)
    optional_input = helper.make_value_info(
        "x", helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [3]))
    )
    nodes = [_node("OptionalHasElement", ["x"], ["has"]), _node("OptionalGetElement", ["x"], ["y"])]
    outputs = [value_info("has", np.bool_, []), value_info("y", F32, [3])]
    model = graph_model(nodes, [optional_input], outputs, 18)
    check(model, {"x": x}, ("TEMPLATE",), expected=[np.array(True), x])


def test_a_sequence_graph_output_is_a_typed_error_naming_it() -> None:
    nodes = [_node("SplitToSequence", ["x"], ["seq"], axis=0)]
    seq_out = helper.make_value_info("seq", helper.make_sequence_type_proto(helper.make_tensor_type_proto(1, None)))
    model = graph_model(nodes, [value_info("x", F32, [2, 3])], [seq_out], 17)
    with pytest.raises(UnsupportedOperationError, match="output 'seq' of the graph is a sequence of 2 tensor"):
        hs.convert_model(model)


def test_a_position_known_only_at_run_time_is_a_typed_error_naming_the_node() -> None:
    nodes = [_node("SplitToSequence", ["x"], ["seq"], axis=0), _node("SequenceAt", ["seq", "i"], ["y"], name="at")]
    model = graph_model(
        nodes, [value_info("x", F32, [2, 3]), value_info("i", I64, [])], [value_info("y", F32, [1, 3])], 17
    )
    with pytest.raises(UnsupportedOperationError, match=r"SequenceAt 'at'.*position"):
        hs.convert_model(model)


def test_a_sequence_where_a_tensor_is_expected_is_a_typed_error() -> None:
    nodes = [_node("SplitToSequence", ["x"], ["seq"], axis=0), _node("Relu", ["seq"], ["y"], name="relu")]
    model = graph_model(nodes, [value_info("x", F32, [2, 3])], [value_info("y", F32, [2, 3])], 17, full_check=False)
    with pytest.raises(ModelValidationError, match=r"Relu 'relu'.*a sequence of 2 tensor"):
        hs.convert_model(model)


def test_a_loop_carrying_a_sequence_is_unsupported_naming_the_loop() -> None:
    body = helper.make_graph(
        [
            _node("Identity", ["cond_in"], ["cond_out"]),
            _node("SequenceInsert", ["seq_in", "x"], ["seq_out"]),
        ],
        "body",
        [
            value_info("i", I64, []),
            value_info("cond_in", np.bool_, []),
            helper.make_value_info("seq_in", helper.make_sequence_type_proto(helper.make_tensor_type_proto(1, [2]))),
        ],
        [
            value_info("cond_out", np.bool_, []),
            helper.make_value_info("seq_out", helper.make_sequence_type_proto(helper.make_tensor_type_proto(1, [2]))),
        ],
    )
    nodes = [
        _node("SequenceEmpty", [], ["empty"], dtype=TensorProto.FLOAT),
        _node("Loop", ["n", "", "empty"], ["seq"], body=body, name="grow"),
        _node("ConcatFromSequence", ["seq"], ["y"], axis=0),
    ]
    model = graph_model(
        nodes,
        [value_info("x", F32, [2]), value_info("n", I64, [])],
        [value_info("y", F32, [None])],
        17,
        full_check=False,
    )
    with pytest.raises(UnsupportedOperationError, match=r"Loop 'grow'.*carrying a sequence"):
        hs.convert_model(model)
