"""Convolution, GroupConvolution and ConvolutionBackpropData: inference, and kernels against loops written here."""

from __future__ import annotations

import itertools
import math
import re

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate

FAST = settings(max_examples=40, deadline=None)
EXACT = {"INFERENCE_PRECISION_HINT": "f32"}  # OpenVINO CPU may otherwise compute in bf16
AUTO_PADS = ["explicit", "same_upper", "same_lower", "valid"]


def run(node: hs.Node, params: list[hs.Node], *arrays: np.ndarray) -> list[np.ndarray]:
    """Evaluates every output of ``node`` with the reference kernels."""
    return evaluate(hs.Model(node.outputs(), params), list(arrays))


def pads_for(auto_pad: str, size: int, k: int, s: int, d: int, pb: int, pe: int) -> tuple[int, int]:
    """One axis' pads as OpenVINO's spec states them: ``same_*`` keeps ``ceil(size / s)`` outputs."""
    if auto_pad == "explicit":
        return pb, pe
    if auto_pad == "valid":
        return 0, 0
    wanted = math.ceil(size / s)
    total = max((wanted - 1) * s + (k - 1) * d + 1 - size, 0)
    half = total // 2
    return (half, total - half) if auto_pad == "same_upper" else (total - half, half)


def naive_conv(x, w, groups, strides, dilations, pads_begin, pads_end, auto_pad):
    """A loop over every output element and kernel tap; ``w`` is [C_OUT, C_IN / groups, k...]."""
    n = x.ndim - 2
    pads = [pads_for(auto_pad, x.shape[2 + i], w.shape[2 + i], strides[i], dilations[i], pads_begin[i], pads_end[i])
            for i in range(n)]  # fmt: skip
    out_sizes = [
        (x.shape[2 + i] + pads[i][0] + pads[i][1] - (w.shape[2 + i] - 1) * dilations[i] - 1) // strides[i] + 1
        for i in range(n)
    ]
    c_out, c_in_g = w.shape[0], w.shape[1]
    out = np.zeros((x.shape[0], c_out, *out_sizes), np.float64)
    for b, co, *pos in itertools.product(range(x.shape[0]), range(c_out), *map(range, out_sizes)):
        group = co // (c_out // groups)
        total = 0.0
        for ci, *tap in itertools.product(range(c_in_g), *map(range, w.shape[2:])):
            where = [pos[i] * strides[i] - pads[i][0] + tap[i] * dilations[i] for i in range(n)]
            if all(0 <= where[i] < x.shape[2 + i] for i in range(n)):
                total += x[(b, group * c_in_g + ci, *where)] * w[(co, ci, *tap)]
        out[(b, co, *pos)] = total
    return out


def naive_backprop(x, w, strides, dilations, begin, out_sizes):
    """Scatters every input element through every tap into the full result, then takes the window."""
    n = x.ndim - 2
    full = [strides[i] * (x.shape[2 + i] - 1) + (w.shape[2 + i] - 1) * dilations[i] + 1 for i in range(n)]
    result = np.zeros((x.shape[0], w.shape[1], *full), np.float64)
    for b, ci, *pos in itertools.product(range(x.shape[0]), range(x.shape[1]), *map(range, x.shape[2:])):
        for tap in itertools.product(*map(range, w.shape[2:])):
            where = tuple(pos[i] * strides[i] + tap[i] * dilations[i] for i in range(n))
            result[(b, slice(None), *where)] += x[(b, ci, *pos)] * w[(ci, slice(None), *tap)]
    out = np.zeros((x.shape[0], w.shape[1], *out_sizes), np.float64)
    for pos in itertools.product(*map(range, out_sizes)):
        src = [pos[i] + begin[i] for i in range(n)]
        if all(0 <= src[i] < full[i] for i in range(n)):
            out[(slice(None), slice(None), *pos)] = result[(slice(None), slice(None), *src)]
    return out


