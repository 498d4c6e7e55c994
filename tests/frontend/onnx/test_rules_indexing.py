"""The indexing rules (GatherND, Scatter, ScatterElements, ScatterND, ReverseSequence, Compress) compute
what ONNX Runtime computes."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx_models import check, node_model, value_info

import hetero_sdk as hs

F32, I64 = np.float32, np.int64
RNG = np.random.default_rng(5)


def _x(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(F32)


@pytest.mark.parametrize("batch_dims", [0, 1])
def test_gather_nd_with_batch_dims(batch_dims: int) -> None:
    indices = np.array([[[1, 0], [0, -1]], [[2, 1], [0, 0]]], I64)
    model, feeds = node_model("GatherND", {"x": _x(2, 3, 2), "i": indices}, 13, batch_dims=batch_dims)
    if batch_dims == 0:
        feeds["i"] = np.array([[[1, 0], [0, -1]], [[1, 2], [0, 0]]], I64)
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_elements_with_each_reduction(reduction: str) -> None:
    indices = np.array([[1, 0, 2], [0, 2, 1]], I64) if reduction == "none" else np.array([[1, 0, 2], [1, -3, 1]], I64)
    inputs = {"x": _x(3, 3), "i": indices, "u": _x(2, 3)}
    model, feeds = node_model("ScatterElements", inputs, 18, axis=-1, reduction=reduction)
    check(model, feeds, ("TEMPLATE", "XLA"))


def test_deprecated_scatter_is_scatter_elements() -> None:
    model, feeds = node_model("Scatter", {"x": _x(3, 4), "i": np.array([[2, 0, 1, 0]], I64), "u": _x(1, 4)}, 10)
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_nd_with_each_reduction(reduction: str) -> None:
    indices = np.array([[1], [3]], I64) if reduction == "none" else np.array([[1], [3], [1]], I64)
    inputs = {"x": _x(4, 2, 3), "i": indices, "u": _x(len(indices), 2, 3)}
    model, feeds = node_model("ScatterND", inputs, 18, reduction=reduction)
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize(("batch_axis", "time_axis"), [(1, 0), (0, 1)])
def test_reverse_sequence_on_either_axis_pair(batch_axis: int, time_axis: int) -> None:
    shape = [4, 3] if batch_axis == 1 else [3, 4]
    inputs = {"x": _x(*shape, 2), "s": np.array([4, 1, 2], I64)}
    model, feeds = node_model("ReverseSequence", inputs, 10, batch_axis=batch_axis, time_axis=time_axis)
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_compress_with_and_without_axis(axis: int | None) -> None:
    attributes = {} if axis is None else {"axis": axis}
    inputs = {"x": _x(3, 4), "c": np.array([True, False, True])}
    model, feeds = node_model("Compress", inputs, 11, **attributes)
    check(model, feeds)


def test_xla_declines_compress_whose_output_length_depends_on_the_condition() -> None:
    model, _ = node_model("Compress", {"x": _x(3, 4), "c": np.array([True, False, True])}, 11, axis=0)
    translated = hs.convert_model(model)
    assert "NonZero" in {op.type_name for op in translated.get_ops()}
    assert hs.Core().query_model(translated, "XLA") == {}


@pytest.mark.parametrize(("axis", "sort"), [(None, 1), (None, 0), (0, 1), (-1, 0)])
def test_unique_outputs_all_four_sorted_or_not(axis: int | None, sort: int) -> None:
    x = np.array([[2, 1, 2], [0, 1, 2], [2, 1, 2]], F32)
    attributes = {"sorted": sort} | ({} if axis is None else {"axis": axis})
    model, feeds = node_model("Unique", {"x": x}, 11, outputs=4, **attributes)
    check(model, feeds)


def test_xla_declines_unique() -> None:
    model, _ = node_model("Unique", {"x": _x(4)}, 11, outputs=4)
    assert hs.Core().query_model(hs.convert_model(model), "XLA") == {}


@pytest.mark.parametrize(("mode", "axis"), [("linear", -2), ("circular", -2), ("circular", 1)])
def test_tensor_scatter_writes_each_batch_entry_from_its_index(mode: str, axis: int) -> None:
    past = _x(2, 4, 5, 3)
    update = _x(2, 4, 3, 3) if axis == -2 else _x(2, 2, 5, 3)
    starts = np.array([1, 2] if mode == "linear" else [3, 4], I64)
    expected = past.copy()
    a = axis % 4
    for prefix in np.ndindex(past.shape[:a]):
        for step in range(update.shape[a]):
            at = starts[prefix[0]] + step
            at = at % past.shape[a] if mode == "circular" else at
            expected[(*prefix, at)] = update[(*prefix, step)]
    inputs = {"past": past, "update": update, "starts": starts}
    model, feeds = node_model("TensorScatter", inputs, 24, mode=mode, axis=axis)
    check(model, feeds, ("TEMPLATE", "XLA"), expected=[expected])


@pytest.mark.parametrize("shape", [(3, 4), (5,)])
def test_array_feature_extractor_takes_columns_of_the_last_axis(shape: tuple[int, ...]) -> None:
    x, indices = _x(*shape), np.array([2, 0, 2], I64)
    node = helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain="ai.onnx.ml")
    out = [*shape[:-1], 3] if len(shape) > 1 else [1, 3]
    graph = helper.make_graph(
        [node], "g", [value_info("x", F32, shape), value_info("i", I64, [3])], [value_info("y", F32, out)]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("ai.onnx.ml", 1)])
    model.ir_version = 8
    expected = x[..., [2, 0, 2]].reshape(out)
    check(model, {"x": x, "i": indices}, ("TEMPLATE", "XLA"), expected=[expected])


@pytest.mark.parametrize("index_shape", [(2, 2), (1, 2, 3), ()])
def test_array_feature_extractor_reads_indices_of_any_rank_as_one_list_as_onnxruntime(
    index_shape: tuple[int, ...],
) -> None:
    """Indices [2, 2, 100000] once gave a (3, 2, 2, 100000) output where ONNX Runtime gives (3, 400000) (fuzzing)."""
    x = _x(3, 4)
    indices = np.random.default_rng(1).integers(0, 4, index_shape).astype(I64)
    node = helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain="ai.onnx.ml")
    graph = helper.make_graph(
        [node], "g", [value_info("x", F32, [3, 4]), value_info("i", I64, list(index_shape))],
        [value_info("y", F32, [3, indices.size])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("ai.onnx.ml", 1)])
    model.ir_version = 8
    expected = check(model, {"x": x, "i": indices}, ("TEMPLATE", "XLA"))  # ONNX Runtime's result
    np.testing.assert_array_equal(expected[0], x[:, indices.reshape(-1)])
