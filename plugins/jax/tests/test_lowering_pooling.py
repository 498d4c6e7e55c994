"""MaxPool (values and indices) and AvgPool on XLA match the reference."""

from __future__ import annotations

import hetero_sdk as hs
import numpy as np
from hetero_sdk import Type, opset
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from xla_helpers import OPS, build, check_against_reference, floats, ints, many_ops, param, run_xla, single_op


@st.composite
def pool_geometry(draw: st.DrawFn, rank: int) -> dict[str, object]:
    kernel = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    return {
        "strides": draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank)),
        "pads_begin": [draw(st.integers(0, k - 1)) for k in kernel],
        "pads_end": [draw(st.integers(0, k - 1)) for k in kernel],
        "kernel_shape": kernel,
        "rounding_type": draw(st.sampled_from(["floor", "ceil"])),
        "auto_pad": draw(st.sampled_from(["explicit", "same_upper", "same_lower", "valid"])),
    }


@OPS
@given(data=st.data(), rank=st.integers(1, 3), dtype=st.sampled_from([np.float32, np.int8, np.float16]))
def test_max_pool_values_and_indices(data: st.DataObject, rank: int, dtype: type) -> None:
    shape = (
        data.draw(st.integers(1, 2)),
        data.draw(st.integers(1, 3)),
        *(data.draw(st.integers(2, 6)) for _ in range(rank)),
    )
    if np.dtype(dtype).kind == "f":
        x = data.draw(floats(shape, dtype, -5, 5))
    else:
        x = data.draw(ints(shape, dtype, -128, -120))  # many ties, and the lowest value itself
    geometry = data.draw(pool_geometry(rank))
    dilations = data.draw(st.lists(st.integers(1, 2), min_size=rank, max_size=rank))
    px = param(x)
    nodes = [
        build(
            opset.max_pool, px, dilations=dilations, axis=axis, index_element_type=index, name=f"pool{axis}", **geometry
        )
        for axis, index in ((0, Type.i64), (2, Type.i32))
    ]
    check_against_reference(many_ops(nodes, [px]), [x])


@OPS
@given(data=st.data(), rank=st.integers(1, 3), exclude_pad=st.booleans(), dtype=st.sampled_from([np.float32, np.uint8]))
def test_avg_pool(data: st.DataObject, rank: int, exclude_pad: bool, dtype: type) -> None:
    shape = (1, data.draw(st.integers(1, 3)), *(data.draw(st.integers(2, 6)) for _ in range(rank)))
    x = data.draw(floats(shape, dtype, -5, 5) if dtype == np.float32 else ints(shape, dtype))
    geometry = data.draw(pool_geometry(rank))
    px = param(x)
    node = build(opset.avg_pool, px, exclude_pad=exclude_pad, **geometry)
    check_against_reference(single_op(node, [px]), [x], rtol=1e-5, atol=1e-5)


def test_max_pool_closed_form() -> None:
    x = np.array([[[[1, 5, 2], [4, 3, 9], [0, 8, 7]]]], np.float32)
    px = param(x)
    node = opset.max_pool(px, [1, 1], [1, 1], [0, 0], [0, 0], [2, 2])
    values, indices = run_xla(single_op(node, [px]), [x])
    np.testing.assert_array_equal(values[0, 0], [[5, 9], [8, 9]])
    np.testing.assert_array_equal(indices[0, 0], [[1, 5], [7, 5]])


def test_max_pool_ignores_nan() -> None:
    x = np.array([[[np.nan, 2.0, np.nan, np.nan]]], np.float32)
    px = param(x)
    node = opset.max_pool(px, [2], [1], [0], [0], [2])
    values, indices = run_xla(single_op(node, [px]), [x])
    np.testing.assert_array_equal(values[0, 0], [2.0, np.finfo(np.float32).min])
    np.testing.assert_array_equal(indices[0, 0], [1, 0])


