"""Data movement ops (Transpose, Concat, Split, VariadicSplit, Slice, StridedSlice, Gather, Pad): shape
inference (static, dynamic, computed inputs), values against numpy written here, hypothesis over shapes
and attributes, and bad input."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hetero_sdk as hs
from hetero_sdk import opset

from .shape_helpers import FAST, INT64_MAX, INT64_MIN, dyn, iota, raises, run, shape

# -- Transpose ------------------------------------------------------------------------------------


@FAST
@given(dims=hnp.array_shapes(min_dims=0, max_dims=5, max_side=3), data=st.data())
def test_transpose_matches_numpy(dims: tuple[int, ...], data: st.DataObject) -> None:
    order = data.draw(st.permutations(range(len(dims))))
    x = iota(*dims)
    node, (out,) = run(lambda p: opset.transpose(p, np.array(order, np.int64)), x)
    np.testing.assert_array_equal(out, np.transpose(x, order))
    assert shape(node) == list(out.shape)


def test_transpose_with_empty_order_reverses_and_moves_dynamic_dims() -> None:
    x = iota(2, 3, 4)
    _, (out,) = run(lambda p: opset.transpose(p, []), x)
    np.testing.assert_array_equal(out, x.T)
    assert shape(opset.transpose(dyn(-1, 3, 4), [2, 0, 1])) == [4, -1, 3]
    assert shape(opset.transpose(dyn(2, 3), opset.parameter([2], hs.Type.i64))) == [-1, -1]


@pytest.mark.parametrize("order", [[0, 0, 1], [0, 1], [-1, 0, 1], [0, 1, 3]])
def test_transpose_rejects_non_permutations(order: list[int]) -> None:
    with raises("Transpose", "permutation"):
        opset.transpose(dyn(2, 3, 4), order, name="bad")


# -- Concat, Split, VariadicSplit -----------------------------------------------------------------


@FAST
@given(
    dims=hnp.array_shapes(min_dims=1, max_dims=4, max_side=3),
    sizes=st.lists(st.integers(0, 3), min_size=1, max_size=4),
    data=st.data(),
)
def test_concat_matches_numpy(dims: tuple[int, ...], sizes: list[int], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(dims), len(dims) - 1))
    arrays = [iota(*dims[: axis % len(dims)], n, *dims[axis % len(dims) + 1 :]) + 100 * i for i, n in enumerate(sizes)]
    _, (out,) = run(lambda *ps: opset.concat(ps, axis), *arrays)
    np.testing.assert_array_equal(out, np.concatenate(arrays, axis=axis))


def test_concat_dims_add_and_merge_when_dynamic() -> None:
    assert shape(opset.concat([dyn(-1, 3), dyn(2, -1)], 0)) == [-1, 3]
    assert shape(opset.concat([dyn(-1, 3), dyn(-1, 4)], -1)) == [-1, 7]


@pytest.mark.parametrize(
    ("inputs", "axis", "message"),
    [
        ([[2, 3], [2, 4]], 0, "input 1 dim 1"),
        ([[2, 3], [2, 3, 1]], 0, "one non-zero rank"),
        ([[], []], 0, "axis 0 is out of range for rank 0; a scalar has no axis"),
        ([[2, 3], [2, 3]], 2, "axis 2 is out of range"),
    ],
)
def test_concat_rejects_mismatched_inputs(inputs: list[list[int]], axis: int, message: str) -> None:
    with raises("Concat", message):
        opset.concat([dyn(*s) for s in inputs], axis, name="bad")


def test_concat_rejects_mixed_element_types() -> None:
    with raises("Concat", "share one element type"):
        opset.concat([dyn(2), opset.parameter([2], hs.Type.i32)], 0, name="bad")


def test_split_gives_equal_parts() -> None:
    x = iota(2, 6)
    node, outs = run(lambda p: opset.split(p, -1, 3), x)
    assert [shape(node, i) for i in range(3)] == [[2, 2]] * 3
    for out, expected in zip(outs, np.split(x, 3, axis=1)):
        np.testing.assert_array_equal(out, expected)
    assert shape(opset.split(dyn(-1, 6), 0, 2), 1) == [-1, 6]
    assert shape(opset.split(dyn(4, 6), opset.parameter([], hs.Type.i64), 2)) == [-1, -1]


def test_variadic_split_fills_one_minus_one() -> None:
    x = iota(3, 7)
    node, outs = run(lambda p: opset.variadic_split(p, 1, [2, -1, 0, 1]), x)
    assert [shape(node, i) for i in range(4)] == [[3, 2], [3, 4], [3, 0], [3, 1]]
    for out, expected in zip(outs, [x[:, :2], x[:, 2:6], x[:, 6:6], x[:, 6:]]):
        np.testing.assert_array_equal(out, expected)
    dynamic = opset.variadic_split(dyn(-1, 5), 0, [1, -1])
    assert [shape(dynamic, i) for i in range(2)] == [[1, 5], [-1, 5]]


@pytest.mark.parametrize(
    ("build", "node_type", "message"),
    [
        (lambda x: opset.split(x, 1, 4, name="bad"), "Split", "not divisible by num_splits=4"),
        (lambda x: opset.split(x, [1], 2, name="bad"), "Split", "axis must be a scalar"),
        (lambda x: opset.split(x, 2, 2, name="bad"), "Split", "axis 2 is out of range"),
        (lambda x: opset.split(x, 1, 0, name="bad"), "Split", "num_splits=0"),
        (lambda x: opset.variadic_split(x, 1, [-1, -1], name="bad"), "VariadicSplit", "at most one -1"),
        (lambda x: opset.variadic_split(x, 1, [2, 3], name="bad"), "VariadicSplit", "do not add up"),
        (lambda x: opset.variadic_split(x, 1, [7, -1], name="bad"), "VariadicSplit", "do not add up"),
    ],
)
def test_splits_reject_bad_input(build: Callable[[hs.Node], hs.Node], node_type: str, message: str) -> None:
    with raises(node_type, message):
        build(dyn(3, 6))


# -- Slice, StridedSlice --------------------------------------------------------------------------

bounds = st.one_of(st.integers(-7, 7), st.sampled_from([INT64_MAX, INT64_MIN]))


@FAST
@given(dims=hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=5), data=st.data())
def test_random_slices_match_numpy_slicing(dims: tuple[int, ...], data: st.DataObject) -> None:
    axes = data.draw(st.lists(st.integers(0, len(dims) - 1), min_size=1, unique=True))
    start, stop = (
        data.draw(st.lists(bounds, min_size=len(axes), max_size=len(axes))),
        data.draw(st.lists(bounds, min_size=len(axes), max_size=len(axes))),
    )
    step = data.draw(st.lists(st.integers(-3, 3).filter(bool), min_size=len(axes), max_size=len(axes)))
    x = iota(*dims)
    index = [slice(None)] * len(dims)
    for a, b, e, s in zip(axes, start, stop, step):
        index[a] = slice(b, e, s)
    signed = [a - len(dims) if data.draw(st.booleans()) else a for a in axes]
    node, (out,) = run(lambda p: opset.slice(p, start, stop, step, signed), x)
    np.testing.assert_array_equal(out, x[tuple(index)])
    assert shape(node) == list(out.shape)


def test_slice_defaults_axes_and_keeps_dynamic_dims_dynamic() -> None:
    x = iota(4, 5)
    _, (out,) = run(lambda p: opset.slice(p, [1, -1], [3, 0], [1, -2]), x)
    np.testing.assert_array_equal(out, x[1:3, -1:0:-2])
    assert shape(opset.slice(dyn(-1, 5), [1], [3], [1], [1])) == [-1, 2]
    assert shape(opset.slice(dyn(4, 5), opset.parameter([1], hs.Type.i64), [3], [1], [1])) == [4, -1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([0], [2], [0]), "must not contain 0"),
        (([0, 0], [1, 1], [1, 1], [1, -1]), "must be unique"),
        (([0], [1, 2], [1]), "one length"),
        (([0], [1], [1], [2]), "axes value 2 is out of range"),
    ],
)
def test_slice_rejects_bad_input(args: tuple[list[int], ...], message: str) -> None:
    with raises("Slice", message):
        opset.slice(dyn(3, 4), *args, name="bad")


@st.composite
def strided_slices(draw: st.DrawFn) -> tuple[tuple[int, ...], list[list[int]], dict[str, list[int]]]:
    dims = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
    count = draw(st.integers(1, len(dims) + 1))
    kinds = draw(
        st.lists(st.sampled_from(["slice", "slice", "new", "shrink", "ellipsis"]), min_size=count, max_size=count)
    )
    if kinds.count("ellipsis") > 1:
        kinds = [k if k != "ellipsis" or i == kinds.index("ellipsis") else "slice" for i, k in enumerate(kinds)]
    while sum(k in ("slice", "shrink") for k in kinds) > len(dims):
        kinds[kinds.index("slice") if "slice" in kinds else kinds.index("shrink")] = "new"
    dim_of, position = [], 0
    for kind in kinds:  # the data dimension each entry indexes, for in-range shrink indices
        if kind == "ellipsis":
            position += len(dims) - sum(k in ("slice", "shrink") for k in kinds)
        dim_of.append(position if kind in ("slice", "shrink") else None)
        position += kind in ("slice", "shrink")
    begin = [draw(st.integers(-dims[d], dims[d] - 1)) if k == "shrink" else draw(bounds) for k, d in zip(kinds, dim_of)]
    end = draw(st.lists(bounds, min_size=count, max_size=count))
    strides = draw(st.lists(st.integers(-3, 3).filter(bool), min_size=count, max_size=count))
    masks = {
        "begin_mask": draw(st.lists(st.integers(0, 1), min_size=count, max_size=count)),
        "end_mask": draw(st.lists(st.integers(0, 1), min_size=count, max_size=count)),
        "new_axis_mask": [int(k == "new") for k in kinds],
        "shrink_axis_mask": [int(k == "shrink") for k in kinds],
        "ellipsis_mask": [int(k == "ellipsis") for k in kinds],
    }
    return dims, [begin, end, strides], masks


@FAST
@given(case=strided_slices())
def test_random_strided_slices_match_numpy_indexing(
    case: tuple[tuple[int, ...], list[list[int]], dict[str, list[int]]],
) -> None:
    dims, (begin, end, strides), masks = case
    index: list[Any] = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        if masks["ellipsis_mask"][i]:
            index.append(Ellipsis)
        elif masks["new_axis_mask"][i]:
            index.append(np.newaxis)
        elif masks["shrink_axis_mask"][i]:
            index.append(b)
        else:
            index.append(slice(None if masks["begin_mask"][i] else b, None if masks["end_mask"][i] else e, s))
    x = iota(*dims)
    node, (out,) = run(lambda p: opset.strided_slice(p, begin, end, strides, **masks), x)
    np.testing.assert_array_equal(out, x[tuple(index)])
    assert shape(node) == list(out.shape)


def test_strided_slice_examples_with_masks_and_dynamic_dims() -> None:
    x = iota(2, 3, 4)
    _, (out,) = run(
        lambda p: opset.strided_slice(
            p, [1, 0, -1], [0, 0, 0], [1, 1, 1], [0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]
        ),
        x,
    )
    np.testing.assert_array_equal(out, x[1:, np.newaxis, -1])
    _, (out,) = run(lambda p: opset.strided_slice(p, [0, 1], [0, 3], None, [0, 0], [0, 0], ellipsis_mask=[1]), x)
    np.testing.assert_array_equal(out, x[..., 1:3])
    assert shape(opset.strided_slice(dyn(-1, 4), [0, 1], [0, 3], [1, 1], [1, 0], [1, 0])) == [-1, 2]
    unknown_end = opset.parameter([2], hs.Type.i64)
    assert shape(opset.strided_slice(dyn(5, 4), [1, 0], unknown_end, [1, 1], [0, 0], [1, 0])) == [4, -1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([0, 0], [1, 1], [1, 0], [0, 0], [0, 0]), "must not contain 0"),
        (([0, 0], [1, 1], [1, 1], [0, 0], [0, 0], [], [], [1, 1]), "one bit at most"),
        (([0, 0, 0], [1, 1, 1], [1, 1, 1], [0], [0]), "3 dimensions are indexed"),
        (([5], [6], [1], [0], [0], [], [1]), "shrink_axis_mask takes index 5"),
        (([0], [1], [1], [2], [0]), "only 0 and 1"),
        (([0], [1, 2], [1], [0], [0]), "one length"),
    ],
)
def test_strided_slice_rejects_bad_input(args: tuple[Any, ...], message: str) -> None:
    with raises("StridedSlice", message):
        opset.strided_slice(dyn(3, 4), *args, name="bad")


# -- Gather ---------------------------------------------------------------------------------------


@FAST
@given(dims=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), data=st.data())
def test_gather_matches_numpy_take_with_negative_indices(dims: tuple[int, ...], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(dims), len(dims) - 1))
    size = dims[axis]
    index_shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    indices = data.draw(hnp.arrays(np.int64, index_shape, elements=st.integers(-size, size - 1)))
    x = iota(*dims)
    node, (out,) = run(lambda p: opset.gather(p, indices, axis), x)
    np.testing.assert_array_equal(out, np.take(x, indices, axis=axis))
    assert shape(node) == list(out.shape)


def test_gather_fills_out_of_range_indices_with_zeros() -> None:
    x = iota(2, 3) + 1
    _, (out,) = run(lambda p: opset.gather(p, np.array([0, 5, -1, -4], np.int32), 1), x)
    np.testing.assert_array_equal(out, [[1, 0, 3, 0], [4, 0, 6, 0]])


def test_gather_with_batch_dims_takes_per_batch() -> None:
    x = iota(2, 3, 4)
    indices = np.array([[0, 2], [1, -1]])
    expected = np.stack([x[b][:, indices[b]] for b in range(2)])  # batch b gathers along its own axis 1
    node, (out,) = run(lambda p: opset.gather(p, indices, 2, batch_dims=1), x)
    assert shape(node) == [2, 3, 2]
    np.testing.assert_array_equal(out, expected)
    _, (out,) = run(lambda p: opset.gather(p, indices, -2, batch_dims=-1), x)
    np.testing.assert_array_equal(out, np.stack([x[b][indices[b]] for b in range(2)]))


def test_gather_shapes_with_dynamic_dims_and_unknown_axis() -> None:
    indices = opset.parameter([-1, 5], hs.Type.i64)
    assert shape(opset.gather(dyn(-1, 3, 4), indices, 1)) == [-1, -1, 5, 4]
    assert shape(opset.gather(dyn(2, 3, 4), [1, 0], opset.parameter([], hs.Type.i64))) == [-1, -1, -1]
    assert shape(opset.gather(dyn(2, 3), 1, 0)) == [3]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda x: opset.gather(x, [0], 2, name="bad"), "axis 2 is out of range"),
        (lambda x: opset.gather(x, np.array([0.0]), 0, name="bad"), "indices has element type f64"),
        (lambda x: opset.gather(x, [[0], [1], [2]], 1, batch_dims=1, name="bad"), "batch dim 0"),
        (lambda x: opset.gather(x, [[0, 1], [1, 0]], 0, batch_dims=1, name="bad"), "must not exceed axis 0"),
        (lambda x: opset.gather(x, [0], 1, batch_dims=3, name="bad"), "batch_dims=3 is out of range"),
        (lambda x: opset.gather(x, [0], [[1]], name="bad"), "axis must be a scalar"),
    ],
)
def test_gather_rejects_bad_input(build: Callable[[hs.Node], hs.Node], message: str) -> None:
    with raises("Gather", message):
        build(dyn(2, 3))


# -- Pad ------------------------------------------------------------------------------------------


@FAST
@given(
    dims=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
    mode=st.sampled_from(["constant", "edge", "reflect", "symmetric"]),
    data=st.data(),
)
def test_positive_pads_match_numpy_pad(dims: tuple[int, ...], mode: str, data: st.DataObject) -> None:
    limit = {"reflect": -1, "symmetric": 0}.get(mode, 3)
    widths = [
        (data.draw(st.integers(0, min(3, d + limit))), data.draw(st.integers(0, min(3, d + limit)))) for d in dims
    ]
    x = iota(*dims)
    begin, end = [w[0] for w in widths], [w[1] for w in widths]
    value = np.float32(-1.5) if mode == "constant" else None
    node, (out,) = run(lambda p: opset.pad(p, begin, end, mode, value), x)
    expected = np.pad(x, widths, mode=mode, **({"constant_values": -1.5} if mode == "constant" else {}))
    np.testing.assert_array_equal(out, expected)
    assert shape(node) == list(out.shape)


SPEC_DATA = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], np.float32)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("constant", [[0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [2, 3, 4, 0, 0, 0], [6, 7, 8, 0, 0, 0]]),
        ("edge", [[2, 3, 4, 4, 4, 4], [2, 3, 4, 4, 4, 4], [2, 3, 4, 4, 4, 4], [6, 7, 8, 8, 8, 8]]),
        ("reflect", [[10, 11, 12, 11, 10, 9], [6, 7, 8, 7, 6, 5], [2, 3, 4, 3, 2, 1], [6, 7, 8, 7, 6, 5]]),
        ("symmetric", [[6, 7, 8, 8, 7, 6], [2, 3, 4, 4, 3, 2], [2, 3, 4, 4, 3, 2], [6, 7, 8, 8, 7, 6]]),
    ],
)
def test_mixed_pads_crop_and_pad_as_in_the_openvino_spec_example(mode: str, expected: list[list[int]]) -> None:
    node, (out,) = run(lambda p: opset.pad(p, [2, -1], [-1, 3], mode), SPEC_DATA)
    assert shape(node) == [4, 6]
    np.testing.assert_array_equal(out, expected)


def test_pads_that_crop_everything_give_an_empty_dim() -> None:
    node, (out,) = run(lambda p: opset.pad(p, [-1, -3], [-1, -3], "constant"), SPEC_DATA)
    assert shape(node) == [1, 0]
    assert out.shape == (1, 0)


def test_pad_shapes_with_dynamic_dims_and_unknown_pads() -> None:
    assert shape(opset.pad(dyn(-1, 3), [1, 1], [1, 2])) == [-1, 6]
    assert shape(opset.pad(dyn(2, 3), opset.parameter([2], hs.Type.i64), [1, 1])) == [-1, -1]


@pytest.mark.parametrize(
    ("data", "begin", "end", "mode", "message"),
    [
        ([3, 4], [0, 4], [0, 0], "reflect", "cannot pad dimension 1"),
        ([3, 4], [0, 0], [0, 5], "symmetric", "cannot pad dimension 1"),
        ([0, 4], [1, 0], [0, 0], "edge", "cannot pad dimension 0"),
        ([3, 4], [1], [1], "constant", "one value per dimension"),
        ([3, 4], [1, 1], [1, 1], "wrap", "pad_mode='wrap'"),
    ],
)
def test_pad_rejects_bad_input(data: list[int], begin: list[int], end: list[int], mode: str, message: str) -> None:
    with raises("Pad", message):
        opset.pad(dyn(*data), begin, end, mode, name="bad")


def test_pad_value_must_be_a_scalar_of_the_data_type() -> None:
    with raises("Pad", "share one element type"):
        opset.pad(dyn(2), [1], [1], "constant", np.int32(0), name="bad")
    with raises("Pad", "pad_value has rank 1"):
        opset.pad(dyn(2), [1], [1], "constant", np.zeros(1, np.float32), name="bad")
