"""Claims: models using multi-output, shape-manipulating and data-dependent ops round-trip exactly.

Each test needs ops from other families and is skipped while those are absent from the opset.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.reference import evaluate
from hetero_sdk.serialization import model_from_bytes, model_to_bytes, read_model, save_model


def _ops(*names: str) -> list[Callable[..., hs.Node]]:
    missing = [n for n in names if not hasattr(opset, n)]
    if missing:
        pytest.skip(f"not in the opset yet: {', '.join(missing)}")
    return [getattr(opset, n) for n in names]


def _round_trip(tmp_path: Any, model: hs.Model, inputs: list[np.ndarray], same_model: Any, bit_equal: Any) -> None:
    save_model(model, tmp_path / "model.json")
    expected = evaluate(model, inputs)
    for loaded in (read_model(tmp_path / "model.json"), model_from_bytes(model_to_bytes(model))):
        same_model(model, loaded)
        got = evaluate(loaded, inputs)
        assert all(bit_equal(a, b) for a, b in zip(expected, got))


def test_multi_output_ports_keep_their_indices_and_names(tmp_path, same_model, bit_equal):
    split, topk, concat = _ops("split", "topk", "concat")
    x = opset.parameter([2, 6], hs.Type.f32, name="x")
    parts = split(x, 1, 3, name="parts")
    best = topk(x, 2, axis=1, mode="max", sort="value", name="best")
    joined = concat([parts.output(2), parts.output(0)], axis=1, name="joined")
    best.output(1).set_names({"best_indices"})
    model = hs.Model([joined, best.output(1), best.output(0)], [x], name="ports")
    data = np.array([[5, 1, 4, 2, 6, 3], [0, -1, 9, 8, -2, 7]], np.float32)
    _round_trip(tmp_path, model, [data], same_model, bit_equal)
    document = json.loads((tmp_path / "model.json").read_text("utf-8"))
    by_name = {n["name"]: n for n in document["nodes"]}
    assert by_name["joined"]["inputs"] == [["parts", 2], ["parts", 0]]
    assert by_name["best"]["outputs"][1]["names"] == ["best_indices"]
    got = evaluate(read_model(tmp_path / "model.json"), {"x": data})
    np.testing.assert_array_equal(got[0], np.concatenate([data[:, 4:], data[:, :2]], axis=1))
    np.testing.assert_array_equal(got[1], [[4, 0], [2, 3]])
    np.testing.assert_array_equal(got[2], [[6, 5], [9, 8]])


def test_shape_manipulation_chain(tmp_path, same_model, bit_equal):
    reshape, transpose, reduce_sum, gather, tile = _ops("reshape", "transpose", "reduce_sum", "gather", "tile")
    x = opset.parameter([-1, 6], hs.Type.f32, name="x")
    shaped = reshape(x, np.array([0, 2, 3], np.int64), special_zero=True, name="shaped")
    turned = transpose(shaped, np.array([0, 2, 1], np.int64), name="turned")
    summed = reduce_sum(turned, np.array([2], np.int64), keep_dims=True, name="summed")
    picked = gather(summed, np.array([2, 0], np.int32), np.array(1, np.int64), name="picked")
    model = hs.Model([tile(picked, np.array([1, 2, 1], np.int64), name="tiled")], [x], name="shapes")
    data = np.arange(12, dtype=np.float32).reshape(2, 6)
    _round_trip(tmp_path, model, [data], same_model, bit_equal)
    sums = data.reshape(2, 2, 3).transpose(0, 2, 1).sum(axis=2, keepdims=True)
    expected = np.tile(sums[:, [2, 0], :], (1, 2, 1))
    np.testing.assert_array_equal(evaluate(read_model(tmp_path / "model.json"), [data])[0], expected)


def test_data_dependent_shapes(tmp_path, same_model, bit_equal):
    (non_zero,) = _ops("non_zero")
    x = opset.parameter([-1], hs.Type.i32, name="x")
    model = hs.Model([non_zero(x, hs.Type.i64, name="where")], [x], name="dynamic")
    data = np.array([0, 3, 0, -1], np.int32)
    _round_trip(tmp_path, model, [data], same_model, bit_equal)
    np.testing.assert_array_equal(evaluate(read_model(tmp_path / "model.json"), [data])[0], [[1, 3]])


def test_strided_slice_mask_attributes(tmp_path, same_model, bit_equal):
    (strided_slice,) = _ops("strided_slice")
    x = opset.parameter([4, 5], hs.Type.f32, name="x")
    sliced = strided_slice(
        x,
        np.array([1, 0], np.int64),
        np.array([4, 5], np.int64),
        np.array([2, -1], np.int64),
        begin_mask=[0, 1],
        end_mask=[0, 1],
        name="sliced",
    )
    model = hs.Model([sliced], [x], name="slices")
    data = np.arange(20, dtype=np.float32).reshape(4, 5)
    _round_trip(tmp_path, model, [data], same_model, bit_equal)
    np.testing.assert_array_equal(evaluate(read_model(tmp_path / "model.json"), [data])[0], data[1:4:2, ::-1])