def _nan_skipping_max_pool(x: np.ndarray, kernel, strides, dilations, pads) -> tuple[np.ndarray, np.ndarray]:
    """2-D max pool written as loops: NaN and padding never win, the first tap holding the maximum
    does, a window without a number gives the lowest value and index 0 (indices within the plane)."""
    height, width = x.shape[2:]
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    out = [(size + b + e - extent) // s + 1 for size, (b, e), extent, s in zip((height, width), pads, extents, strides)]
    lowest = np.finfo(x.dtype).min
    values = np.full((*x.shape[:2], *out), lowest, x.dtype)
    indices = np.zeros(values.shape, np.int64)
    for n, c, i, j in np.ndindex(*values.shape):
        for ti, tj in np.ndindex(*kernel):
            row = i * strides[0] - pads[0][0] + ti * dilations[0]
            col = j * strides[1] - pads[1][0] + tj * dilations[1]
            if 0 <= row < height and 0 <= col < width and x[n, c, row, col] > values[n, c, i, j]:
                values[n, c, i, j], indices[n, c, i, j] = x[n, c, row, col], row * width + col
    return values, indices


@OPS
@given(data=st.data(), read_indices=st.booleans())
def test_max_pool_skips_nan_as_a_loop_written_here(data: st.DataObject, read_indices: bool) -> None:
    shape = (1, data.draw(st.integers(1, 2)), data.draw(st.integers(2, 7)), data.draw(st.integers(2, 7)))
    x = data.draw(floats(shape, np.float32, -5, 5))
    x[data.draw(hnp.arrays(np.bool_, shape))] = np.nan
    kernel = data.draw(st.lists(st.integers(1, 3), min_size=2, max_size=2))
    strides = data.draw(st.lists(st.integers(1, 2), min_size=2, max_size=2))
    dilations = data.draw(st.lists(st.integers(1, 2), min_size=2, max_size=2))
    pads = [(data.draw(st.integers(0, k - 1)), data.draw(st.integers(0, k - 1))) for k in kernel]
    px = param(x)
    node = build(
        opset.max_pool, px, strides, dilations, [b for b, _ in pads], [e for _, e in pads], kernel, axis=2,
        index_element_type=Type.i64,
    )  # fmt: skip
    outputs = node.outputs() if read_indices else [node.output(0)]
    results = run_xla(hs.Model(outputs, [px]), [x])
    values, indices = _nan_skipping_max_pool(x, kernel, strides, dilations, pads)
    np.testing.assert_array_equal(results[0], values)
    if read_indices:
        np.testing.assert_array_equal(results[1], indices)


def test_avg_pool_divisor_closed_form() -> None:
    x = np.ones((1, 1, 3, 3), np.float32)
    px = param(x)
    include = opset.avg_pool(px, [1, 1], [1, 1], [1, 1], [3, 3], exclude_pad=False, name="include")
    exclude = opset.avg_pool(px, [1, 1], [1, 1], [1, 1], [3, 3], exclude_pad=True, name="exclude")
    got_include, got_exclude = run_xla(many_ops([include, exclude], [px]), [x])
    assert got_include[0, 0, 0, 0] == np.float32(4 / 9)
    np.testing.assert_array_equal(got_exclude, np.ones((1, 1, 3, 3), np.float32))


@OPS
@given(
    data=st.data(),
    kernel=st.tuples(st.integers(5, 9), st.integers(5, 9)),
    pad=st.integers(0, 2),
    exclude_pad=st.booleans(),
)
def test_avg_pool_of_many_taps_matches_numpy(
    data: st.DataObject, kernel: tuple[int, int], pad: int, exclude_pad: bool
) -> None:
    """Kernels of 25 to 81 taps, on either side of the sliced form's limit (49), pads counted or not,
    against window means written here."""
    x = data.draw(floats((1, 2, 9, 10), low=-2, high=2))
    px = param(x)
    got = run_xla(single_op(opset.avg_pool(px, [1, 1], [pad, pad], [pad, pad], list(kernel), exclude_pad), [px]), [x])
    padded = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    inside = np.pad(np.ones(x.shape[2:]), pad)
    rows, cols = padded.shape[2] - kernel[0] + 1, padded.shape[3] - kernel[1] + 1
    expected = np.zeros((1, 2, rows, cols))
    for i in range(rows):
        for j in range(cols):
            window = padded[:, :, i : i + kernel[0], j : j + kernel[1]].sum(axis=(2, 3))
            count = (
                inside[i : i + kernel[0], j : j + kernel[1]].sum() if exclude_pad or not pad else kernel[0] * kernel[1]
            )
            expected[:, :, i, j] = window / count
    np.testing.assert_allclose(got[0], expected, rtol=1e-5, atol=1e-5)


@OPS
@given(data=st.data(), rank=st.integers(1, 3), exclude_pad=st.booleans())
def test_pooling_of_a_channels_last_convolution_result(data: st.DataObject, rank: int, exclude_pad: bool) -> None:
    """MaxPool (values, and indices counting [N, C, ...] positions) and AvgPool of a convolution's
    result, which the lowering holds channels-last: an identity 1x1 convolution, so that the pooled
    values (small integers: many ties) are exact."""
    channels = data.draw(st.integers(1, 6))
    shape = (data.draw(st.integers(1, 2)), channels, *(data.draw(st.integers(2, 6)) for _ in range(rank)))
    x = data.draw(ints(shape, np.int8, -3, 3)).astype(np.float32)
    geometry = data.draw(pool_geometry(rank))
    dilations = data.draw(st.lists(st.integers(1, 2), min_size=rank, max_size=rank))
    px = param(x)
    identity = np.eye(channels, dtype=np.float32).reshape(channels, channels, *[1] * rank)
    held = opset.convolution(px, identity, [1] * rank, [0] * rank, [0] * rank, [1] * rank)
    nodes = [
        build(opset.max_pool, held, dilations=dilations, axis=axis, name=f"pool{axis}", **geometry) for axis in (0, 2)
    ]
    nodes.append(build(opset.avg_pool, held, exclude_pad=exclude_pad, name="mean", **geometry))
    check_against_reference(many_ops(nodes, [px]), [x], rtol=1e-5, atol=1e-5)


def test_max_pool_keeps_the_first_of_equal_zeros_in_row_major_order() -> None:
    """-0.0 at (0, 1) and 0.0 at (1, 0) of a 2x2 window, everything else negative: the first tap in
    row-major order holding the maximum wins (-0.0), with or without the indices read."""
    x = np.full((1, 1, 2, 2), -1.0, np.float32)
    x[0, 0, 0, 1], x[0, 0, 1, 0] = -0.0, 0.0
    px = param(x)
    node = opset.max_pool(px, [1, 1], [1, 1], [0, 0], [0, 0], [2, 2])
    (alone,) = run_xla(hs.Model([node.output(0)], [px]), [x])
    values, indices = run_xla(single_op(node, [px]), [x])
    for got in (alone, values):
        assert got.shape == (1, 1, 1, 1) and got[0, 0, 0, 0] == 0 and np.signbit(got[0, 0, 0, 0])
    assert indices[0, 0, 0, 0] == 1
