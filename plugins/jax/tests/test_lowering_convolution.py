"""Convolution, GroupConvolution and ConvolutionBackpropData on XLA match the reference (1D to 3D); so do
Col2Im and DeformableConvolution."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from hetero_sdk import opset
from hypothesis import assume, given
from hypothesis import strategies as st
from xla_helpers import OPS, build, check_against_reference, floats, ints, param, run_xla, single_op

from hetero_sdk_jax.lowering.convolution import (
    depthwise_conv,
    few_channel_conv,
    line_axis,
    line_conv,
    pointwise,
    pointwise_conv,
)

AUTO_PADS = ["explicit", "same_upper", "same_lower", "valid"]


def _read(w: np.ndarray) -> jnp.ndarray:
    """A filter ``[O, I, ...]`` in the layout the lowering's routes read, ``[..., I, O]``."""
    return jnp.asarray(np.transpose(w, (*range(2, w.ndim), 1, 0)))


@st.composite
def window(draw: st.DrawFn, rank: int, negative_pads: bool = True) -> dict[str, list[int]]:
    low = -1 if negative_pads else 0
    return {
        "strides": draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank)),
        "dilations": draw(st.lists(st.integers(1, 2), min_size=rank, max_size=rank)),
        "pads_begin": draw(st.lists(st.integers(low, 2), min_size=rank, max_size=rank)),
        "pads_end": draw(st.lists(st.integers(low, 2), min_size=rank, max_size=rank)),
    }


@OPS
@given(data=st.data(), rank=st.integers(1, 3), groups=st.integers(1, 3), auto_pad=st.sampled_from(AUTO_PADS))
def test_convolution_and_group_convolution(data: st.DataObject, rank: int, groups: int, auto_pad: str) -> None:
    spatial = tuple(data.draw(st.integers(3, 7)) for _ in range(rank))
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(rank))
    c_in, c_out, batch = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))
    geometry = data.draw(window(rank))
    x = data.draw(floats((batch, groups * c_in, *spatial), low=-2, high=2))
    grouped = data.draw(floats((groups, c_out, c_in, *kernel), low=-2, high=2))
    px = param(x)
    nodes = [build(opset.group_convolution, px, grouped, auto_pad=auto_pad, name="group", **geometry)]
    if groups == 1:
        nodes.append(build(opset.convolution, px, grouped[0], auto_pad=auto_pad, name="conv", **geometry))
    from xla_helpers import many_ops

    check_against_reference(many_ops(nodes, [px]), [x], rtol=1e-5, atol=1e-5)


@OPS
@given(data=st.data(), dtype=st.sampled_from([np.int32, np.int8, np.float16]))
def test_convolution_of_other_types(data: st.DataObject, dtype: type) -> None:
    if np.dtype(dtype).kind == "i":
        x, w = data.draw(ints((1, 2, 5, 5), dtype, -20, 20)), data.draw(ints((3, 2, 3, 3), dtype, -20, 20))
    else:
        x, w = data.draw(floats((1, 2, 5, 5), dtype, -2, 2)), data.draw(floats((3, 2, 3, 3), dtype, -2, 2))
    px = param(x)
    model = single_op(opset.convolution(px, w, [1, 1], [1, 0], [0, 1], [1, 1]), [px])
    check_against_reference(model, [x], rtol=2e-3, atol=1e-2)


@OPS
@given(data=st.data(), rank=st.integers(1, 3), auto_pad=st.sampled_from(AUTO_PADS), with_shape=st.booleans())
def test_convolution_backprop_data(data: st.DataObject, rank: int, auto_pad: str, with_shape: bool) -> None:
    spatial = tuple(data.draw(st.integers(1, 5)) for _ in range(rank))
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(rank))
    c_in, c_out = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    geometry = data.draw(window(rank, negative_pads=False))
    strides = geometry["strides"]
    padding = [data.draw(st.integers(0, s - 1)) for s in strides]
    x = data.draw(floats((1, c_in, *spatial), low=-2, high=2))
    w = data.draw(floats((c_in, c_out, *kernel), low=-2, high=2))
    output_shape = [data.draw(st.integers(1, 12)) for _ in range(rank)] if with_shape else None
    px = param(x)
    node = build(
        opset.convolution_backprop_data, px, w, strides, output_shape=output_shape,
        pads_begin=geometry["pads_begin"], pads_end=geometry["pads_end"], dilations=geometry["dilations"],
        auto_pad=auto_pad, output_padding=padding,
    )  # fmt: skip
    check_against_reference(single_op(node, [px]), [x], rtol=1e-5, atol=1e-5)


