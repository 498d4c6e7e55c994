"""Shape manipulation ops on XLA match the reference: reshapes, slices, gathers, pads, broadcasts..."""

from __future__ import annotations

import numpy as np
from hetero_sdk import Type, opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, build, check_against_reference, floats, ints, many_ops, param, run_xla, shapes, single_op


@OPS
@given(data=st.data(), shape=shapes(min_dims=1, max_dims=4, max_side=4))
def test_reshape_transpose_squeeze_unsqueeze_tile(data: st.DataObject, shape: tuple[int, ...]) -> None:
    x = data.draw(floats(shape))
    px = param(x)
    rank = len(shape)
    order = data.draw(st.permutations(range(rank)))
    keep = data.draw(st.integers(0, rank - 1))
    pattern = [0] * keep + [-1]
    repeats = data.draw(st.lists(st.integers(0, 3), max_size=rank + 1))
    axes = data.draw(st.lists(st.integers(-(rank + 1), rank), min_size=1, max_size=2, unique=True))
    nodes = [
        opset.reshape(px, pattern, special_zero=True, name="reshape"),
        opset.reshape(px, [int(np.prod(shape))], special_zero=False, name="flatten"),
        opset.transpose(px, list(order), name="transpose"),
        opset.transpose(px, [], name="reverse"),
        opset.squeeze(opset.unsqueeze(px, [0]), [0], name="squeeze"),
        opset.squeeze(px, name="squeeze_all"),
        opset.tile(px, repeats, name="tile"),
    ]
    nodes.append(build(opset.unsqueeze, px, axes, name="unsqueeze"))
    check_against_reference(many_ops(nodes, [px]), [x])


@OPS
@given(data=st.data(), shape=shapes(min_dims=1, max_dims=3, min_side=1, max_side=6))
def test_concat_split_variadic_split(data: st.DataObject, shape: tuple[int, ...]) -> None:
    x, y = data.draw(ints(shape, np.int32)), data.draw(ints(shape, np.int32))
    px, py = param(x, "x"), param(y, "y")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    size = shape[axis]
    parts = data.draw(st.sampled_from([d for d in range(1, size + 1) if size % d == 0]))
    first = data.draw(st.integers(0, size))
    nodes = [
        opset.concat([px, py, px], axis, name="concat"),
        opset.split(px, axis, parts, name="split"),
        opset.variadic_split(py, axis, [first, -1], name="variadic"),
    ]
    check_against_reference(many_ops(nodes, [px, py]), [x, y])


@st.composite
def bound(draw: st.DrawFn, size: int) -> int:
    return draw(st.one_of(st.integers(-size - 2, size + 2), st.sampled_from([2**62, -(2**62)])))


@OPS
@given(data=st.data(), shape=shapes(min_dims=1, max_dims=3, min_side=1, max_side=6))
def test_slice_and_strided_slice_follow_python_slicing(data: st.DataObject, shape: tuple[int, ...]) -> None:
    x = data.draw(floats(shape))
    px = param(x)
    rank = len(shape)
    axes = data.draw(st.lists(st.integers(-rank, rank - 1), min_size=1, max_size=rank, unique_by=lambda a: a % rank))
    start = [data.draw(bound(shape[a])) for a in axes]
    stop = [data.draw(bound(shape[a])) for a in axes]
    step = [data.draw(st.sampled_from([-3, -2, -1, 1, 2, 3])) for _ in axes]
    count = data.draw(st.integers(1, rank))
    masks = {
        name: data.draw(st.lists(st.integers(0, 1), min_size=count, max_size=count))
        for name in ("begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask")
    }
    begin = [data.draw(st.integers(-shape[i], shape[i] - 1)) for i in range(count)]
    end = [data.draw(bound(shape[i])) for i in range(count)]
    strides = [data.draw(st.sampled_from([-2, -1, 1, 2])) for _ in range(count)]
    nodes = [opset.slice(px, start, stop, step, axes, name="slice")]
    nodes.append(build(opset.strided_slice, px, begin, end, strides, name="strided", **masks))
    check_against_reference(many_ops(nodes, [px]), [x])