# -- shape inference -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "filters", "strides", "pads", "dilations", "auto_pad", "expected"),
    [
        ([1, 3, 7, 7], [8, 3, 3, 3], [1, 1], ([0, 0], [0, 0]), [1, 1], "explicit", [1, 8, 5, 5]),
        ([2, 3, 7, 7], [8, 3, 3, 3], [2, 2], ([1, 1], [1, 1]), [1, 1], "explicit", [2, 8, 4, 4]),
        ([1, 3, 7, 9], [4, 3, 3, 2], [2, 3], ([0, 0], [0, 0]), [2, 1], "explicit", [1, 4, 2, 3]),
        ([1, 3, 7, 7], [8, 3, 3, 3], [2, 2], ([9, 9], [9, 9]), [1, 1], "same_upper", [1, 8, 4, 4]),
        ([1, 3, 7, 7], [8, 3, 3, 3], [2, 2], ([0, 0], [0, 0]), [1, 1], "valid", [1, 8, 3, 3]),
        ([1, 2, 10], [4, 2, 3], [3], ([1], [0]), [1], "explicit", [1, 4, 3]),
        ([1, 2, 5, 6, 7], [4, 2, 1, 2, 3], [1, 1, 1], ([0, 0, 0], [0, 0, 0]), [1, 1, 1], "explicit", [1, 4, 5, 5, 5]),
        ([-1, 3, 7, 7], [8, 3, 3, 3], [1, 1], ([0, 0], [0, 0]), [1, 1], "explicit", [-1, 8, 5, 5]),
        ([1, 3, -1, 7], [8, 3, 3, 3], [1, 1], ([0, 0], [0, 0]), [1, 1], "explicit", [1, 8, -1, 5]),
        ([1, -1, 7, 7], [8, 3, 3, 3], [1, 1], ([0, 0], [0, 0]), [1, 1], "same_lower", [1, 8, 7, 7]),
        ([1, 3, 7, 7], [-1, 3, 3, -1], [1, 1], ([0, 0], [0, 0]), [1, 1], "explicit", [1, -1, 5, -1]),
    ],
)
def test_convolution_output_shape(data, filters, strides, pads, dilations, auto_pad, expected) -> None:
    x, w = opset.parameter(data), opset.parameter(filters)
    node = opset.convolution(x, w, strides, pads[0], pads[1], dilations, auto_pad)
    assert node.get_output_partial_shape(0) == expected
    assert node.get_output_element_type(0) is hs.Type.f32


def test_group_convolution_output_shape_multiplies_groups_and_channels() -> None:
    x = opset.parameter([-1, 6, 5, 5], hs.Type.f16)
    node = opset.group_convolution(x, opset.parameter([3, 4, 2, 3, 3], hs.Type.f16), [1, 1], [1, 1], [1, 1], [1, 1])
    assert node.get_output_partial_shape(0) == [-1, 12, 5, 5]
    assert node.get_output_element_type(0) is hs.Type.f16


def test_backprop_output_shape_follows_the_documented_formula() -> None:
    x = opset.parameter([1, 20, 224, 224])
    node = opset.convolution_backprop_data(x, opset.parameter([20, 10, 3, 3]), [2, 2], pads_begin=[1, 1],
                                           pads_end=[1, 1])  # fmt: skip
    assert node.get_output_partial_shape(0) == [1, 10, 447, 447]
    padded = opset.convolution_backprop_data(opset.parameter([1, 20, 2, 2]), opset.parameter([20, 10, 3, 3]), [3, 3],
                                             output_padding=[2, 2])  # fmt: skip
    assert padded.get_output_partial_shape(0) == [1, 10, 8, 8]
    same = opset.convolution_backprop_data(x, opset.parameter([20, 10, 3, 3]), [2, 2], auto_pad="same_upper")
    assert same.get_output_partial_shape(0) == [1, 10, 449, 449]  # auto_pad without output_shape: no pads


def test_backprop_output_shape_input_sets_the_spatial_shape() -> None:
    x, w = opset.parameter([-1, 20, 224, 224]), opset.parameter([20, 10, 3, 3])
    node = opset.convolution_backprop_data(x, w, [1, 1], output_shape=[450, 450], auto_pad="valid")
    assert node.get_output_partial_shape(0) == [-1, 10, 450, 450]
    unknown = opset.convolution_backprop_data(x, w, [1, 1], output_shape=opset.parameter([2], hs.Type.i64))
    assert unknown.get_output_partial_shape(0) == [-1, 10, -1, -1]


def test_backprop_with_dynamic_spatial_input_gives_dynamic_spatial_output() -> None:
    node = opset.convolution_backprop_data(opset.parameter([1, 4, -1, 5]), opset.parameter([4, 2, 3, 3]), [2, 2])
    assert node.get_output_partial_shape(0) == [1, 2, -1, 11]


# -- values ---------------------------------------------------------------------------------------------