@OPS
@given(data=st.data(), rank=st.integers(1, 3), with_shape=st.booleans())
def test_backprop_data_with_the_kernel_as_strides(data: st.DataObject, rank: int, with_shape: bool) -> None:
    """Kernel == strides (the upsampling case, lowered as one product), with crops, output padding
    and output shapes that cut or extend the result."""
    spatial = tuple(data.draw(st.integers(1, 5)) for _ in range(rank))
    kernel = [data.draw(st.integers(1, 3)) for _ in range(rank)]
    c_in, c_out = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    x = data.draw(floats((2, c_in, *spatial), low=-2, high=2))
    w = data.draw(floats((c_in, c_out, *kernel), low=-2, high=2))
    pads = [data.draw(st.integers(0, k - 1)) for k in kernel]
    output_shape = [data.draw(st.integers(1, 12)) for _ in range(rank)] if with_shape else None
    px = param(x)
    node = build(
        opset.convolution_backprop_data, px, w, kernel, output_shape=output_shape, pads_begin=pads, pads_end=pads,
        dilations=[1] * rank, output_padding=[data.draw(st.integers(0, k - 1)) for k in kernel],
    )  # fmt: skip
    check_against_reference(single_op(node, [px]), [x], rtol=1e-5, atol=1e-5)


def test_backprop_data_closed_form() -> None:
    # A 1x1 input with stride 2 scatters the 2x2 kernel once; output_padding adds a zero row and column.
    x = np.array([[[[3.0]]]], np.float32)
    w = np.array([[[[1, 2], [3, 4]]]], np.float32)
    px = param(x)
    node = opset.convolution_backprop_data(px, w, [2, 2], output_padding=[1, 1])
    got = run_xla(single_op(node, [px]), [x])[0]
    np.testing.assert_array_equal(got[0, 0], [[3, 6, 0], [9, 12, 0], [0, 0, 0]])


def test_convolution_closed_form() -> None:
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    w = np.ones((1, 1, 2, 2), np.float32)
    px = param(x)
    got = run_xla(single_op(opset.convolution(px, w, [2, 2], [0, 0], [0, 0], [1, 1]), [px]), [x])[0]
    np.testing.assert_array_equal(got[0, 0], [[10, 18], [42, 50]])


@OPS
@given(data=st.data(), rank=st.integers(1, 3), groups=st.integers(2, 6), multiplier=st.integers(1, 2))
def test_depthwise_convolution_runs_as_shifted_products(
    data: st.DataObject, rank: int, groups: int, multiplier: int
) -> None:
    """One input channel per group: the lowering's multiply-add path, with strides, dilations and crops."""
    spatial = tuple(data.draw(st.integers(3, 8)) for _ in range(rank))
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(rank))
    x = data.draw(floats((2, groups, *spatial), low=-2, high=2))
    grouped = data.draw(floats((groups, multiplier, 1, *kernel), low=-2, high=2))
    geometry = data.draw(window(rank))
    auto_pad = data.draw(st.sampled_from(AUTO_PADS))
    px = param(x)
    node = build(opset.group_convolution, px, grouped, auto_pad=auto_pad, name="depthwise", **geometry)
    check_against_reference(single_op(node, [px]), [x], rtol=1e-5, atol=1e-5)


def test_half_precision_depthwise_convolution_sums_in_f32() -> None:
    """2048 + 48 ones: an f16 running sum stays at 2048 (its step there is 2), an f32 one reaches 2096."""
    x = np.ones((1, 2, 49), np.float16)
    x[:, :, 0] = 2048
    px = param(x)
    node = opset.group_convolution(px, np.ones((2, 1, 1, 49), np.float16), [1], [0], [0], [1], name="depthwise")
    got = run_xla(single_op(node, [px]), [x])[0]
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, np.full((1, 2, 1), 2096, np.float16))