def test_strided_slice_with_ellipsis() -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    px = param(x)
    begin, end, strides, masks = [0, 0, 1], [0, 0, 3], [1, 1, 1], [0, 0, 0]
    node = opset.strided_slice(
        px, begin, end, strides, masks, masks, ellipsis_mask=[0, 1, 0], shrink_axis_mask=[1, 0, 0]
    )
    np.testing.assert_array_equal(run_xla(single_op(node, [px]), [x])[0], x[0, ..., 1:3])


@OPS
@given(
    data=st.data(),
    shape=shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
    index_type=st.sampled_from([np.int32, np.int64]),
)
def test_gather_with_batches_negative_and_out_of_range_indices(
    data: st.DataObject, shape: tuple[int, ...], index_type: type
) -> None:
    x = data.draw(floats(shape))
    rank = len(shape)
    batch = data.draw(st.integers(0, rank - 1))
    axis = data.draw(st.integers(batch, rank - 1))
    size = shape[axis]
    index_shape = tuple(shape[:batch]) + tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    indices = data.draw(ints(index_shape, index_type, -size - 1, size))
    px, pi = param(x, "x"), param(indices, "indices")
    node = opset.gather(px, pi, axis, batch_dims=batch)
    check_against_reference(single_op(node, [px, pi]), [x, indices])


@OPS
@given(data=st.data(), shape=shapes(min_dims=1, max_dims=3, max_side=4))
def test_broadcast_modes(data: st.DataObject, shape: tuple[int, ...]) -> None:
    x = data.draw(floats(shape))
    px = param(x)
    lead = data.draw(st.lists(st.integers(1, 3), max_size=2))
    target = lead + [d if d != 1 else data.draw(st.integers(1, 3)) for d in shape]
    nodes = [
        opset.broadcast(px, target, name="numpy"),
        opset.broadcast(px, [1] * len(shape), mode="bidirectional", name="bidirectional"),
        opset.broadcast(
            px, lead + list(shape), list(range(len(lead), len(lead) + len(shape))), mode="explicit", name="explicit"
        ),
    ]
    check_against_reference(many_ops(nodes, [px]), [x])


@OPS
@given(
    data=st.data(),
    shape=shapes(min_dims=1, max_dims=3, min_side=2, max_side=5),
    mode=st.sampled_from(["constant", "edge", "reflect", "symmetric"]),
)
def test_pad_modes_with_negative_pads(data: st.DataObject, shape: tuple[int, ...], mode: str) -> None:
    x = data.draw(floats(shape))
    limit = {"constant": 3, "edge": 3, "reflect": 1, "symmetric": 2}[mode]
    begin = [data.draw(st.integers(-1, min(limit, d - 1))) for d in shape]
    end = [data.draw(st.integers(-1, min(limit, d - 1))) for d in shape]
    px = param(x)
    node = build(opset.pad, px, begin, end, mode, pad_value=np.float32(2.5) if mode == "constant" else None)
    check_against_reference(single_op(node, [px]), [x])


def test_pad_with_a_runtime_value() -> None:
    x = np.ones((2, 2), np.float32)
    value = np.array(7.0, np.float32)
    px, pv = param(x, "x"), param(value, "value")
    got = run_xla(single_op(opset.pad(px, [1, 0], [0, 1], "constant", pv), [px, pv]), [x, value])[0]
    np.testing.assert_array_equal(got, [[7, 7, 7], [1, 1, 7], [1, 1, 7]])


def test_shape_subgraphs_fold_while_tracing() -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    px = param(x)
    shape = opset.shape_of(px)
    first = opset.gather(shape, [0], 0)
    flat = opset.reshape(px, opset.concat([first, opset.constant(np.array([-1], np.int64))], 0), special_zero=False)
    length = opset.range(0, opset.convert(opset.reduce_prod(shape, [0]), Type.i32), 1, Type.i32, name="iota")
    model = many_ops([flat, length, opset.shape_of(px, Type.i32, name="shape32")], [px])
    got = check_against_reference(model, [x])
    np.testing.assert_array_equal(got[0], x.reshape(2, 12))
    np.testing.assert_array_equal(got[1], np.arange(24, dtype=np.int32))
    np.testing.assert_array_equal(got[2], [2, 3, 4])