@st.composite
def conv_cases(draw: st.DrawFn, grouped: bool) -> dict:
    n = draw(st.integers(1, 3))
    groups = draw(st.integers(1, 3)) if grouped else 1
    c_in, c_out = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    sizes = draw(st.lists(st.integers(1, 6), min_size=n, max_size=n))
    kernel = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    strides = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    dilations = draw(st.lists(st.integers(1, 2), min_size=n, max_size=n))
    pads = [draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)) for _ in range(2)]
    auto_pad = draw(st.sampled_from(AUTO_PADS))
    for i in range(n):
        begin, end = pads_for(auto_pad, sizes[i], kernel[i], strides[i], dilations[i], pads[0][i], pads[1][i])
        sizes[i] = max(sizes[i], (kernel[i] - 1) * dilations[i] + 1 - begin - end)
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.standard_normal((draw(st.integers(1, 2)), groups * c_in, *sizes)).astype(np.float32)
    w = rng.standard_normal((groups, c_out, c_in, *kernel)).astype(np.float32)
    return dict(x=x, w=w, groups=groups, strides=strides, dilations=dilations, pads=pads, auto_pad=auto_pad)


@FAST
@given(conv_cases(grouped=False))
def test_convolution_matches_a_loop_over_outputs(case: dict) -> None:
    x, w = case["x"], case["w"][0]
    px, pw = opset.parameter(x.shape), opset.parameter(w.shape)
    node = opset.convolution(px, pw, case["strides"], *case["pads"], case["dilations"], case["auto_pad"])
    (got,) = run(node, [px, pw], x, w)
    expected = naive_conv(x, w, 1, case["strides"], case["dilations"], *case["pads"], case["auto_pad"])
    assert got.shape == node.get_output_shape(0) == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@FAST
@given(conv_cases(grouped=True))
def test_group_convolution_matches_a_loop_over_outputs(case: dict) -> None:
    x, w = case["x"], case["w"]
    px, pw = opset.parameter(x.shape), opset.parameter(w.shape)
    node = opset.group_convolution(px, pw, case["strides"], *case["pads"], case["dilations"], case["auto_pad"])
    (got,) = run(node, [px, pw], x, w)
    flat = w.reshape(-1, *w.shape[2:])
    expected = naive_conv(x, flat, case["groups"], case["strides"], case["dilations"], *case["pads"], case["auto_pad"])
    assert got.shape == node.get_output_shape(0) == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@st.composite