@OPS
@given(data=st.data(), batched=st.booleans())
def test_col2im(data: st.DataObject, batched: bool) -> None:
    block = [data.draw(st.integers(1, 3)) for _ in range(2)]
    strides = [data.draw(st.integers(1, 2)) for _ in range(2)]
    pads = [data.draw(st.integers(0, 1)) for _ in range(4)]
    image = [data.draw(st.integers(k, 5)) for k in block]
    counts = [(i + pads[a] + pads[2 + a] - k) // s + 1 for a, (i, k, s) in enumerate(zip(image, block, strides))]
    shape = (1, 2 * int(np.prod(block)), int(np.prod(counts)))
    x = data.draw(floats(shape if batched else shape[1:], np.float32, -3, 3))
    px = param(x)
    node = opset.col2im(px, np.array(image, np.int64), np.array(block, np.int64), strides, None, pads[:2], pads[2:])
    check_against_reference(single_op(node, [px]), [x], rtol=1e-5, atol=1e-5)


@OPS
@given(data=st.data(), auto_pad=st.sampled_from(AUTO_PADS), pad=st.booleans(), masked=st.booleans())
def test_deformable_convolution(data: st.DataObject, auto_pad: str, pad: bool, masked: bool) -> None:
    group, deformable = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
    channels, kernel = 2 * group * deformable, (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    geometry = data.draw(window(2, negative_pads=False))
    x = data.draw(floats((2, channels, 6, 5), np.float32, -2, 2))
    filters = data.draw(floats((2 * group, channels // group, *kernel), np.float32, -2, 2))
    attrs = {"auto_pad": auto_pad, "group": group, "deformable_group": deformable, "bilinear_interpolation_pad": pad}
    taps = deformable * kernel[0] * kernel[1]
    unknown = opset.parameter([2, 2 * taps, -1, -1], np.float32)  # the output's size decides the offsets'
    probe = build(opset.deformable_convolution, param(x), unknown, filters, **geometry, **attrs)
    dims = probe.get_output_partial_shape(0).dims[2:]
    # quarter steps plus an eighth: no sample lands exactly on an edge, where the modes switch
    offsets = np.floor(data.draw(floats((2, 2 * taps, *dims), np.float32, -3, 3)) * 4) / 4 + np.float32(0.125)
    arrays = [x, offsets] + ([data.draw(floats((2, taps, *dims), np.float32, 0, 1))] if masked else [])
    params = [param(a, f"p{i}") for i, a in enumerate(arrays)]
    node = opset.deformable_convolution(params[0], params[1], filters, **geometry, mask=params[2] if masked else None,
                                        **attrs)  # fmt: skip
    check_against_reference(single_op(node, params), arrays, rtol=1e-4, atol=1e-4)


def _depthwise_numpy(x: np.ndarray, w: np.ndarray, strides, pads, dilations) -> np.ndarray:
    """``w`` ``[C * m, 1, ...]`` over ``x`` ``[N, C, ...]`` (non-negative pads), one loop per tap."""
    x = np.repeat(x, w.shape[0] // x.shape[1], axis=1).astype(np.float64)
    x = np.pad(x, [(0, 0), (0, 0), *pads])
    kernel = w.shape[2:]
    out = [(size - (k - 1) * d - 1) // s + 1 for size, k, d, s in zip(x.shape[2:], kernel, dilations, strides)]
    total = np.zeros((x.shape[0], w.shape[0], *out))
    for tap in np.ndindex(*kernel):
        region = tuple(slice(t * d, t * d + (n - 1) * s + 1, s) for t, d, n, s in zip(tap, dilations, out, strides))
        total += x[(slice(None), slice(None), *region)] * w[(slice(None), 0, *tap)].reshape(-1, *[1] * len(kernel))
    return total


@OPS
@given(data=st.data(), rank=st.integers(1, 3), channels_last=st.booleans(), multiplier=st.integers(1, 2))
def test_depthwise_taps_in_either_layout_match_numpy(
    data: st.DataObject, rank: int, channels_last: bool, multiplier: int
) -> None:
    channels = data.draw(st.integers(1, 4))
    x = data.draw(floats((2, channels, *(data.draw(st.integers(3, 7)) for _ in range(rank))), low=-2, high=2))
    w = data.draw(
        floats((channels * multiplier, 1, *(data.draw(st.integers(1, 3)) for _ in range(rank))), low=-2, high=2)
    )
    geometry = data.draw(window(rank, negative_pads=False))
    pads = list(zip(geometry["pads_begin"], geometry["pads_end"]))
    extents = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], geometry["dilations"])]
    assume(all(size + b + e >= extent for size, (b, e), extent in zip(x.shape[2:], pads, extents)))
    given = np.moveaxis(x, 1, -1) if channels_last else x  # the result comes in the same layout
    got = depthwise_conv(jnp.asarray(given), _read(w), geometry["strides"], pads, geometry["dilations"], channels_last)
    got = np.moveaxis(np.asarray(got), -1, 1) if channels_last else np.asarray(got)
    expected = _depthwise_numpy(x, w, geometry["strides"], pads, geometry["dilations"])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@OPS
@given(data=st.data(), multiplier=st.integers(1, 2))
def test_stride_one_depthwise_rows_computed_across_the_padded_width_match_numpy(
    data: st.DataObject, multiplier: int
) -> None:
    """The channels-last path for 2-D kernels up to 3x3 at stride 1 (each tap one contiguous run of the
    flattened padded image, the spare columns cropped), with dilations and uneven pads."""
    channels = data.draw(st.integers(1, 5))
    sizes = (data.draw(st.integers(1, 7)), data.draw(st.integers(1, 7)))
    kernel = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    dilations = [data.draw(st.integers(1, 2)) for _ in range(2)]
    pads = [(data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))) for _ in range(2)]
    assume(all(n + b + e >= (k - 1) * d + 1 for n, (b, e), k, d in zip(sizes, pads, kernel, dilations)))
    x = data.draw(floats((2, channels, *sizes), low=-2, high=2))
    w = data.draw(floats((channels * multiplier, 1, *kernel), low=-2, high=2))
    got = depthwise_conv(jnp.asarray(np.moveaxis(x, 1, -1)), _read(w), [1, 1], pads, dilations, True)
    expected = _depthwise_numpy(x, w, [1, 1], pads, dilations)
    np.testing.assert_allclose(np.moveaxis(np.asarray(got), -1, 1), expected, rtol=1e-5, atol=1e-5)


def _convolution_numpy(x: np.ndarray, w: np.ndarray, strides, pads, dilations) -> np.ndarray:
    """``w`` ``[O, C, ...]`` over ``x`` ``[N, C, ...]`` (pads may be negative: crops), one loop per tap."""
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0), *[(max(b, 0), max(e, 0)) for b, e in pads]])
    x = x[(slice(None), slice(None), *[slice(max(-b, 0), n - max(-e, 0)) for (b, e), n in zip(pads, x.shape[2:])])]
    kernel = w.shape[2:]
    out = [(size - (k - 1) * d - 1) // s + 1 for size, k, d, s in zip(x.shape[2:], kernel, dilations, strides)]
    total = np.zeros((x.shape[0], w.shape[0], *out))
    for tap in np.ndindex(*kernel):
        region = tuple(slice(t * d, t * d + (n - 1) * s + 1, s) for t, d, n, s in zip(tap, dilations, out, strides))
        total += np.einsum(
            "nc...,oc->no...", x[(slice(None), slice(None), *region)], w[(slice(None), slice(None), *tap)]
        )
    return total


@OPS
@given(data=st.data(), rank=st.integers(1, 3), channels=st.integers(1, 3))
def test_few_channel_convolutions_of_channels_first_data_match_numpy(
    data: st.DataObject, rank: int, channels: int
) -> None:
    """The stem of an image model: few input channels, read where they lie, the result channels-last."""
    x = data.draw(floats((2, channels, *(data.draw(st.integers(3, 7)) for _ in range(rank))), low=-2, high=2))
    w = data.draw(floats((data.draw(st.integers(1, 5)), channels, *(data.draw(st.integers(1, 3)) for _ in range(rank))),
                         low=-2, high=2))  # fmt: skip
    geometry = data.draw(window(rank))
    pads = list(zip(geometry["pads_begin"], geometry["pads_end"]))
    extents = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], geometry["dilations"])]
    assume(all(size + b + e >= extent for size, (b, e), extent in zip(x.shape[2:], pads, extents)))
    got = few_channel_conv(jnp.asarray(x), _read(w), geometry["strides"], pads, geometry["dilations"])
    expected = _convolution_numpy(x, w, geometry["strides"], pads, geometry["dilations"])
    np.testing.assert_allclose(np.moveaxis(np.asarray(got), -1, 1), expected, rtol=1e-5, atol=1e-4)


