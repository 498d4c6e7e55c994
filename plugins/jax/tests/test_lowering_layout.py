"""Convolution chains lowered channels-last (hetero_sdk_jax.lowering.layout) give the graph's ``NC...``
values: element-wise operands of every broadcastable rank, reductions over any axes, ops that need
``NC...`` inputs after a chain, and the chain's values as outputs, checked against numpy."""

from __future__ import annotations

import hetero_sdk as hs
import jax
import numpy as np
from hetero_sdk import opset
from hypothesis import assume, given
from hypothesis import strategies as st
from xla_helpers import OPS, floats, param, run_xla

from hetero_sdk_jax.lowering import lower


def _pointwise(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A 1x1 convolution, ``w`` ``[O, C, 1, 1]`` over ``x`` ``[N, C, H, W]``."""
    return np.einsum("oc,nchw->nohw", w[:, :, 0, 0].astype(np.float64), x.astype(np.float64))


def _depthwise_3x3(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A 3x3 depthwise convolution with one pixel of zero padding, ``w`` ``[C, 1, 1, 3, 3]``."""
    padded = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (1, 1), (1, 1)])
    height, width = x.shape[2:]
    total = np.zeros(x.shape)
    for i in range(3):
        for j in range(3):
            total += padded[:, :, i : i + height, j : j + width] * w[:, 0, 0, i, j].reshape(1, -1, 1, 1)
    return total


@OPS
@given(
    data=st.data(),
    kept=st.lists(st.booleans(), min_size=4, max_size=4),
    rank=st.integers(0, 4),
    axes=st.lists(st.integers(-4, 3), min_size=1, max_size=4),
    keep_dims=st.booleans(),
)
def test_operands_and_reductions_of_a_channels_last_chain_keep_nchw_semantics(
    data: st.DataObject, kept: list[bool], rank: int, axes: list[int], keep_dims: bool
) -> None:
    x = data.draw(floats((2, 3, 4, 5), low=-2, high=2))
    w = data.draw(floats((6, 3, 1, 1), low=-2, high=2))
    full = (2, 6, 4, 5)
    operand_shape = tuple(d if k else 1 for d, k in zip(full, kept))[4 - rank :]
    operand = data.draw(floats(operand_shape, low=-2, high=2))
    px = param(x)
    summed = opset.add(opset.convolution(px, w, [1, 1], [0, 0], [0, 0], [1, 1]), operand, name="summed")
    activated = opset.relu(summed)
    reduced = opset.reduce_mean(activated, np.array(axes, np.int64), keep_dims=keep_dims, name="reduced")
    model = hs.Model([summed, reduced], [px])
    expected_sum = _pointwise(x, w) + operand
    expected_mean = np.maximum(expected_sum, 0).mean(axis=tuple(sorted({a % 4 for a in axes})), keepdims=keep_dims)
    got_sum, got_mean = run_xla(model, [x])
    np.testing.assert_allclose(got_sum, expected_sum, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_mean, expected_mean, rtol=1e-5, atol=1e-5)


def test_a_squeeze_and_excitation_block_then_flatten_and_matmul() -> None:
    """Depthwise -> HSwish -> spatial mean -> 1x1 convolutions -> scale, a residual Add, a channel
    Concat, then a Reshape and MatMul that need the ``NCHW`` order of the values."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 5, 6)).astype(np.float32)
    depthwise = rng.standard_normal((4, 1, 1, 3, 3)).astype(np.float32)
    squeeze = rng.standard_normal((2, 4, 1, 1)).astype(np.float32)
    excite = rng.standard_normal((4, 2, 1, 1)).astype(np.float32)
    head = rng.standard_normal((2 * 5 * 6 * 8 // 2, 3)).astype(np.float32)
    px = param(x)
    features = opset.hswish(opset.group_convolution(px, depthwise, [1, 1], [1, 1], [1, 1], [1, 1]))
    pooled = opset.reduce_mean(features, np.array([2, 3], np.int64), keep_dims=True)
    weights = opset.sigmoid(
        opset.convolution(opset.relu(opset.convolution(pooled, squeeze, [1, 1], [0, 0], [0, 0], [1, 1])),
                          excite, [1, 1], [0, 0], [0, 0], [1, 1])
    )  # fmt: skip
    scaled = opset.add(opset.multiply(features, weights), px)
    joined = opset.concat([scaled, opset.negative(scaled)], axis=1)
    flat = opset.reshape(joined, np.array([2, -1], np.int64), special_zero=False)
    out = opset.matmul(flat, head, False, False)
    got = run_xla(hs.Model([out, joined], [px]), [x])

    def hswish(v: np.ndarray) -> np.ndarray:
        return v * np.clip(v + 3, 0, 6) / 6

    feats = hswish(_depthwise_3x3(x, depthwise))
    gate = 1 / (1 + np.exp(-_pointwise(np.maximum(_pointwise(feats.mean(axis=(2, 3), keepdims=True), squeeze), 0),
                                       excite)))  # fmt: skip
    scaled_np = feats * gate + x
    joined_np = np.concatenate([scaled_np, -scaled_np], axis=1)
    np.testing.assert_allclose(got[1], joined_np, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[0], joined_np.reshape(2, -1) @ head, rtol=1e-4, atol=1e-3)


def test_an_operand_of_higher_rank_takes_the_value_channels_first() -> None:
    """A rank-5 operand broadcasts a convolution's result to rank 5: the Add runs on ``NCHW``."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 2, 3, 3)).astype(np.float32)
    w = rng.standard_normal((3, 2, 1, 1)).astype(np.float32)
    wide = rng.standard_normal((2, 1, 3, 3, 3)).astype(np.float32)
    px = param(x)
    out = opset.multiply(opset.convolution(px, w, [1, 1], [0, 0], [0, 0], [1, 1]), wide)
    got = run_xla(hs.Model([out], [px]), [x])[0]
    np.testing.assert_allclose(got, _pointwise(x, w) * wide, rtol=1e-5, atol=1e-5)