def backprop_cases(draw: st.DrawFn) -> dict:
    n = draw(st.integers(1, 3))
    ints = lambda lo, hi: draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n))  # noqa: E731
    sizes, kernel, strides, dilations = ints(1, 4), ints(1, 3), ints(1, 3), ints(1, 2)
    pads_begin, pads_end = ints(0, 1), ints(0, 1)
    output_padding = [draw(st.integers(0, min(s, d) - 1)) for s, d in zip(strides, dilations)]
    auto_pad = draw(st.sampled_from(AUTO_PADS))
    output_shape = ints(1, 9) if draw(st.booleans()) else None
    full = [s * (x - 1) + (k - 1) * d + 1 for x, k, s, d in zip(sizes, kernel, strides, dilations)]
    if output_shape is None:
        if auto_pad != "explicit":
            pads_begin, pads_end = [0] * n, [0] * n
        begin = pads_begin
        out = [f - b - e + p for f, b, e, p in zip(full, pads_begin, pads_end, output_padding)]
        sizes = [x + max(0, 1 - o) for x, o in zip(sizes, out)]  # make every output non-empty
        full = [s * (x - 1) + (k - 1) * d + 1 for x, k, s, d in zip(sizes, kernel, strides, dilations)]
        out = [f - b - e + p for f, b, e, p in zip(full, pads_begin, pads_end, output_padding)]
    else:
        out = output_shape
        totals = [max(0, f + p - o) for f, p, o in zip(full, output_padding, output_shape)]
        begin = {
            "explicit": pads_begin,
            "valid": [0] * n,
            "same_upper": [t - t // 2 for t in totals],
            "same_lower": [t // 2 for t in totals],
        }[auto_pad]
        # OpenVINO's CPU plugin clips an explicit pads_begin to the dilated kernel's extent when an
        # output_shape is given (a 1-wide kernel ignores it: measured), unlike its own op definition and ours.
        assume(all(b <= (k - 1) * d for b, k, d in zip(begin, kernel, dilations)) or auto_pad != "explicit")
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.standard_normal((draw(st.integers(1, 2)), draw(st.integers(1, 3)), *sizes)).astype(np.float32)
    w = rng.standard_normal((x.shape[1], draw(st.integers(1, 3)), *kernel)).astype(np.float32)
    attrs = dict(pads_begin=pads_begin, pads_end=pads_end, dilations=dilations, auto_pad=auto_pad,
                 output_padding=output_padding)  # fmt: skip
    return dict(x=x, w=w, strides=strides, attrs=attrs, output_shape=output_shape, begin=begin, out=out)


@FAST
@given(backprop_cases())
def test_convolution_backprop_data_matches_a_scatter_loop(case: dict) -> None:
    x, w = case["x"], case["w"]
    px, pw = opset.parameter(x.shape), opset.parameter(w.shape)
    node = opset.convolution_backprop_data(px, pw, case["strides"], case["output_shape"], **case["attrs"])
    (got,) = run(node, [px, pw], x, w)
    expected = naive_backprop(x, w, case["strides"], case["attrs"]["dilations"], case["begin"], case["out"])
    assert got.shape == node.get_output_shape(0) == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@FAST
@given(
    kernel=st.lists(st.integers(1, 3), min_size=1, max_size=3),
    batch=st.integers(1, 2),
    channels=st.integers(1, 5),
    outs=st.integers(1, 4),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 2**16),
)
def test_a_transposed_convolution_whose_strides_are_its_kernel_matches_a_scatter_loop(
    kernel, batch, channels, outs, dtype, seed
) -> None:
    """Every input pixel owns one output block (the upsampling of detection necks): one GEMM, one copy."""
    rng = np.random.default_rng(seed)
    sizes = [int(v) for v in rng.integers(1, 5, len(kernel))]
    x = rng.standard_normal((batch, channels, *sizes)).astype(dtype)
    w = rng.standard_normal((channels, outs, *kernel)).astype(dtype)
    px, pw = opset.parameter(x.shape, x.dtype), opset.parameter(w.shape, w.dtype)
    (got,) = run(opset.convolution_backprop_data(px, pw, kernel), [px, pw], x, w)
    ones = [1] * len(kernel)
    out = [s * k for s, k in zip(sizes, kernel)]
    expected = naive_backprop(x, w, kernel, ones, [0] * len(kernel), out)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_convolution_with_negative_pads_crops_the_input() -> None:
    x = np.arange(10, dtype=np.float32).reshape(1, 1, 10)
    node = opset.convolution(x, np.ones((1, 1, 2), np.float32), [1], [-2], [-3], [1])
    (got,) = run(node, [])
    np.testing.assert_array_equal(got[0, 0], [5, 7, 9, 11])  # pairs of 2..6


@pytest.mark.parametrize("dilation", [1, 2])
def test_a_convolution_with_more_taps_than_outputs_matches_the_frames_written_here(dilation: int) -> None:
    """An STFT as a 1-D convolution (Silero VAD's): a 64-tap window every 32 samples, 3 frames, so im2col
    copies all taps at once; each output is a frame's dot product with each filter, written here."""
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 2, 160)).astype(np.float32), rng.standard_normal((5, 2, 64)).astype(np.float32)
    (got,) = run(opset.convolution(x, w, [32], [0], [0], [dilation]), [])
    span = 63 * dilation + 1
    frames = [x[:, :, start : start + span : dilation] for start in range(0, 160 - span + 1, 32)]
    expected = np.stack([np.einsum("nct,oct->no", frame, w) for frame in frames], axis=-1)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float64, np.int32, np.int8])
def test_convolution_keeps_the_element_type(dtype: type) -> None:
    x = np.arange(2 * 9, dtype=np.float32).reshape(1, 2, 3, 3).astype(dtype)
    w = np.ones((1, 2, 2, 2), dtype)
    (got,) = run(opset.convolution(x, w, [1, 1], [0, 0], [0, 0], [1, 1]), [])
    assert got.dtype == np.dtype(dtype)
    corner = sum(float(v) for v in x[0, :, :2, :2].reshape(-1))  # 0+1+3+4 and 9+10+12+13
    assert float(got[0, 0, 0, 0]) == corner == 52