@OPS
@given(data=st.data(), rank=st.integers(1, 3))
def test_one_dimensional_convolutions_match_numpy(data: st.DataObject, rank: int) -> None:
    """A convolution sliding along one spatial axis (the others of size 1, in the data and the
    kernel: a 1-D layer, or a 2-D one with a k x 1 kernel as magika writes it) run as a 1-D
    convolution, with strides, dilations and crops along that axis."""
    axis = data.draw(st.integers(0, rank - 1))
    length, taps = data.draw(st.integers(2, 9)), data.draw(st.integers(2, 4))
    sizes, kernel = [1] * rank, [1] * rank
    sizes[axis], kernel[axis] = length, taps
    stride, dilation = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))
    begin, end = data.draw(st.integers(-1, 2)), data.draw(st.integers(-1, 2))
    assume(length + begin + end >= (taps - 1) * dilation + 1)
    pads = [(0, 0)] * rank
    pads[axis] = (begin, end)
    c_in, c_out = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 5))
    x = data.draw(floats((data.draw(st.integers(1, 2)), c_in, *sizes), low=-2, high=2))
    w = data.draw(floats((c_out, c_in, *kernel), low=-2, high=2))
    held = jnp.asarray(np.moveaxis(x, 1, -1))
    assert line_axis(held, _read(w), pads) == axis
    got = line_conv(held, _read(w), axis, stride, (begin, end), dilation)
    strides, dilations = [1] * rank, [1] * rank
    strides[axis], dilations[axis] = stride, dilation
    expected = _convolution_numpy(x, w, strides, pads, dilations)
    np.testing.assert_allclose(np.moveaxis(np.asarray(got), -1, 1), expected, rtol=1e-5, atol=1e-4)