def test_a_chain_changes_layout_only_at_its_ends() -> None:
    """Convolution -> Add -> Relu -> depthwise -> ReduceMean -> Multiply -> Convolution: one transpose
    out (the Result), none between the ops, and none in: the first convolution, of few channels,
    reads its input channels-first."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
    px = param(x)
    first = opset.relu(opset.add(opset.convolution(px, np.ones((4, 4, 1, 1), np.float32), [1, 1], [0, 0], [0, 0],
                                                   [1, 1]), np.ones((1, 4, 1, 1), np.float32)))  # fmt: skip
    depthwise = opset.group_convolution(first, np.ones((4, 1, 1, 3, 3), np.float32), [1, 1], [1, 1], [1, 1], [1, 1])
    scaled = opset.multiply(depthwise, opset.reduce_mean(depthwise, np.array([2, 3], np.int64), keep_dims=True))
    out = opset.convolution(scaled, np.ones((2, 4, 1, 1), np.float32), [1, 1], [0, 0], [0, 0], [1, 1])
    jaxpr = jax.make_jaxpr(lower(hs.Model([out], [px])))(x)
    assert [e.primitive.name for e in jaxpr.eqns].count("transpose") == 1


@OPS
@given(data=st.data(), axis=st.integers(-4, 3))
def test_a_concat_of_chain_values_and_plain_ones_along_any_axis(data: st.DataObject, axis: int) -> None:
    """Concat of two convolutions' results and a plain input (joined along ``axis`` as the graph
    says), then a Relu and a convolution whose input stays channels-last."""
    x = data.draw(floats((2, 3, 4, 5), low=-2, high=2))
    w = data.draw(floats((3, 3, 1, 1), low=-2, high=2))
    other = data.draw(floats((2, 3, 4, 5), low=-2, high=2))
    px, pother = param(x), param(other, "other")
    first = opset.convolution(px, w, [1, 1], [0, 0], [0, 0], [1, 1])
    joined = opset.relu(opset.concat([first, pother, first], axis=axis))
    channels = joined.get_output_partial_shape(0).to_shape()[1]
    mixer = data.draw(floats((2, channels, 1, 1), low=-2, high=2))
    out = opset.convolution(joined, mixer, [1, 1], [0, 0], [0, 0], [1, 1])
    got_joined, got_out = run_xla(hs.Model([joined, out], [px, pother]), [x, other])
    conv = _pointwise(x, w)
    expected = np.maximum(np.concatenate([conv, other, conv], axis=axis), 0)
    np.testing.assert_allclose(got_joined, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_out, _pointwise(expected.astype(np.float32), mixer), rtol=1e-4, atol=1e-4)


def _resized(x: np.ndarray, axis: int, scale: float, mode: str) -> np.ndarray:
    """``x`` resized along ``axis`` by ``scale``, asymmetric coordinates (``i / scale``): the floor
    neighbour (``nearest``) or the two neighbours' linear mix (``linear_onnx``)."""
    in_len = x.shape[axis]
    out_len = int(np.float32(in_len) * (np.float32(scale) + np.float32(1e-5)))
    coords = np.arange(out_len, dtype=np.float32) / np.float32(scale)
    if mode == "nearest":
        return np.take(x, np.clip(np.floor(coords), 0, in_len - 1).astype(int), axis=axis)
    coords = np.clip(coords.astype(np.float64), 0, in_len - 1)
    low = np.floor(coords).astype(int)
    high = np.minimum(low + 1, in_len - 1)
    shape = [1] * x.ndim
    shape[axis] = out_len
    frac = (coords - low).reshape(shape)
    return np.take(x, low, axis=axis) * (1 - frac) + np.take(x, high, axis=axis) * frac


