"""Shape ops (Reshape, Squeeze, Unsqueeze, Broadcast, Tile, ShapeOf, Range): shape inference (static,
dynamic, shapes computed with ShapeOf), values against numpy written here, hypothesis over shapes, and
bad input.

The data movement ops are tested in ``test_movement.py``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.graph.limits import FOLDED_ELEMENTS
from hetero_sdk.ops.folding import UNKNOWN, constant_value, partial_value
from hetero_sdk.reference import evaluate

from .shape_helpers import FAST, dyn, iota, raises, run, shape

# -- Reshape --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "pattern", "special_zero", "expected"),
    [
        ([2, 3, 4], [6, -1], False, [6, 4]),
        ([2, 3, 4], [0, -1], True, [2, 12]),
        ([2, 3, 4], [0, 0, -1], True, [2, 3, 4]),
        ([2, 3, 4], [-1], False, [24]),
        ([1], [], False, []),
        ([0, 3], [0, -1], False, [0, 1]),
        ([0, 3], [-1, 5], False, [0, 5]),
        ([0, 3], [0, -1], True, [0, 3]),
        ([-1, 6], [0, 2, -1], True, [-1, 2, 3]),
        ([-1, 6], [2, -1], False, [2, -1]),
        ([-1, 6], [0, 3, 2], True, [-1, 3, 2]),
        ([3, -1], [0, -1], True, [3, -1]),
        ([3, -1], [0, 0, 1], True, [3, -1, 1]),
    ],
)
def test_reshape_infers_zero_and_minus_one(
    data: list[int], pattern: list[int], special_zero: bool, expected: list[int]
) -> None:
    assert shape(opset.reshape(dyn(*data), pattern, special_zero)) == expected


def test_reshape_to_a_shape_computed_with_shape_of_is_static() -> None:
    x = dyn(4, 2, 3)
    batch = opset.slice(opset.shape_of(x), [0], [1], [1])
    assert shape(opset.reshape(x, opset.concat([batch, [-1]], 0), False)) == [4, 6]
    first = opset.gather(opset.shape_of(x, hs.Type.i32), [0], 0)
    assert shape(opset.reshape(x, opset.concat([first, np.array([3, 2], np.int32)], 0), False)) == [4, 3, 2]


def test_reshape_to_an_unknown_pattern_keeps_its_length() -> None:
    pattern = opset.parameter([3], hs.Type.i64)
    assert shape(opset.reshape(dyn(2, 3), pattern, False)) == [-1, -1, -1]


def test_reshape_keeps_the_known_entries_of_a_partly_dynamic_shape() -> None:
    x = dyn(-1, 3, 4)  # ShapeOf is partly known: [?, 3, 4]
    assert shape(opset.reshape(x, opset.shape_of(x), False)) == [-1, 3, 4]
    tail = opset.slice(opset.shape_of(x), [1], [3], [1])
    assert shape(opset.reshape(x, opset.concat([[-1], tail], axis=0), False)) == [-1, 3, 4]
    merged = opset.concat([opset.gather(opset.shape_of(x), [0], 0), [12]], axis=0)
    assert shape(opset.reshape(x, merged, False)) == [-1, 12]
    flat = opset.concat([[2], [-1]], axis=0)
    assert shape(opset.reshape(dyn(4, 3, 2), flat, False)) == [2, 12]


def test_an_entry_picked_from_a_partly_dynamic_shape_is_a_constant() -> None:
    x = dyn(-1, 5)
    last = opset.gather(opset.shape_of(x), -1, 0)
    assert constant_value(last.output(0)) == 5
    np.testing.assert_array_equal(partial_value(opset.shape_of(x).output(0)), [UNKNOWN, 5])
    assert constant_value(opset.gather(opset.shape_of(x), 0, 0).output(0)) is None


@st.composite
def reshapes(draw: st.DrawFn) -> tuple[np.ndarray, list[int], bool, tuple[int, ...]]:
    dims = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=6))
    factors = [p for d in dims for p in _prime_factors(d)]
    factors = draw(st.permutations(factors)) if factors else []
    cuts = sorted(draw(st.lists(st.integers(0, len(factors)), max_size=3)))
    target = [int(np.prod(factors[a:b])) for a, b in zip([0, *cuts], [*cuts, len(factors)])]
    pattern = list(target)
    special_zero = draw(st.booleans())
    if special_zero:
        pattern = [0 if i < len(dims) and t == dims[i] and draw(st.booleans()) else t for i, t in enumerate(pattern)]
    if draw(st.booleans()):
        pattern[draw(st.integers(0, len(pattern) - 1))] = -1
    return np.arange(int(np.prod(dims)), dtype=np.float32).reshape(dims), pattern, special_zero, tuple(target)


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


@FAST
@given(case=reshapes())
def test_random_reshapes_match_numpy(case: tuple[np.ndarray, list[int], bool, tuple[int, ...]]) -> None:
    x, pattern, special_zero, target = case
    node, (out,) = run(lambda p: opset.reshape(p, pattern, special_zero), x)
    assert shape(node) == list(target)
    np.testing.assert_array_equal(out, x.reshape(target))


@pytest.mark.parametrize(
    ("data", "pattern", "special_zero", "message"),
    [
        ([2, 3], [-1, -1], False, "more than one -1"),
        ([2, 3], [-2, 3], False, "has -2"),
        ([2, 3], [4, 2], False, "element counts differ"),
        ([2, 3], [4, -1], False, "do not divide"),
        ([2, 3], [0, -1], False, "do not divide"),
        ([2, 3], [1, 6, 0], True, "copies a dimension"),
    ],
)
def test_reshape_rejects_bad_patterns(data: list[int], pattern: list[int], special_zero: bool, message: str) -> None:
    with raises("Reshape", message):
        opset.reshape(dyn(*data), pattern, special_zero, name="bad")


def test_reshape_rejects_a_pattern_that_is_not_1d() -> None:
    with raises("Reshape", "output_shape has rank 2"):
        opset.reshape(dyn(2, 3), np.array([[6]]), False, name="bad")
    with raises("Reshape", "dynamic length"):
        opset.reshape(dyn(2, 3), opset.parameter([-1], hs.Type.i64), False, name="bad")


# -- Squeeze, Unsqueeze ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "axes", "expected"),
    [
        ([1, 3, 1, 2], [0, 2], [3, 2]),
        ([1, 3, 1, 2], [-2, 0, 0], [3, 2]),
        ([1, 3, 1, 2], 2, [1, 3, 2]),
        ([1, 3, 1, 2], None, [3, 2]),
        ([1, 3, 1, 2], [], [3, 2]),
        ([-1, 3, 1], [0, 2], [3]),
        ([-1, 3, 1], [2], [-1, 3]),
        ([1], [0], []),
    ],
)
def test_squeeze_removes_the_named_unit_dims(data: list[int], axes: Any, expected: list[int]) -> None:
    assert shape(opset.squeeze(dyn(*data), axes)) == expected
    if -1 not in data:
        x = iota(*data)
        _, (out,) = run(lambda p: opset.squeeze(p, axes), x)
        np.testing.assert_array_equal(out, x.reshape(expected))


def test_squeeze_with_unknown_axes_keeps_a_known_rank() -> None:
    assert shape(opset.squeeze(dyn(1, 3, 1), opset.parameter([2], hs.Type.i64))) == [-1]


@pytest.mark.parametrize(
    ("data", "axes", "message"),
    [
        ([1, 3], [1], "cannot squeeze dimension 1 of data \\[1,3\\]: its size is 3"),
        ([1, 3], [2], "axes value 2 is out of range"),
        ([1, -1], None, "without axes"),
        ([1, 3], np.array([[0]]), "axes has rank 2"),
    ],
)
def test_squeeze_rejects_bad_axes(data: list[int], axes: Any, message: str) -> None:
    with raises("Squeeze", message):
        opset.squeeze(dyn(*data), axes, name="bad")


@FAST
@given(dims=hnp.array_shapes(min_dims=0, max_dims=3, max_side=3), data=st.data())
def test_unsqueeze_matches_numpy_expand_dims(dims: tuple[int, ...], data: st.DataObject) -> None:
    rank = len(dims) + data.draw(st.integers(1, 3))
    chosen = data.draw(
        st.lists(st.integers(0, rank - 1), min_size=rank - len(dims), max_size=rank - len(dims), unique=True)
    )
    axes = [a - rank if data.draw(st.booleans()) else a for a in chosen]
    x = iota(*dims)
    node, (out,) = run(lambda p: opset.unsqueeze(p, axes), x)
    expected = np.expand_dims(x, tuple(chosen))
    np.testing.assert_array_equal(out, expected)
    assert shape(node) == list(expected.shape)


def test_unsqueeze_counts_repeated_axes_once_and_keeps_dynamic_dims() -> None:
    assert shape(opset.unsqueeze(dyn(-1, 3), [0, 0, -1])) == [1, -1, 3, 1]
    assert shape(opset.unsqueeze(dyn(-1, 3), opset.parameter([2], hs.Type.i64))) == [-1, -1, -1, -1]
    with raises("Unsqueeze", "axes value 3 is out of range for rank 3"):
        opset.unsqueeze(dyn(2, 3), [3], name="bad")
    with raises("Unsqueeze", "name one output axis twice"):
        opset.unsqueeze(dyn(2), [0, -3], name="bad")


# -- Broadcast, Tile ------------------------------------------------------------------------------


@FAST
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3),
    mode=st.sampled_from(["numpy", "bidirectional"]),
)
def test_broadcast_matches_numpy(shapes: Any, mode: str) -> None:
    data_shape, target = shapes.input_shapes
    if mode == "numpy":
        target = shapes.result_shape
    x = iota(*data_shape)
    node, (out,) = run(lambda p: opset.broadcast(p, list(target), mode=mode), x)
    np.testing.assert_array_equal(out, np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(target))))
    assert shape(node) == list(out.shape)


def test_explicit_broadcast_places_data_dims_by_axes_mapping() -> None:
    x = iota(3)
    node, (out,) = run(lambda p: opset.broadcast(p, [2, 3, 4], [1], mode="EXPLICIT"), x)
    assert shape(node) == [2, 3, 4]
    np.testing.assert_array_equal(out, np.broadcast_to(x[None, :, None], (2, 3, 4)))


def test_broadcast_shapes_with_dynamic_and_unknown_targets() -> None:
    assert shape(opset.broadcast(dyn(-1, 1), [2, 3, 4])) == [2, 3, 4]
    assert shape(opset.broadcast(dyn(-1, 1), [1, 4], mode="bidirectional")) == [-1, 4]
    target = opset.parameter([3], hs.Type.i64)
    assert shape(opset.broadcast(dyn(5, 1), target)) == [-1, 5, -1]
    assert shape(opset.broadcast(dyn(5, 1), target, mode="bidirectional")) == [-1, 5, -1]
    x = dyn(2, 3)
    assert shape(opset.broadcast(dyn(3), opset.shape_of(x))) == [2, 3]


@pytest.mark.parametrize(
    ("data", "args", "mode", "message"),
    [
        ([3, 1], ([1, 1],), "numpy", "does not broadcast"),
        ([3], ([],), "numpy", "fewer than the rank"),
        ([3, 2], ([2, 3],), "bidirectional", "do not broadcast"),
        ([3], ([2, 3], [0]), "explicit", "does not broadcast"),
        ([3], ([2, 3], [2]), "explicit", "axes_mapping"),
        ([3], ([2, 3],), "explicit", "expects 3 input"),
        ([3], ([2, 3],), "pdpd", "mode='pdpd'"),
        ([3], ([-2, 3],), "numpy", "negative"),
    ],
)
def test_broadcast_rejects_bad_input(data: list[int], args: tuple[Any, ...], mode: str, message: str) -> None:
    with raises("Broadcast", message):
        opset.broadcast(dyn(*data), *args, mode=mode, name="bad")


@FAST
@given(dims=hnp.array_shapes(min_dims=0, max_dims=3, max_side=3), repeats=st.lists(st.integers(0, 3), max_size=4))
def test_tile_matches_numpy(dims: tuple[int, ...], repeats: list[int]) -> None:
    x = iota(*dims)
    node, (out,) = run(lambda p: opset.tile(p, np.array(repeats, np.int64)), x)
    np.testing.assert_array_equal(out, np.tile(x, repeats) if repeats else x)
    assert shape(node) == list(out.shape)


def test_tile_shapes_with_dynamic_dims_and_unknown_repeats() -> None:
    assert shape(opset.tile(dyn(-1, 3), [2, 2])) == [-1, 6]
    assert shape(opset.tile(dyn(2, 3, 4), opset.parameter([2], hs.Type.i64))) == [2, -1, -1]
    with raises("Tile", "must be >= 0"):
        opset.tile(dyn(2), [-1], name="bad")


# -- ShapeOf, Range -------------------------------------------------------------------------------


def test_shape_of_gives_the_rank_as_length_and_the_dims_as_values() -> None:
    x = iota(2, 0, 3)
    node, (out,) = run(lambda p: opset.shape_of(p, hs.Type.i32), x)
    assert shape(node) == [3]
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [2, 0, 3])
    assert shape(opset.shape_of(dyn(-1, 4, -1))) == [3]
    assert opset.shape_of(dyn()).get_output_element_type(0) == hs.Type.i64
    with raises("ShapeOf", "output_type"):
        opset.shape_of(dyn(2), hs.Type.f32, name="bad")


@pytest.mark.parametrize(
    ("start", "stop", "step", "output_type", "expected"),
    [
        (0, 5, 1, "i64", [0, 1, 2, 3, 4]),
        (5, 0, -2, "i32", [5, 3, 1]),
        (5, 0, 2, "i64", []),
        (np.float32(0.5), np.float32(5.7), np.float32(1.5), "f32", [0.5, 2.0, 3.5, 5.0]),
        (np.float32(0.5), np.float32(5.7), np.float32(1.5), "i32", [0, 1, 2, 3, 4]),
        (1, 8, 3, "f32", [1.0, 4.0, 7.0]),
    ],
)
def test_range_matches_arange(start: Any, stop: Any, step: Any, output_type: str, expected: list[float]) -> None:
    node = opset.range(start, stop, step, output_type)
    assert shape(node) == [len(expected)]
    (out,) = evaluate(hs.Model([node], []), [])
    assert out.dtype == hs.Type.of(output_type).numpy
    np.testing.assert_allclose(out, expected)


@FAST
@given(start=st.integers(-20, 20), stop=st.integers(-20, 20), step=st.integers(-5, 5).filter(bool))
def test_random_integer_ranges_match_numpy(start: int, stop: int, step: int) -> None:
    node = opset.range(start, stop, step, hs.Type.i64)
    (out,) = evaluate(hs.Model([node], []), [])
    np.testing.assert_array_equal(out, np.arange(start, stop, step))
    assert shape(node) == [len(out)]


def test_range_with_a_computed_stop_is_static_and_unknown_inputs_give_one_dynamic_dim() -> None:
    x = dyn(2, 3, 4)
    rank = opset.gather(opset.shape_of(opset.shape_of(x)), 0, 0)
    assert shape(opset.range(0, rank, 1, hs.Type.i64)) == [3]
    assert shape(opset.range(0, opset.parameter([], hs.Type.i64), 1, hs.Type.i64)) == [-1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0, 5, 0, "i64"), "step is 0"),
        ((np.float32(0), np.float32(5), np.float32(0.5), "i32"), "step is 0"),
        ((np.array([0]), 5, 1, "i64"), "start has rank 1"),
        ((0, 5, 1, "boolean"), "output_type"),
        ((True, 5, 1, "i64"), "start has element type boolean"),
    ],
)
def test_range_rejects_bad_input(args: tuple[Any, ...], message: str) -> None:
    with raises("Range", message):
        opset.range(*args, name="bad")


def test_a_value_reached_by_many_paths_folds_once_per_path_length() -> None:
    """``v = v + v`` 28 times over ``ShapeOf(x)[1]`` (x's first dimension dynamic) has 2**28 paths to the
    ShapeOf; folding computes each node once (it would not finish otherwise) and gets 3 * 2**28."""
    x = opset.parameter([-1, 3], hs.Type.f32, name="x")
    value = opset.gather(opset.shape_of(x), np.int64(1), 0).output(0)
    for _ in range(28):
        value = opset.add(value, value).output(0)
    assert partial_value(value).tolist() == 3 * 2**28
    assert constant_value(value) == 3 * 2**28


def test_a_value_larger_than_folded_elements_is_never_computed_while_building() -> None:
    # 2**40 int64 entries would take 8 TiB: folding checks the inferred output size before evaluating
    huge = opset.range(np.int64(0), np.int64(2**40), np.int64(1), hs.Type.i64)
    assert huge.get_output_partial_shape(0) == [2**40]
    assert constant_value(huge.output(0)) is None
    small = opset.range(np.int64(0), np.int64(FOLDED_ELEMENTS.value), np.int64(1), hs.Type.i64)
    np.testing.assert_array_equal(constant_value(small.output(0)), np.arange(FOLDED_ELEMENTS.value))
