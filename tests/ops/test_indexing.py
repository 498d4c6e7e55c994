"""GatherND, ScatterElementsUpdate, ScatterNDUpdate and ReverseSequence against loops written here,
on TEMPLATE and XLA."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import InferenceError, ModelValidationError

DEVICES = ("TEMPLATE", "XLA")
FOLDS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def _run(node: hs.Node, params: list[hs.Node], feeds: dict[str, np.ndarray], device: str) -> np.ndarray:
    return hs.Core().compile_model(hs.Model([node], params), device)(feeds)["y"]


@settings(max_examples=20, deadline=None)
@given(rank=st.integers(1, 3), seed=st.integers(0, 2**16), data=st.data())
def test_gather_nd_takes_the_slice_at_each_coordinate_tuple(rank: int, seed: int, data: st.DataObject) -> None:
    rng = np.random.default_rng(seed)
    shape = tuple(int(d) for d in rng.integers(1, 4, rank))
    batch = data.draw(st.integers(0, rank - 1))
    k = data.draw(st.integers(1, rank - batch))
    middle = tuple(int(d) for d in rng.integers(1, 3, data.draw(st.integers(0, 2))))
    sizes = np.array(shape[batch : batch + k])
    indices = rng.integers(-sizes, sizes, (*shape[:batch], *middle, k))
    x = rng.standard_normal(shape).astype(np.float32)
    expected = np.empty((*shape[:batch], *middle, *shape[batch + k :]), np.float32)
    for where in itertools.product(*(range(n) for n in expected.shape[: batch + len(middle)])):
        entry = x[where[:batch]]
        expected[where] = entry[tuple(int(i) for i in indices[where])]
    px = opset.parameter(list(shape), hs.Type.f32, name="x")
    for device in DEVICES:
        node = opset.gather_nd(px, indices, batch, name="y")
        np.testing.assert_array_equal(_run(node, [px], {"x": x}, device), expected)


@settings(max_examples=25, deadline=None)
@given(rank=st.integers(1, 3), seed=st.integers(0, 2**16), reduction=st.sampled_from(["none", *FOLDS]))
def test_scatter_elements_update_writes_or_folds_each_update(rank: int, seed: int, reduction: str) -> None:
    rng = np.random.default_rng(seed)
    shape = tuple(int(d) for d in rng.integers(1, 4, rank))
    axis = int(rng.integers(-rank, rank))
    taken = [int(rng.integers(1, d + 1)) for d in shape]
    if reduction == "none":  # one update per position along the axis: which duplicate wins is unspecified
        taken[axis] = shape[axis]
        indices = np.argsort(rng.random(taken), axis=axis) - shape[axis] * rng.integers(0, 2, taken)
    else:
        indices = rng.integers(-shape[axis], shape[axis], taken)
    x = rng.integers(-4, 5, shape).astype(np.float32)
    updates = rng.integers(-4, 5, taken).astype(np.float32)
    expected = x.copy()
    for where in itertools.product(*(range(n) for n in taken)):
        target = list(where)
        target[axis] = int(indices[where]) % shape[axis]
        old = expected[tuple(target)]
        fold = FOLDS.get(reduction)
        expected[tuple(target)] = updates[where] if fold is None else fold(old, updates[where])
    px = opset.parameter(list(shape), hs.Type.f32, name="x")
    pu = opset.parameter(taken, hs.Type.f32, name="u")
    for device in DEVICES:
        node = opset.scatter_elements_update(px, indices, pu, axis, reduction, name="y")
        np.testing.assert_array_equal(_run(node, [px, pu], {"x": x, "u": updates}, device), expected)


@settings(max_examples=25, deadline=None)
@given(rank=st.integers(1, 3), seed=st.integers(0, 2**16), reduction=st.sampled_from(["none", *FOLDS]))
def test_scatter_nd_update_writes_or_folds_each_slice(rank: int, seed: int, reduction: str) -> None:
    rng = np.random.default_rng(seed)
    shape = tuple(int(d) for d in rng.integers(1, 4, rank))
    k = int(rng.integers(1, rank + 1))
    cells = int(np.prod(shape[:k]))
    count = int(rng.integers(1, cells + 1)) if reduction == "none" else int(rng.integers(1, 6))
    flat = rng.choice(cells, count, replace=reduction != "none")
    indices = np.stack(np.unravel_index(flat, shape[:k]), -1) - np.array(shape[:k]) * rng.integers(0, 2, (count, k))
    x = rng.integers(-4, 5, shape).astype(np.float32)
    updates = rng.integers(-4, 5, (count, *shape[k:])).astype(np.float32)
    expected = x.copy()
    for n in range(count):
        target = tuple(int(i) % s for i, s in zip(indices[n], shape))
        fold = FOLDS.get(reduction)
        expected[target] = updates[n] if fold is None else fold(expected[target], updates[n])
    px = opset.parameter(list(shape), hs.Type.f32, name="x")
    pu = opset.parameter(list(updates.shape), hs.Type.f32, name="u")
    for device in DEVICES:
        node = opset.scatter_nd_update(px, indices, pu, reduction, name="y")
        np.testing.assert_array_equal(_run(node, [px, pu], {"x": x, "u": updates}, device), expected)


@settings(max_examples=20, deadline=None)
@given(rank=st.integers(2, 3), seed=st.integers(0, 2**16), data=st.data())
def test_reverse_sequence_reverses_each_prefix(rank: int, seed: int, data: st.DataObject) -> None:
    rng = np.random.default_rng(seed)
    shape = tuple(int(d) for d in rng.integers(1, 5, rank))
    batch_axis = data.draw(st.integers(0, rank - 1))
    seq_axis = data.draw(st.sampled_from([a for a in range(rank) if a != batch_axis]))
    lengths = rng.integers(0, shape[seq_axis] + 1, shape[batch_axis])
    x = rng.standard_normal(shape).astype(np.float32)
    expected = np.moveaxis(x.copy(), (batch_axis, seq_axis), (0, 1))
    for b, n in enumerate(lengths):
        expected[b, :n] = expected[b, :n][::-1]
    expected = np.moveaxis(expected, (0, 1), (batch_axis, seq_axis))
    px = opset.parameter(list(shape), hs.Type.f32, name="x")
    for device in DEVICES:
        node = opset.reverse_sequence(px, lengths, batch_axis, seq_axis, name="y")
        np.testing.assert_array_equal(_run(node, [px], {"x": x}, device), expected)


def test_shape_errors_name_the_node_and_the_fix() -> None:
    px = opset.parameter([3, 2], hs.Type.f32, name="x")
    with pytest.raises(ModelValidationError, match=r"GatherND 'g'.*hold 3 coordinates; data has only 2"):
        opset.gather_nd(px, np.zeros((1, 3), np.int64), name="g")
    with pytest.raises(ModelValidationError, match=r"indices must lie in \[-3, 2\] for coordinate 0"):
        opset.gather_nd(px, np.array([[3, 0]]))
    with pytest.raises(ModelValidationError, match=r"axis 2 is out of range for rank 2"):
        opset.scatter_elements_update(px, np.zeros((3, 2), np.int64), np.zeros((3, 2), np.float32), axis=2)
    with pytest.raises(ModelValidationError, match=r"indices must lie in \[-2, 1\] along axis 1"):
        opset.scatter_elements_update(px, np.full((3, 2), 2), np.zeros((3, 2), np.float32), axis=1)
    with pytest.raises(ModelValidationError, match=r"updates \[2,3\] must have shape \[2,2\]"):
        opset.scatter_nd_update(px, np.zeros((2, 1), np.int64), np.zeros((2, 3), np.float32))
    with pytest.raises(ModelValidationError, match="reduction"):
        opset.scatter_nd_update(px, np.zeros((2, 1), np.int64), np.zeros((2, 2), np.float32), reduction="mean")
    with pytest.raises(ModelValidationError, match="batch_axis and seq_axis must differ"):
        opset.reverse_sequence(px, np.array([1, 1, 1]), 0, 0)
    with pytest.raises(ModelValidationError, match=r"seq_lengths must lie in \[0, 2\]"):
        opset.reverse_sequence(px, np.array([1, 3, 1]), 0, 1)


def test_template_names_the_node_for_indices_out_of_range_at_run_time() -> None:
    px = opset.parameter([3, 2], hs.Type.f32, name="x")
    pi = opset.parameter([1, 2], hs.Type.i64, name="i")
    node = opset.scatter_elements_update(px, pi, np.ones((1, 2), np.float32), name="y")
    compiled = hs.Core().compile_model(hs.Model([node], [px, pi]), "TEMPLATE")
    with pytest.raises(InferenceError, match=r"ScatterElementsUpdate 'y': indices must lie in \[-3, 2\]"):
        compiled({"x": np.zeros((3, 2), np.float32), "i": np.array([[0, 5]])})