def _transposed_conv(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """A 2D transposed convolution, ``w`` ``[C, O, k, k]``: each input pixel adds its value times the
    kernel at ``stride`` times its position; ``pad`` elements cut from each side."""
    n, _, height, width = x.shape
    k = w.shape[2]
    full = np.zeros((n, w.shape[1], stride * (height - 1) + k, stride * (width - 1) + k))
    for i in range(height):
        for j in range(width):
            block = np.einsum("nc,cokl->nokl", x[:, :, i, j].astype(np.float64), w.astype(np.float64))
            full[:, :, i * stride : i * stride + k, j * stride : j * stride + k] += block
    return full[:, :, pad : full.shape[2] - pad, pad : full.shape[3] - pad]


@OPS
@given(
    data=st.data(),
    mode=st.sampled_from(["nearest", "linear_onnx"]),
    scales=st.tuples(st.sampled_from([0.5, 1.5, 2.0, 3.0]), st.sampled_from([1.0, 2.0, 2.5])),
    pads=st.tuples(st.integers(0, 1), st.integers(0, 1)),
    kernel_stride_pad=st.sampled_from([(2, 2, 0), (3, 2, 1), (2, 1, 0), (3, 3, 1)]),
)
def test_interpolate_transposed_convolution_batch_norm_and_prelu_in_a_chain(
    data: st.DataObject,
    mode: str,
    scales: tuple[float, float],
    pads: tuple[int, int],
    kernel_stride_pad: tuple[int, int, int],
) -> None:
    """Convolution -> Interpolate (H and W, padded first) -> ConvolutionBackpropData -> BatchNormInference
    -> PRelu (ONNX's Select form) -> Convolution, every value of the chain an output."""
    k, stride, pad = kernel_stride_pad
    x = data.draw(floats((2, 5, 4, 3), low=-2, high=2))
    w = data.draw(floats((6, 5, 1, 1), low=-2, high=2))
    up = data.draw(floats((6, 4, k, k), low=-1, high=1))
    gamma, beta, mean = (data.draw(floats((4,), low=-2, high=2)) for _ in range(3))
    variance = data.draw(floats((4,), low=0.5, high=2))
    slope = data.draw(floats((4, 1, 1), low=-1, high=1))
    mixer = data.draw(floats((3, 4, 1, 1), low=-2, high=2))
    px = param(x)
    first = opset.convolution(px, w, [1, 1], [0, 0], [0, 0], [1, 1])
    resized = opset.interpolate(
        first, np.array(scales, np.float32), mode, "scales", [0, 0, *pads], [0, 0, 0, pads[0]],
        coordinate_transformation_mode="asymmetric", nearest_mode="floor", axes=np.array([2, 3], np.int64),
    )  # fmt: skip
    upsampled = opset.convolution_backprop_data(resized, up, [stride, stride], None, [pad, pad], [pad, pad], [1, 1])
    normed = opset.batch_norm_inference(upsampled, gamma, beta, mean, variance, 1e-3)
    zero = np.zeros((), np.float32)
    prelu = opset.select(opset.greater_equal(normed, zero), normed, opset.multiply(normed, slope))
    out = opset.convolution(prelu, mixer, [1, 1], [0, 0], [0, 0], [1, 1])
    got = run_xla(hs.Model([resized, upsampled, normed, prelu, out], [px]), [x])

    conv = np.pad(_pointwise(x, w), [(0, 0), (0, 0), (pads[0], 0), (pads[1], pads[0])])
    resized_np = _resized(_resized(conv, 2, scales[0], mode), 3, scales[1], mode)
    upsampled_np = _transposed_conv(resized_np.astype(np.float32), up, stride, pad)
    per_channel = [v.astype(np.float64).reshape(1, 4, 1, 1) for v in (gamma, beta, mean, variance)]
    normed_np = per_channel[0] * (upsampled_np - per_channel[2]) / np.sqrt(per_channel[3] + 1e-3) + per_channel[1]
    prelu_np = np.where(normed_np >= 0, normed_np, normed_np * slope)
    for value, expected in zip(got, [resized_np, upsampled_np, normed_np, prelu_np, _pointwise(prelu_np, mixer)]):
        np.testing.assert_allclose(value, expected, rtol=1e-4, atol=1e-4)


def test_upsampling_and_batch_norm_keep_a_chain_channels_last() -> None:
    """Convolution -> Interpolate (nearest, x2) -> ConvolutionBackpropData (2x2, stride 2) ->
    BatchNormInference -> Convolution: no layout change between the ops, one at each end."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 8, 4, 4)).astype(np.float32)
    px = param(x)
    first = opset.convolution(px, np.ones((8, 8, 1, 1), np.float32), [1, 1], [0, 0], [0, 0], [1, 1])
    resized = opset.interpolate(
        first, np.array([2.0, 2.0], np.float32), "nearest", "scales",
        coordinate_transformation_mode="asymmetric", nearest_mode="floor", axes=np.array([2, 3], np.int64),
    )  # fmt: skip
    up = opset.convolution_backprop_data(resized, np.ones((8, 8, 2, 2), np.float32), [2, 2])
    params = [np.ones(8, np.float32)] * 4
    out = opset.convolution(opset.batch_norm_inference(up, *params, 1e-5), np.ones((2, 8, 1, 1), np.float32),
                            [1, 1], [0, 0], [0, 0], [1, 1])  # fmt: skip
    jaxpr = jax.make_jaxpr(lower(hs.Model([out], [px])))(x)
    names = [e.primitive.name for e in jaxpr.eqns]
    assert names.count("transpose") == 3  # the input moved channels-last, the transposed convolution's
    # block interleave, and the Result moved back
    assert "gather" not in names  # an integer nearest upscale is a broadcast


def _regrouped_shape(draw: st.DrawFn, spatial: tuple[int, ...]) -> tuple[int, ...]:
    """Another shape of ``spatial``'s elements in their order: size-1 axes dropped or added,
    neighbours merged."""
    dims = [d for d in spatial if d != 1] if draw(st.booleans()) else list(spatial)
    if len(dims) >= 2 and draw(st.booleans()):
        i = draw(st.integers(0, len(dims) - 2))
        dims[i : i + 2] = [dims[i] * dims[i + 1]]
    for _ in range(draw(st.integers(0, 2))):
        dims.insert(draw(st.integers(0, len(dims))), 1)
    return tuple(dims)


@OPS
@given(
    data=st.data(),
    spatial=st.tuples(st.integers(1, 4), st.integers(1, 3)),
    kind=st.sampled_from(["reshape", "squeeze", "unsqueeze", "channels mixed", "batch mixed"]),
)
def test_reshapes_of_a_chain_value_keep_nchw_semantics(
    data: st.DataObject, spatial: tuple[int, int], kind: str
) -> None:
    """A Reshape regrouping the spatial axes (or mixing them with the channels or the batch: then
    the value goes back to ``NCHW`` first), a Squeeze or an Unsqueeze of a convolution's result,
    then a Relu and a ReduceMax over the last axis; both checked against numpy."""
    x = data.draw(floats((2, 3, *spatial), low=-2, high=2))
    w = data.draw(floats((5, 3, 1, 1), low=-2, high=2))
    px = param(x)
    conv = opset.convolution(px, w, [1, 1], [0, 0], [0, 0], [1, 1])
    expected = _pointwise(x, w)
    if kind == "squeeze":
        axes = [a for a in (2, 3) if spatial[a - 2] == 1]
        assume(axes)
        shaped = opset.squeeze(conv, np.array(axes, np.int64))
        expected = np.squeeze(expected, axis=tuple(axes))
    elif kind == "unsqueeze":
        count = data.draw(st.integers(1, 2))  # the result has rank 4 + count: axes 2 .. 3 + count
        axes = data.draw(st.lists(st.integers(2, 3 + count), min_size=count, max_size=count, unique=True))
        shaped = opset.unsqueeze(conv, np.array(axes, np.int64))
        expected = np.expand_dims(expected, tuple(axes))
    else:
        target = {
            "reshape": (2, 5, *_regrouped_shape(data.draw, spatial)),
            "channels mixed": (2, 5 * spatial[0], spatial[1]),
            "batch mixed": (1, 2 * 5, *spatial),
        }[kind]
        shaped = opset.reshape(conv, np.array(target, np.int64), special_zero=False)
        expected = expected.reshape(target)
    out = opset.reduce_max(opset.relu(shaped), np.array([-1], np.int64), keep_dims=False)
    got_shaped, got_out = run_xla(hs.Model([shaped, out], [px]), [x])
    np.testing.assert_allclose(got_shaped, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_out, np.maximum(expected, 0).max(axis=-1), rtol=1e-5, atol=1e-5)


@OPS
@given(
    data=st.data(),
    slices=st.lists(
        st.tuples(st.integers(-4, 3), st.integers(-6, 6), st.integers(-6, 6), st.sampled_from([-2, -1, 1, 2, 3])),
        min_size=1,
        max_size=3,
        unique_by=lambda s: s[0] % 4,
    ),
    with_axes=st.booleans(),
)
def test_a_slice_of_a_chain_value_along_any_axes(
    data: st.DataObject, slices: list[tuple[int, int, int, int]], with_axes: bool
) -> None:
    """Slice (axes given, or the leading ones implied) of a convolution's result, then a convolution
    of what is left; both checked against numpy's slicing of the ``NCHW`` values (the Slice is carried
    channels-last, its axes moved; empty results and channel slices included)."""
    x = data.draw(floats((3, 2, 4, 5), low=-2, high=2))
    w = data.draw(floats((4, 2, 1, 1), low=-2, high=2))
    axes = [a for a, *_ in slices] if with_axes else list(range(len(slices)))
    starts, stops, steps = ([s[i] for s in slices] for i in (1, 2, 3))
    px = param(x)
    conv = opset.convolution(px, w, [1, 1], [0, 0], [0, 0], [1, 1])
    as_ints = [np.array(v, np.int64) for v in (starts, stops, steps)]
    sliced = opset.slice(conv, *as_ints, np.array(axes, np.int64) if with_axes else None)
    index = [slice(None)] * 4
    for a, b, e, s in zip(axes, starts, stops, steps):
        index[a % 4] = slice(b, e, s)
    expected = _pointwise(x, w)[tuple(index)]
    outputs = [sliced]
    if expected.size and expected.shape[1]:
        mixer = data.draw(floats((2, expected.shape[1], 1, 1), low=-2, high=2))
        outputs.append(opset.convolution(sliced, mixer, [1, 1], [0, 0], [0, 0], [1, 1]))
    got = run_xla(hs.Model(outputs, [px]), [x])
    np.testing.assert_allclose(got[0], expected, rtol=1e-5, atol=1e-5)
    if len(got) > 1:
        np.testing.assert_allclose(got[1], _pointwise(expected.astype(np.float32), mixer), rtol=1e-4, atol=1e-4)


def test_a_sequence_head_reads_a_chain_value_without_copying_it() -> None:
    """PP-OCRv4 rec's neck: a ``1 x 3`` convolution on a ``[N, C, 1, W]`` image -> HSwish -> Reshape
    to ``[N, C, W]`` -> Transpose to ``[N, W, C]`` -> MatMul. The held value is the transposed one, so
    the only transposes XLA compiles move the input channels-last (before, the value went back to
    ``NCHW`` before the Reshape and was copied twice)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 6, 1, 10)).astype(np.float32)
    w = rng.standard_normal((8, 6, 1, 3)).astype(np.float32)
    head = rng.standard_normal((8, 4)).astype(np.float32)
    px = param(x)
    conv = opset.hswish(opset.convolution(px, w, [1, 1], [0, 1], [0, 1], [1, 1]))
    line = opset.reshape(conv, np.array([1, 8, 10], np.int64), special_zero=False)
    out = opset.matmul(opset.transpose(line, np.array([0, 2, 1], np.int64)), head, False, False)
    model = hs.Model([out], [px])
    padded = np.pad(x[:, :, 0].astype(np.float64), [(0, 0), (0, 0), (1, 1)])
    convolved = sum(np.einsum("oc,ncl->nol", w[:, :, 0, k], padded[:, :, k : k + 10]) for k in range(3))
    expected = (convolved * np.clip(convolved + 3, 0, 6) / 6).transpose(0, 2, 1) @ head
    np.testing.assert_allclose(run_xla(model, [x])[0], expected, rtol=1e-4, atol=1e-4)
    compiled = jax.jit(lower(model)).lower(x).compile().as_text()
    transposes = [line for line in compiled.splitlines() if " transpose(" in line]
    assert transposes and all("f32[1,1,10,6]" in t for t in transposes), transposes