def test_convolutions_sliding_along_more_than_one_axis_are_not_one_dimensional() -> None:
    x = jnp.zeros((1, 6, 6, 8))
    assert line_axis(x, jnp.zeros((3, 3, 8, 4)), [(0, 0), (0, 0)]) is None  # a 3x3 kernel
    assert line_axis(x, jnp.zeros((3, 1, 8, 4)), [(0, 0), (0, 0)]) is None  # the data is 6 wide
    assert line_axis(jnp.zeros((1, 6, 1, 8)), jnp.zeros((3, 1, 8, 4)), [(0, 0), (1, 1)]) is None  # padded across
    assert line_axis(x, jnp.zeros((1, 1, 8, 4)), [(0, 0), (0, 0)]) is None  # one tap: a plain product already


@OPS
@given(data=st.data(), two_d=st.booleans())
def test_one_dimensional_convolution_layers_match_the_reference(data: st.DataObject, two_d: bool) -> None:
    """Through the graph (channels-last lowering, then the one-product form) against TEMPLATE's kernel,
    with more input channels than the few-channel stem path takes."""
    length, taps, c_in = data.draw(st.integers(5, 12)), data.draw(st.integers(2, 5)), data.draw(st.integers(5, 9))
    x = data.draw(floats((data.draw(st.integers(1, 2)), c_in, length, *([1] if two_d else [])), low=-2, high=2))
    w = data.draw(floats((data.draw(st.integers(1, 6)), c_in, taps, *([1] if two_d else [])), low=-2, high=2))
    stride, pad = data.draw(st.integers(1, 2)), data.draw(st.integers(0, 2))
    px = param(x)
    rank = 2 if two_d else 1
    node = opset.convolution(px, w, [stride] + [1] * (rank - 1), [pad] + [0] * (rank - 1), [0] * rank, [1] * rank)
    check_against_reference(single_op(node, [px]), [x], rtol=1e-5, atol=1e-4)