def test_backprop_auto_pad_same_upper_puts_the_odd_pad_first() -> None:
    x, w = np.ones((1, 1, 3), np.float32), np.ones((1, 1, 3), np.float32)
    # full result: [1, 1, 2, 1, 2, 1, 1] for stride 2; 6 outputs leave a surplus of 1
    upper = opset.convolution_backprop_data(x, w, [2], output_shape=[6], auto_pad="same_upper")
    lower = opset.convolution_backprop_data(x, w, [2], output_shape=[6], auto_pad="same_lower")
    np.testing.assert_array_equal(run(upper, [])[0][0, 0], [1, 2, 1, 2, 1, 1])
    np.testing.assert_array_equal(run(lower, [])[0][0, 0], [1, 1, 2, 1, 2, 1])


@settings(max_examples=25, deadline=None)
@given(backprop_cases())
def test_convolution_backprop_data_agrees_with_openvino(case: dict) -> None:
    ov = pytest.importorskip("openvino")
    ops = pytest.importorskip("openvino.opset8")
    x, w = case["x"], case["w"]
    param = ops.parameter(x.shape, np.float32)
    shape = None if case["output_shape"] is None else ops.constant(np.array(case["output_shape"], np.int64))
    theirs = ops.convolution_backprop_data(param, ops.constant(w), case["strides"], shape, **case["attrs"])
    compiled = ov.Core().compile_model(ov.Model([theirs.output(0)], [param]), "CPU", EXACT)
    ours = opset.convolution_backprop_data(x, w, case["strides"], case["output_shape"], **case["attrs"])
    np.testing.assert_allclose(run(ours, [])[0], compiled([x])[0], rtol=1e-4, atol=1e-4)


@settings(max_examples=15, deadline=None)
@given(conv_cases(grouped=True))
def test_group_convolution_agrees_with_jax(case: dict) -> None:
    lax = pytest.importorskip("jax.lax")
    x, w = case["x"], case["w"]
    n = x.ndim - 2
    pads = [pads_for(case["auto_pad"], x.shape[2 + i], w.shape[3 + i], case["strides"][i], case["dilations"][i],
                     case["pads"][0][i], case["pads"][1][i]) for i in range(n)]  # fmt: skip
    expected = lax.conv_general_dilated(
        x, w.reshape(-1, *w.shape[2:]), case["strides"], pads, rhs_dilation=case["dilations"],
        feature_group_count=case["groups"],
    )  # fmt: skip
    node = opset.group_convolution(x, w, case["strides"], *case["pads"], case["dilations"], case["auto_pad"])
    np.testing.assert_allclose(run(node, [])[0], np.asarray(expected), rtol=1e-4, atol=1e-4)


# -- bad input ------------------------------------------------------------------------------------------


def _conv(data: list[int], filters: list[int], name: str = "conv", **attrs) -> hs.Node:
    n = len(data) - 2
    args = dict(strides=[1] * n, pads_begin=[0] * n, pads_end=[0] * n, dilations=[1] * n) | attrs
    return opset.convolution(opset.parameter(data), opset.parameter(filters), **args, name=name)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: _conv([1, 3, 5, 5], [8, 3, 3]), "filters has rank 3"),
        (lambda: _conv([1, 3, 5, 5], [8, 4, 3, 3]), "input channels"),
        (lambda: _conv([3, 5], [8, 3]), "data has rank 2"),
        (lambda: _conv([1, 3, 5, 5], [8, 3, 3, 3], strides=[1]), "strides=[1] must have 2 values"),
        (lambda: _conv([1, 3, 5, 5], [8, 3, 3, 3], strides=[0, 1]), "positive"),
        (lambda: _conv([1, 3, 5, 5], [8, 3, 3, 3], dilations=[1, -2]), "positive"),
        (lambda: _conv([1, 3, 5, 5], [8, 3, 3, 3], auto_pad="same"), "auto_pad='same' is invalid"),
        (lambda: _conv([1, 3, 2, 5], [8, 3, 3, 3]), "larger than the padded input"),
        (lambda: _conv([1, 3, 5, 5], [8, 3, 3, 0]), "empty spatial dimension"),
        (lambda: _conv([1, 3, 5, 5], [8, 3, 3, 3], pads_begin="x"), "list of integers"),
    ],
)
def test_bad_convolutions_name_the_node(build, message: str) -> None:
    with pytest.raises(ModelValidationError, match=re.escape(message)) as info:
        build()
    assert "Convolution 'conv'" in str(info.value)


def test_convolution_rejects_mixed_element_types() -> None:
    with pytest.raises(ModelValidationError, match=r"Convolution 'c'.*share one element type"):
        opset.convolution(opset.parameter([1, 1, 3]), opset.parameter([1, 1, 1], hs.Type.f16), [1], [0], [0], [1],
                          name="c")  # fmt: skip


def test_group_convolution_rejects_channels_not_matching_groups() -> None:
    x = opset.parameter([1, 5, 4, 4])
    with pytest.raises(ModelValidationError, match=r"GroupConvolution 'g'.*5 channels"):
        opset.group_convolution(x, opset.parameter([2, 2, 2, 1, 1]), [1, 1], [0, 0], [0, 0], [1, 1], name="g")
    with pytest.raises(ModelValidationError, match=r"GroupConvolution 'g'.*filters has rank 4"):
        opset.group_convolution(x, opset.parameter([2, 5, 1, 1]), [1, 1], [0, 0], [0, 0], [1, 1], name="g")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(output_shape=[5, 5, 5]), "output_shape has 3 values"),
        (dict(output_shape=[0, 5]), "positive sizes"),
        (dict(output_shape=np.float32([5, 5])), "output_shape has element type f32"),
        (dict(pads_begin=[3, 3], pads_end=[3, 3]), "reduce the pads"),
        (dict(output_padding=[-1, 0]), "non-negative"),
        (dict(pads_begin=[-1, 0]), "non-negative"),
    ],
)
def test_bad_backprop_names_the_node(kwargs: dict, message: str) -> None:
    x, w = opset.parameter([1, 2, 2, 2]), opset.parameter([2, 3, 3, 3])
    with pytest.raises(ModelValidationError, match=f"ConvolutionBackpropData 'up'.*{message}"):
        opset.convolution_backprop_data(x, w, [1, 1], name="up", **kwargs)


def test_backprop_rejects_filters_for_other_channels() -> None:
    with pytest.raises(ModelValidationError, match=r"ConvolutionBackpropData 'up'.*input channels"):
        opset.convolution_backprop_data(opset.parameter([1, 2, 4]), opset.parameter([3, 2, 3]), [1], name="up")


@settings(max_examples=25, deadline=None)
@given(
    channels=st.integers(1, 5), out=st.integers(1, 5), stride=st.integers(1, 3), size=st.integers(1, 6),
    seed=st.integers(0, 2**16),
)  # fmt: skip
def test_pointwise_convolution_is_a_matrix_product_per_pixel(
    channels: int, out: int, stride: int, size: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, channels, size, size + 1)).astype(np.float32)
    w = rng.standard_normal((out, channels, 1, 1)).astype(np.float32)
    px = opset.parameter(list(x.shape), hs.Type.f32)
    node = opset.convolution(px, opset.constant(w), [stride, stride], [0, 0], [0, 0], [1, 1])
    expected = np.einsum("nchw,oc->nohw", x[:, :, ::stride, ::stride], w[:, :, 0, 0])
    np.testing.assert_allclose(run(node, [px], x)[0], expected, rtol=1e-5, atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(
    groups=st.integers(2, 5), multiplier=st.integers(1, 2), stride=st.integers(1, 2), dilation=st.integers(1, 2),
    pad=st.integers(0, 2), seed=st.integers(0, 2**16),
)  # fmt: skip
def test_depthwise_convolution_matches_a_loop_over_channels_and_taps(
    groups: int, multiplier: int, stride: int, dilation: int, pad: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, groups, 7, 6)).astype(np.float32)
    w = rng.standard_normal((groups, multiplier, 1, 3, 3)).astype(np.float32)
    px = opset.parameter(list(x.shape), hs.Type.f32)
    pads = [pad, pad]
    node = opset.group_convolution(px, opset.constant(w), [stride, stride], pads, pads, [dilation, dilation])
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    rows = (padded.shape[2] - 2 * dilation - 1) // stride + 1
    cols = (padded.shape[3] - 2 * dilation - 1) // stride + 1
    expected = np.zeros((2, groups * multiplier, rows, cols), np.float32)
    for g, m, r, c, i, j in itertools.product(
        range(groups), range(multiplier), range(rows), range(cols), range(3), range(3)
    ):
        value = padded[:, g, r * stride + i * dilation, c * stride + j * dilation]
        expected[:, g * multiplier + m, r, c] += value * w[g, m, 0, i, j]
    np.testing.assert_allclose(run(node, [px], x)[0], expected, rtol=1e-4, atol=1e-5)