@OPS
@given(data=st.data(), rank=st.integers(1, 3))
def test_pointwise_convolutions_as_one_product_match_numpy(data: st.DataObject, rank: int) -> None:
    """A 1x1 convolution without pads, at any strides, as one product with the weights ``[1, ..., C, O]``."""
    sizes = [data.draw(st.integers(1, 6)) for _ in range(rank)]
    strides = [data.draw(st.integers(1, 3)) for _ in range(rank)]
    c_in, c_out = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 5))
    x = data.draw(floats((data.draw(st.integers(1, 2)), c_in, *sizes), low=-2, high=2))
    w = data.draw(floats((c_out, c_in, *[1] * rank), low=-2, high=2))
    pads = [(0, 0)] * rank
    assert pointwise(_read(w), pads)
    got = pointwise_conv(jnp.asarray(np.moveaxis(x, 1, -1)), _read(w), strides)
    expected = _convolution_numpy(x, w, strides, pads, [1] * rank)
    np.testing.assert_allclose(np.moveaxis(np.asarray(got), -1, 1), expected, rtol=1e-5, atol=1e-4)


def test_padded_or_wider_kernels_are_not_pointwise() -> None:
    assert not pointwise(jnp.zeros((1, 1, 8, 4)), [(0, 0), (1, 0)])
    assert not pointwise(jnp.zeros((3, 1, 8, 4)), [(0, 0), (0, 0)])


@OPS
@given(data=st.data(), rank=st.integers(1, 2))
def test_pointwise_convolution_layers_match_the_reference(data: st.DataObject, rank: int) -> None:
    """Through the graph (channels-last lowering, then the product) against TEMPLATE's kernel, dilated
    and strided, with more input channels than the few-channel stem path takes."""
    c_in = data.draw(st.integers(5, 9))
    x = data.draw(floats((1, c_in, *[data.draw(st.integers(1, 6)) for _ in range(rank)]), low=-2, high=2))
    w = data.draw(floats((data.draw(st.integers(1, 6)), c_in, *[1] * rank), low=-2, high=2))
    strides = [data.draw(st.integers(1, 2)) for _ in range(rank)]
    px = param(x)
    node = opset.convolution(px, w, strides, [0] * rank, [0] * rank, [data.draw(st.integers(1, 2))] * rank)
    check_against_reference(single_op(node, [px]), [x], rtol=1e-5, atol=1e-4)


def test_a_few_channel_convolution_pads_each_tap_not_the_image() -> None:
    """Each tap pads only its own slice (XLA fuses those pads into the loop; a padded copy of the whole
    image was written first before): no pad reads the image itself; and a tap that reads padding only
    (a 3x3 kernel on one column padded by 2) gives zeros."""
    x = np.random.default_rng(6).standard_normal((1, 3, 8, 8)).astype(np.float32)
    w = np.random.default_rng(7).standard_normal((16, 3, 3, 3)).astype(np.float32)
    jaxpr = jax.make_jaxpr(lambda v: few_channel_conv(v, _read(w), [2, 2], [(1, 1), (1, 1)], [1, 1]))(x)
    pads = [e for e in jaxpr.eqns if e.primitive.name == "pad"]
    assert pads and all(e.invars[0].aval.shape != x.shape for e in pads)
    column = x[:, :, :, :1]
    got = few_channel_conv(jnp.asarray(column), _read(w), [1, 1], [(0, 0), (2, 2)], [1, 1])
    expected = _convolution_numpy(column, w, [1, 1], [(0, 0), (2, 2)], [1, 1])
    np.testing.assert_allclose(np.moveaxis(np.asarray(got), -1, 1), expected, rtol=1e-5, atol=1e-4)
